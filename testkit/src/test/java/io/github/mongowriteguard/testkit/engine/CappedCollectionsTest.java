package io.github.mongowriteguard.testkit.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.CreateCollectionOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * Capped collections through the real driver, as mongod keeps them: {@code create} with {@code capped}, {@code size}
 * (rounded up to a multiple of 256) and {@code max} ({@code src/mongo/db/catalog/collection_options.cpp}; "the 'size'
 * field is required when 'capped' is true", {@code src/mongo/db/commands/create.cpp}), reported by
 * {@code listCollections} and {@code collStats}; the oldest documents removed past {@code max} or {@code size},
 * insertion order kept ({@code src/mongo/db/storage/wiredtiger/wiredtiger_record_store.cpp},
 * {@code _cappedDeleteAsNeeded}; "object to insert exceeds cappedMaxSize"); deletes refused up to 4.4 and run from 5.0
 * ({@code parsed_delete.cpp} 4.4, "cannot remove from a capped collection"); an update changing a document's size
 * refused before 6.0 ({@code src/mongo/db/catalog/collection_impl.cpp} {@code updateDocument}, "Cannot change the size
 * of a document in a capped collection").
 */
class CappedCollectionsTest {

    private static List<Integer> ids(MongoCollection<Document> collection) {
        List<Integer> ids = new ArrayList<>();
        collection.find().forEach(d -> ids.add(d.getInteger("_id")));
        return ids;
    }

    /** The collection {@code capped.log}, created capped with {@code options}. */
    private static MongoCollection<Document> cappedLog(MongoClient client, CreateCollectionOptions options) {
        MongoDatabase db = client.getDatabase("capped");
        db.createCollection("log", options.capped(true));
        return db.getCollection("log");
    }

    @Test
    void create_reportsTheOptions_asListCollectionsAndCollStatsDo() {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(set.connectionString())) {
            MongoDatabase db = client.getDatabase("capped");
            db.createCollection(
                    "log",
                    new CreateCollectionOptions().capped(true).sizeInBytes(1000).maxDocuments(3));
            db.createCollection("plain");

            Document options = db.listCollections()
                    .filter(new Document("name", "log"))
                    .first()
                    .get("options", Document.class);
            assertThat(options.getBoolean("capped")).isTrue();
            assertThat(((Number) options.get("size")).longValue())
                    .as("rounded up to 256")
                    .isEqualTo(1024);
            assertThat(((Number) options.get("max")).longValue()).isEqualTo(3);
            Document stats = db.runCommand(new Document("collStats", "log"));
            assertThat(stats.getBoolean("capped")).isTrue();
            assertThat(((Number) stats.get("max")).longValue()).isEqualTo(3);
            assertThat(((Number) stats.get("maxSize")).longValue()).isEqualTo(1024);
            assertThat(db.runCommand(new Document("collStats", "plain")).getBoolean("capped"))
                    .isFalse();
            assertThat(db.listCollections()
                            .filter(new Document("name", "plain"))
                            .first()
                            .get("options", Document.class))
                    .isEmpty();

            assertThatThrownBy(() -> db.createCollection("nosize", new CreateCollectionOptions().capped(true)))
                    .isInstanceOfSatisfying(MongoCommandException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(72);
                        assertThat(e.getErrorMessage()).isEqualTo("the 'size' field is required when 'capped' is true");
                    });
        }
    }

    @Test
    void inserts_pastMax_removeTheOldest_andKeepInsertionOrder() {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(set.connectionString())) {
            MongoCollection<Document> log = cappedLog(
                    client, new CreateCollectionOptions().sizeInBytes(100_000).maxDocuments(3));

            for (int id : new int[] {5, 1, 4, 2}) {
                log.insertOne(new Document("_id", id));
            }
            assertThat(ids(log)).containsExactly(1, 4, 2);
            log.insertMany(List.of(new Document("_id", 9), new Document("_id", 3)));
            assertThat(ids(log)).as("natural order is insertion order").containsExactly(2, 9, 3);
        }
    }

    @Test
    void inserts_pastSize_removeTheOldest_andADocumentLargerThanTheSizeIsRefused() {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(set.connectionString())) {
            MongoCollection<Document> log = cappedLog(client, new CreateCollectionOptions().sizeInBytes(256));
            String text = "x".repeat(80); // each document about 100 bytes: two fit in 256, three do not

            IntStream.rangeClosed(1, 4).forEach(id -> log.insertOne(new Document("_id", id).append("t", text)));

            assertThat(ids(log)).containsExactly(3, 4);
            assertThatThrownBy(() -> log.insertOne(new Document("_id", 10).append("t", "y".repeat(300))))
                    .isInstanceOfSatisfying(MongoWriteException.class, e -> {
                        assertThat(e.getCode()).isEqualTo(2);
                        assertThat(e.getMessage()).contains("object to insert exceeds cappedMaxSize");
                    });
            assertThat(ids(log)).containsExactly(3, 4);
        }
    }

    @Test
    void on44_deletesAreRefused_andAnUpdateChangingASizeIsRefused_butOneKeepingItRuns() {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(set.connectionString())) {
            MongoCollection<Document> log = cappedLog(client, new CreateCollectionOptions().sizeInBytes(10_000));
            log.insertMany(List.of(new Document("_id", 1).append("s", "ab"), new Document("_id", 2).append("s", "cd")));

            assertThatThrownBy(() -> log.deleteOne(Filters.eq("_id", 1)))
                    .isInstanceOfSatisfying(MongoWriteException.class, e -> {
                        assertThat(e.getCode()).isEqualTo(20);
                        assertThat(e.getMessage()).contains("cannot remove from a capped collection: capped.log");
                    });
            assertThatThrownBy(() -> log.updateOne(Filters.eq("_id", 1), Updates.set("s", "longer")))
                    .isInstanceOfSatisfying(MongoWriteException.class, e -> {
                        assertThat(e.getCode()).isEqualTo(10003);
                        assertThat(e.getMessage())
                                .contains("Cannot change the size of a document in a capped collection: ");
                    });
            assertThat(log.find(Filters.eq("_id", 1)).first().getString("s")).isEqualTo("ab");

            assertThat(log.updateOne(Filters.eq("_id", 1), Updates.set("s", "zz"))
                            .getModifiedCount())
                    .isEqualTo(1);
            assertThat(ids(log)).containsExactly(1, 2);
        }
    }

    @Test
    void from60_deletesAndGrowingUpdatesRun_andOrderIsKeptAfterADelete() {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet()
                        .serverVersion(ServerVersion.V6_0)
                        .start();
                MongoClient client = Clients.client(set.connectionString())) {
            MongoCollection<Document> log = cappedLog(
                    client, new CreateCollectionOptions().sizeInBytes(10_000).maxDocuments(3));
            log.insertMany(List.of(new Document("_id", 1), new Document("_id", 2), new Document("_id", 3)));

            assertThat(log.deleteOne(Filters.eq("_id", 1)).getDeletedCount()).isEqualTo(1);
            assertThat(log.updateOne(Filters.eq("_id", 2), Updates.set("s", "longer"))
                            .getModifiedCount())
                    .isEqualTo(1);
            log.insertOne(new Document("_id", 4));
            assertThat(ids(log)).as("the new document after the older ones").containsExactly(2, 3, 4);
        }
    }
}
