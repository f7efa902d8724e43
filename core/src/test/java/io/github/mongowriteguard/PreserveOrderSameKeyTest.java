package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** An ordered bulk kept in one ordered round (an unkeyed multi-document update in it) with two writes on one key. */
class PreserveOrderSameKeyTest {
    @Test
    void twoWritesOnOneKey_inOneOrderedRound_bothRun() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 2000)) {
            GuardedCollection<Document> items =
                    fixture.wrap(fixture.client.getDatabase("db").getCollection("items"));
            List<WriteModel<Document>> models = List.of(
                    new InsertOneModel<>(new Document("_id", "a").append("q", 1)),
                    new UpdateManyModel<>(
                            new Document("q", new Document("$gte", 3)),
                            new Document("$set", new Document("n", "many"))),
                    new UpdateOneModel<>(new Document("_id", "a"), new Document("$set", new Document("q", 10))));

            WriteOutcome<Document> outcome = items.execute(models, new BulkWriteOptions().ordered(true));

            assertThat(outcome.isComplete()).isTrue();
            assertThat(items.unwrap().find().first()).isEqualTo(new Document("_id", "a").append("q", 10));
        }
    }
}
