package io.github.mongowriteguard.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.InsertManyOptions;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** An insert's {@code n} counts only inserted documents, with and without retryable writes (the engine's does not). */
class InsertWriteErrorsTest {
    @ParameterizedTest(name = "retryWrites={0}")
    @ValueSource(booleans = {true, false})
    void duplicateKeys_areNotCountedAsInserted(boolean retryWrites) {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString(), b -> b.retryWrites(retryWrites))) {
            MongoCollection<Document> items = client.getDatabase("shop").getCollection("items");
            items.insertMany(List.of(new Document("_id", 2), new Document("_id", 4)));
            List<Document> five = List.of(
                    new Document("_id", 1),
                    new Document("_id", 2),
                    new Document("_id", 3),
                    new Document("_id", 4),
                    new Document("_id", 5));

            MongoBulkWriteException unordered = catchThrowableOfType(
                    MongoBulkWriteException.class,
                    () -> items.insertMany(five, new InsertManyOptions().ordered(false)));
            assertThat(unordered.getWriteResult().getInsertedCount()).isEqualTo(3);

            items.deleteMany(new Document("_id", new Document("$in", List.of(1, 3, 5))));
            MongoBulkWriteException ordered =
                    catchThrowableOfType(MongoBulkWriteException.class, () -> items.insertMany(five));
            assertThat(ordered.getWriteResult().getInsertedCount()).isEqualTo(1);
            assertThat(items.countDocuments()).isEqualTo(3);
        }
    }
}
