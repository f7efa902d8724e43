package io.github.mongowriteguard.testkit.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * The error labels the server adds itself, per version (mongodb/mongo {@code src/mongo/db/error_labels.cpp}
 * {@code ErrorLabelBuilder}): from 4.4 {@code RetryableWriteError} for a retryable code of a retryable write; the
 * 6.0+ source has mongos stop adding it ("mongos should not attach RetryableWriteError label to retryable errors
 * thrown by the config server or targeted shards") and mongod add {@code NoWritesPerformed} next to it when the
 * connection had written before and this command, once its body started, wrote nothing
 * ({@code isErrorWithNoWritesPerformed}). A fail point with {@code errorLabels} replaces all of them (not used here).
 */
class RetryableWriteLabelsTest {
    /**
     * ExceededTimeLimit (262) on the first send and the driver's retry (a retryable code that does not make the driver
     * clear its pool, so both sends use the one pooled connection).
     */
    private static final Document EXCEEDED = new Document("configureFailPoint", "failCommand")
            .append("mode", new Document("times", 2))
            .append("data", new Document("failCommands", List.of("insert")).append("errorCode", 262));

    @Test
    void mongod44_labelsARetryableCode_withoutNoWritesPerformed() {
        assertThat(labelsAfterAWrite(ServerVersion.V4_4)).containsExactly("RetryableWriteError");
    }

    /**
     * A fail point's error is raised before the command body (mongodb/mongo
     * {@code src/mongo/db/service_entry_point_common.cpp}: {@code failCommand} and the not-primary check run before
     * {@code runCommandImpl} takes {@code lastOpBeforeRun}), so the server has no op time to compare and adds no
     * {@code NoWritesPerformed} ({@code error_labels.cpp}: "Last OpTimes are unknown"), even after the connection
     * wrote.
     */
    @Test
    void mongod60_failPointError_beforeTheCommandBody_hasNoNoWritesPerformed() {
        assertThat(labelsAfterAWrite(ServerVersion.V6_0)).containsExactly("RetryableWriteError");
    }

    /**
     * Once the body started, an error of a command that wrote nothing on a connection that wrote before carries
     * {@code NoWritesPerformed} from 6.0: a stepdown kills the write while it waits ({@code InterruptedDueToReplStateChange}).
     */
    @Test
    void mongod60_addsNoWritesPerformed_onceTheBodyStarted_onlyWhenTheConnectionWroteBefore() throws Exception {
        assertThat(labelsOfAWriteKilledByAStepdown(ServerVersion.V6_0, true))
                .containsExactly("RetryableWriteError", "NoWritesPerformed");
        assertThat(labelsOfAWriteKilledByAStepdown(ServerVersion.V6_0, false)).containsExactly("RetryableWriteError");
        assertThat(labelsOfAWriteKilledByAStepdown(ServerVersion.V4_4, true)).containsExactly("RetryableWriteError");
    }

    private static java.util.Set<String> labelsOfAWriteKilledByAStepdown(ServerVersion version, boolean wroteBefore)
            throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet()
                        .members(3)
                        .serverVersion(version)
                        .start();
                MongoClient client = Clients.client(
                        cluster.connectionString(),
                        b -> b.retryWrites(false).applyToConnectionPoolSettings(p -> p.maxSize(1)))) {
            MongoCollection<Document> c = client.getDatabase("labels").getCollection("c");
            if (wroteBefore) {
                c.insertOne(new Document("v", 0));
            }
            EmulatedNode primary = cluster.primary();
            try (io.github.mongowriteguard.testkit.stall.StallHandle stall =
                    primary.stall(io.github.mongowriteguard.testkit.stall.Stall.interruptible(
                            "labels.c", java.time.Duration.ofSeconds(20)))) {
                // A retryable write sent once (the driver would resend it to the new primary): lsid and txnNumber.
                com.mongodb.client.ClientSession session = client.startSession();
                Document insert = new Document("insert", "c")
                        .append("documents", List.of(new Document("v", 1)))
                        .append("txnNumber", 1L);
                java.util.concurrent.CompletableFuture<MongoException> write =
                        java.util.concurrent.CompletableFuture.supplyAsync(() -> catchThrowableOfType(
                                MongoException.class,
                                () -> client.getDatabase("labels").runCommand(session, insert)));
                long until = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
                while (primary.commandCount("insert") < (wroteBefore ? 2 : 1) && System.nanoTime() < until) {
                    Thread.sleep(10);
                }
                Thread.sleep(100);
                cluster.stepDown(java.time.Duration.ofSeconds(1), java.time.Duration.ZERO, true);
                MongoException e = write.get(30, java.util.concurrent.TimeUnit.SECONDS);
                assertThat(e.getCode()).isEqualTo(11602);
                return new java.util.LinkedHashSet<>(e.getErrorLabels());
            }
        }
    }

    @Test
    void mongod60_noNoWritesPerformed_whenTheConnectionNeverWrote() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet()
                        .serverVersion(ServerVersion.V6_0)
                        .start();
                MongoClient client = Clients.client(
                        cluster.connectionString(), b -> b.applyToConnectionPoolSettings(p -> p.maxSize(1)))) {
            client.getDatabase("admin").runCommand(EXCEEDED);
            MongoException e = catchThrowableOfType(
                    MongoException.class,
                    () -> client.getDatabase("labels").getCollection("c").insertOne(new Document("v", 1)));
            assertThat(e.getErrorLabels()).containsExactly("RetryableWriteError");
        }
    }

    @Test
    void mongos44_labelsItsRetryableError_mongos60_doesNot() {
        for (ServerVersion version : List.of(ServerVersion.V4_4, ServerVersion.V6_0)) {
            try (EmulatedShardedCluster cluster =
                            EmulatedCluster.sharded().serverVersion(version).start();
                    MongoClient client = Clients.client(cluster.connectionString())) {
                client.getDatabase("admin").runCommand(EXCEEDED); // on mongos
                MongoException e = catchThrowableOfType(
                        MongoException.class,
                        () -> client.getDatabase("labels").getCollection("c").insertOne(new Document("v", 1)));

                assertThat(e.getCode()).isEqualTo(262);
                if (version == ServerVersion.V4_4) {
                    assertThat(e.getErrorLabels()).containsExactly("RetryableWriteError");
                } else {
                    assertThat(e.getErrorLabels()).isEmpty();
                }
            }
        }
    }

    /** One connection (pool of 1): a successful insert, then one whose send and retry the fail point fails. */
    private static java.util.Set<String> labelsAfterAWrite(ServerVersion version) {
        try (EmulatedReplicaSet cluster =
                        EmulatedCluster.replicaSet().serverVersion(version).start();
                MongoClient client = Clients.client(
                        cluster.connectionString(), b -> b.applyToConnectionPoolSettings(p -> p.maxSize(1)))) {
            MongoCollection<Document> c = client.getDatabase("labels").getCollection("c");
            c.insertOne(new Document("v", 0));
            client.getDatabase("admin").runCommand(EXCEEDED);
            MongoException e = catchThrowableOfType(MongoException.class, () -> c.insertOne(new Document("v", 1)));
            assertThat(e.getCode()).isEqualTo(262);
            return new java.util.LinkedHashSet<>(e.getErrorLabels());
        }
    }
}
