package io.github.mongowriteguard.deadline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.Updates;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.exception.ServerDeadlineExceededException;
import io.github.mongowriteguard.exception.WriteOutcomeUnknownException;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.retry.RetryPolicy;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** How a guarded write ends when the server is slow: at the server's deadline, or unknown when the client gave up. */
class ServerDeadlineTest {

    private static MongoClient client(WriteGuard guard, EmulatedReplicaSet cluster, int socketTimeoutMs) {
        return MongoClients.create(guard.configure(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(cluster.connectionString()))
                        .applyToSocketSettings(s -> s.readTimeout(socketTimeoutMs, TimeUnit.MILLISECONDS)))
                .build());
    }

    @Test
    void interruptibleStall_serverStopsTheWriteAtItsDeadline_andTheDriverDoesNotResend() throws Exception {
        WriteGuard guard = WriteGuard.create(
                WriteGuardSettings.builder().retryPolicy(RetryPolicy.none()).build());
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = client(guard, cluster, 1_500);
                StallHandle stall =
                        cluster.primary().stall(Stall.interruptible("guard.slow", Duration.ofSeconds(10)))) {
            GuardedCollection<Document> slow =
                    guard.guardCollection(client, client.getDatabase("guard").getCollection("slow"));

            assertThatThrownBy(() -> slow.insertOne(new Document("v", 1)))
                    .isInstanceOfSatisfying(
                            ServerDeadlineExceededException.class,
                            e -> assertThat(e.getMessage())
                                    .contains("at its deadline")
                                    .contains("maxTimeMS=1000"));

            List<ReceivedCommand> inserts = cluster.truth().commands("insert");
            assertThat(inserts).singleElement().satisfies(insert -> {
                assertThat(insert.errorCode()).isEqualTo(50);
                assertThat(insert.maxTimeMs()).isEqualTo(1_000L);
            });
            stall.release();
            assertThat(client.getDatabase("guard").getCollection("slow").countDocuments())
                    .isZero();
        }
    }

    @Test
    void interruptibleStall_everyRetryIsTheSameCopy_andEndsAtTheDeadline() throws Exception {
        WriteGuard guard = WriteGuard.create(WriteGuardSettings.builder()
                .retryPolicy(RetryPolicy.builder()
                        .maxAttempts(3)
                        .initialBackoff(Duration.ofMillis(20))
                        .build())
                .build());
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = client(guard, cluster, 600);
                StallHandle stall =
                        cluster.primary().stall(Stall.interruptible("guard.slow", Duration.ofSeconds(10)))) {
            GuardedCollection<Document> slow =
                    guard.guardCollection(client, client.getDatabase("guard").getCollection("slow"));

            assertThatThrownBy(() -> slow.insertOne(new Document("v", 1)))
                    .isInstanceOfSatisfying(ServerDeadlineExceededException.class, e -> {
                        assertThat(e.outcome().attempts()).isEqualTo(3);
                        assertThat(e.outcome().sends()).isEqualTo(3);
                        assertThat(e.outcome().commands()).isEqualTo(1);
                    });

            assertThat(cluster.truth().commands("insert"))
                    .hasSize(3)
                    .allSatisfy(c -> assertThat(c.errorCode()).isEqualTo(50));
            assertThat(cluster.truth().copies(c -> c.commandName().equals("insert")))
                    .hasSize(1);
            stall.release();
            assertThat(client.getDatabase("guard").getCollection("slow").countDocuments())
                    .isZero();
        }
    }

    /**
     * The client gives up on a stalled copy: the guard resends the same copy at once (no wait for the first send's
     * deadline); each resend waits behind it on the session's check-out until its own deadline (MaxTimeMSExpired),
     * which proves nothing about the first send, so the write ends UNKNOWN with one copy, and a settle after the stall
     * tells the truth.
     */
    @Test
    void uninterruptibleStall_clientGivesUp_theSameCopyIsResent_neverASecond_andSettledAfterTheStall()
            throws Exception {
        WriteGuard guard = WriteGuard.create(WriteGuardSettings.builder()
                .serverDeadline(Duration.ofMillis(150))
                .build());
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = client(guard, cluster, 300);
                StallHandle stall =
                        cluster.primary().stall(Stall.uninterruptible("guard.stuck", Duration.ofMillis(1_500)))) {
            GuardedCollection<Document> stuck =
                    guard.guardCollection(client, client.getDatabase("guard").getCollection("stuck"));

            WriteOutcome<Document> outcome =
                    stuck.execute(List.of(new InsertOneModel<>(new Document("v", 1))), new BulkWriteOptions());

            assertThat(outcome.outcome(0).status()).isEqualTo(WriteStatus.UNKNOWN);
            assertThat(outcome.outcome(0).settleable()).isTrue();
            assertThat(outcome.possiblyRunning())
                    .singleElement()
                    .satisfies(copy -> assertThat(copy.possiblyRunning()).isTrue());
            assertThat(outcome.commands()).isEqualTo(1);
            assertThat(outcome.sends()).isEqualTo(3);
            assertThat(cluster.truth().awaitIdle(c -> true, Duration.ofSeconds(10)))
                    .isTrue();
            assertThat(cluster.truth().copies(c -> c.commandName().equals("insert")))
                    .hasSize(1);
            assertThat(cluster.truth().maxConcurrentCopies(c -> c.commandName().equals("insert")))
                    .isEqualTo(1);

            WriteOutcome<Document> settled = guard.settle(outcome);

            assertThat(settled.outcome(0).status()).isEqualTo(WriteStatus.APPLIED);
            assertThat(settled.commands()).isEqualTo(1);
            assertThat(cluster.truth().copies(c -> c.commandName().equals("insert")))
                    .hasSize(1);
            assertThat(client.getDatabase("guard").getCollection("stuck").countDocuments())
                    .isEqualTo(1);
        }
    }

    @Test
    void updateManyAfterATimeout_isNeverResent_andSaysAnUnknownNumberMayHaveChanged() throws Exception {
        WriteGuard guard = WriteGuard.create(WriteGuardSettings.builder()
                .serverDeadline(Duration.ofMillis(150))
                .build());
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = client(guard, cluster, 300)) {
            client.getDatabase("guard")
                    .getCollection("many")
                    .insertMany(List.of(new Document("s", 1), new Document("s", 1)));
            GuardedCollection<Document> many =
                    guard.guardCollection(client, client.getDatabase("guard").getCollection("many"));
            try (StallHandle stall =
                    cluster.primary().stall(Stall.uninterruptible("guard.many", Duration.ofMillis(1_000)))) {

                assertThatThrownBy(() -> many.updateMany(Filters.eq("s", 1), Updates.set("s", 2)))
                        .isInstanceOfSatisfying(WriteOutcomeUnknownException.class, e -> {
                            assertThat(e.getMessage()).contains("unknown number of documents");
                            assertThat(e.outcome().outcome(0).retrySafe()).isFalse();
                            assertThat(e.outcome().sends()).isEqualTo(1);
                        });
            }
            assertThat(cluster.truth().awaitIdle(c -> true, Duration.ofSeconds(10)))
                    .isTrue();
            assertThat(cluster.truth().commands("update")).hasSize(1);
        }
    }
}
