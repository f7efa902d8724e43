package io.github.mongowriteguard.testkit.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import java.util.List;
import java.util.stream.IntStream;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A write command carries 1 to 100,000 statements (and as many {@code stmtIds}), else it fails with
 * {@code InvalidLength} (16) before anything runs: mongodb/mongo {@code src/mongo/db/ops/write_ops_parsers.cpp}
 * {@code checkOpCountForCommand} ({@code write_ops::kMaxWriteBatchSize}), run by the write commands' parsers on mongod
 * and mongos.
 */
class WriteBatchSizeTest {

    private static Document insertOf(int documents) {
        return new Document("insert", "c")
                .append(
                        "documents",
                        IntStream.range(0, documents)
                                .mapToObj(i -> new Document("_id", i))
                                .toList());
    }

    /** Sends {@code command} through a client of {@code cluster}; returns its error, once nothing was written. */
    private static MongoCommandException refused(String connectionString, Document command) {
        try (MongoClient client = Clients.client(connectionString)) {
            MongoDatabase db = client.getDatabase("wbs");
            MongoCommandException e = catchThrowableOfType(MongoCommandException.class, () -> db.runCommand(command));
            assertThat(db.getCollection("c").countDocuments()).isZero();
            return e;
        }
    }

    @Test
    void moreThan100000Statements_areRefusedWithInvalidLength_andNothingIsWritten() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start()) {
            MongoCommandException e = refused(cluster.connectionString(), insertOf(100_001));

            assertThat(e).isNotNull();
            assertThat(e.getErrorCode()).isEqualTo(16);
            assertThat(e.getErrorCodeName()).isEqualTo("InvalidLength");
            assertThat(e.getErrorMessage())
                    .isEqualTo("Write batch sizes must be between 1 and 100000. Got 100001 operations.");
        }
    }

    @Test
    void throughMongos_theSameRefusal() {
        try (EmulatedShardedCluster cluster =
                EmulatedCluster.sharded().shards(2).start()) {
            MongoCommandException e = refused(cluster.connectionString(), insertOf(100_001));

            assertThat(e).isNotNull();
            assertThat(e.getErrorCode()).isEqualTo(16);
        }
    }

    @Test
    void stmtIdsOfAnotherLength_andAnEmptyBatch_areRefusedWithInvalidLength() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            MongoDatabase db = client.getDatabase("wbs");

            MongoCommandException mismatch = catchThrowableOfType(
                    MongoCommandException.class, () -> db.runCommand(insertOf(2).append("stmtIds", List.of(0))));
            MongoCommandException empty = catchThrowableOfType(
                    MongoCommandException.class,
                    () -> db.runCommand(new Document("delete", "c").append("deletes", List.of())));

            assertThat(mismatch.getErrorCode()).isEqualTo(16);
            assertThat(mismatch.getErrorMessage())
                    .isEqualTo("Number of statement ids must match the number of batch entries");
            assertThat(empty.getErrorCode()).isEqualTo(16);
            assertThat(empty.getErrorMessage())
                    .isEqualTo("Write batch sizes must be between 1 and 100000. Got 0 operations.");
            assertThat(db.getCollection("c").countDocuments()).isZero();
        }
    }
}
