package io.github.mongowriteguard.testkit.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * An ordered update command stops at its first write error, as on mongod, also when it is not a retryable write
 * (a multi-document update in it): the engine alone ran every statement whatever {@code ordered} said.
 */
class OrderedWriteCommandTest {

    @Test
    void orderedUpdateCommandWithAMultiUpdate_stopsAtTheFirstWriteError() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            MongoCollection<Document> collection = client.getDatabase("shop").getCollection("stock");
            collection.insertMany(
                    List.of(new Document("_id", 1).append("n", "text"), new Document("_id", 2).append("n", 1)));
            List<WriteModel<Document>> models = List.of(
                    new UpdateManyModel<>(Filters.eq("_id", 1), Updates.inc("n", 1)), // fails: n is a string
                    new UpdateOneModel<>(Filters.eq("_id", 2), Updates.set("after", true)));

            assertThatThrownBy(() -> collection.bulkWrite(models, new BulkWriteOptions().ordered(true)))
                    .isInstanceOfSatisfying(
                            MongoBulkWriteException.class,
                            e -> assertThat(e.getWriteErrors())
                                    .singleElement()
                                    .satisfies(error ->
                                            assertThat(error.getIndex()).isZero()));

            assertThat(collection.find(Filters.eq("_id", 2)).first()).doesNotContainKey("after");
        }
    }

    @Test
    void unorderedUpdateCommand_goesOnAfterAWriteError() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            MongoCollection<Document> collection = client.getDatabase("shop").getCollection("stock");
            collection.insertMany(
                    List.of(new Document("_id", 1).append("n", "text"), new Document("_id", 2).append("n", 1)));
            List<WriteModel<Document>> models = List.of(
                    new UpdateManyModel<>(Filters.eq("_id", 1), Updates.inc("n", 1)),
                    new UpdateOneModel<>(Filters.eq("_id", 2), Updates.set("after", true)));

            assertThatThrownBy(() -> collection.bulkWrite(models, new BulkWriteOptions().ordered(false)))
                    .isInstanceOf(MongoBulkWriteException.class);

            assertThat(collection.find(Filters.eq("_id", 2)).first()).containsEntry("after", true);
            assertThat(collection.find().into(new ArrayList<>())).hasSize(2);
        }
    }
}
