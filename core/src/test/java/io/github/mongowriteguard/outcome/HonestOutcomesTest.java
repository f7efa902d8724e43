package io.github.mongowriteguard.outcome;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.retry.RetryPolicy;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * Outcomes claim only what is proven (issue 14): an attempt whose answer was lost keeps the write UNKNOWN unless a
 * later answer proves what the copy did; an UNKNOWN write is retry-safe only when a new copy cannot apply it twice; a
 * multi-document write never gets a second copy while the guard cannot see the first.
 */
class HonestOutcomesTest {
    private static final int SOCKET_TIMEOUT_MS = 400;

    private static WriteGuard guard(int attempts) {
        return WriteGuard.create(WriteGuardSettings.builder()
                .serverDeadline(Duration.ofMillis(200))
                .retryPolicy(RetryPolicy.builder()
                        .maxAttempts(attempts)
                        .initialBackoff(Duration.ofMillis(10))
                        .gateGrace(Duration.ofMillis(20))
                        .build())
                .build());
    }

    private static MongoClient client(WriteGuard guard, EmulatedReplicaSet cluster) {
        return MongoClients.create(guard.configure(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(cluster.connectionString()))
                        .applyToSocketSettings(s -> s.readTimeout(SOCKET_TIMEOUT_MS, TimeUnit.MILLISECONDS)))
                .build());
    }

    /**
     * Like a failover: the first send applies and its connection closes (no answer), the gate sees no copy running,
     * and every later send is refused with NotWritablePrimary. The write is stored, so "FAILED, retry-safe" would lie.
     */
    @Test
    void appliedThenConnectionLost_thenNotPrimaryErrors_isUnknown_notFailed() {
        WriteGuard guard = guard(3);
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = client(guard, cluster)) {
            client.getDatabase("admin")
                    .runCommand(new Document("configureFailPoint", "onPrimaryTransactionalWrite")
                            .append("mode", new Document("times", 1))
                            .append("data", new Document("closeConnection", true)));
            client.getDatabase("admin")
                    .runCommand(new Document("configureFailPoint", "failCommand")
                            .append("mode", new Document("skip", 1))
                            .append(
                                    "data",
                                    new Document("failCommands", List.of("insert")).append("errorCode", 10107)));
            GuardedCollection<Document> records =
                    guard.guardCollection(client, client.getDatabase("h").getCollection("records"));

            WriteOutcome<Document> outcome =
                    records.execute(List.of(new InsertOneModel<>(new Document("v", 1))), new BulkWriteOptions());

            client.getDatabase("admin")
                    .runCommand(new Document("configureFailPoint", "failCommand").append("mode", "off"));
            assertThat(client.getDatabase("h").getCollection("records").countDocuments())
                    .as("the first send applied it")
                    .isEqualTo(1);
            assertThat(outcome.outcome(0).status()).isEqualTo(WriteStatus.UNKNOWN);
            assertThat(outcome.outcome(0).retrySafe())
                    .as("an insert with the _id the guard gave it")
                    .isTrue();
            assertThat(outcome.sends()).isEqualTo(3);
        }
    }

    /** A copy left running: resending {@code $inc} as a new copy could apply it twice; {@code $set} by _id could not. */
    @Test
    void unknownOutcome_isRetrySafeOnlyForWritesANewCopyCannotApplyTwice() throws Exception {
        WriteGuard guard = guard(2);
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = client(guard, cluster)) {
            client.getDatabase("h").getCollection("counters").insertOne(new Document("_id", 1).append("n", 0));
            GuardedCollection<Document> counters =
                    guard.guardCollection(client, client.getDatabase("h").getCollection("counters"));
            WriteOutcome<Document> inc;
            WriteOutcome<Document> set;
            try (StallHandle stall =
                    cluster.primary().stall(Stall.uninterruptible("h.counters", Duration.ofSeconds(2)))) {
                inc = counters.execute(
                        List.of(new UpdateOneModel<>(Filters.eq("_id", 1), Updates.inc("n", 1))),
                        new BulkWriteOptions());
                set = counters.execute(
                        List.of(new UpdateOneModel<>(Filters.eq("_id", 1), Updates.set("s", 1))),
                        new BulkWriteOptions());
            }
            assertThat(inc.outcome(0).status()).isEqualTo(WriteStatus.UNKNOWN);
            assertThat(inc.outcome(0).retrySafe()).isFalse();
            assertThat(set.outcome(0).status()).isEqualTo(WriteStatus.UNKNOWN);
            assertThat(set.outcome(0).retrySafe()).isTrue();
            assertThat(cluster.truth().awaitIdle(c -> true, Duration.ofSeconds(10)))
                    .isTrue();
        }
    }

    /** The opt-in retries an idempotent updateMany as a new copy only after the gate saw the old one gone. */
    @Test
    void optedInUpdateMany_withCurrentOpRefused_startsNoSecondCopy_andSaysUnknown() throws Exception {
        WriteGuard guard = guard(3);
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = client(guard, cluster)) {
            client.getDatabase("h").getCollection("m").insertMany(List.of(new Document("s", 1), new Document("s", 1)));
            GuardedCollection<Document> optedIn = guard.guardCollection(
                            client, client.getDatabase("h").getCollection("m"))
                    .withIdempotentMultiDocumentRetries();
            client.getDatabase("admin")
                    .runCommand(new Document("configureFailPoint", "failCommand")
                            .append("mode", "alwaysOn")
                            .append(
                                    "data",
                                    new Document("failCommands", List.of("currentOp")).append("errorCode", 13)));
            WriteOutcome<Document> outcome;
            try (StallHandle stall = cluster.primary().stall(Stall.uninterruptible("h.m", Duration.ofSeconds(1)))) {
                outcome = optedIn.execute(
                        List.of(new UpdateManyModel<>(Filters.eq("s", 1), Updates.set("s", 2))),
                        new BulkWriteOptions());
            }
            client.getDatabase("admin")
                    .runCommand(new Document("configureFailPoint", "failCommand").append("mode", "off"));

            assertThat(outcome.outcome(0).status()).isEqualTo(WriteStatus.UNKNOWN);
            assertThat(outcome.outcome(0).retrySafe()).isFalse();
            assertThat(cluster.truth().awaitIdle(c -> true, Duration.ofSeconds(10)))
                    .isTrue();
            assertThat(cluster.truth().copies(c -> c.commandName().equals("update")))
                    .hasSize(1);
            assertThat(cluster.truth().maxConcurrentCopies(c -> c.commandName().equals("update")))
                    .isEqualTo(1);
        }
    }
}
