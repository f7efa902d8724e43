package io.github.mongowriteguard.testkit.failpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoWriteConcernException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.TestDeployment;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** The failCommand fail point, as seen through the driver. Runs on a real deployment too (enableTestCommands). */
@org.junit.jupiter.api.Tag("deployment") // runs against -Dmongo.uri (the real-mongodb profile)
class FailCommandTest {

    private static void failPoint(MongoClient client, String mode, Document data) {
        failPoint(client, (Object) mode, data);
    }

    private static void failPoint(MongoClient client, Object mode, Document data) {
        client.getDatabase("admin")
                .runCommand(new Document("configureFailPoint", "failCommand")
                        .append("mode", mode)
                        .append("data", data));
    }

    private static void off(MongoClient client) {
        failPoint(client, "off", new Document());
    }

    @Test
    void timesN_failsTheNextNMatchingCommands_thenTurnsItselfOff() {
        try (TestDeployment deployment = TestDeployment.replicaSet();
                MongoClient client = Clients.client(deployment.connectionString(), b -> b.retryWrites(false))) {
            MongoCollection<Document> c = client.getDatabase("fp").getCollection("times");
            c.drop();
            failPoint(
                    client,
                    new Document("times", 2),
                    new Document("failCommands", List.of("insert")).append("errorCode", 2));

            assertThatThrownBy(() -> c.insertOne(new Document("_id", 1))).isInstanceOf(MongoException.class);
            assertThatThrownBy(() -> c.insertOne(new Document("_id", 1))).isInstanceOf(MongoException.class);
            c.insertOne(new Document("_id", 1));
            assertThat(c.countDocuments()).isEqualTo(1);
        }
    }

    @Test
    void skipN_letsTheFirstNThrough_thenFailsAlways() {
        try (TestDeployment deployment = TestDeployment.replicaSet();
                MongoClient client = Clients.client(deployment.connectionString(), b -> b.retryWrites(false))) {
            MongoCollection<Document> c = client.getDatabase("fp").getCollection("skip");
            c.drop();
            try {
                failPoint(
                        client,
                        new Document("skip", 1),
                        new Document("failCommands", List.of("insert")).append("errorCode", 2));

                c.insertOne(new Document("_id", 1));
                assertThatThrownBy(() -> c.insertOne(new Document("_id", 2))).isInstanceOf(MongoException.class);
                assertThatThrownBy(() -> c.insertOne(new Document("_id", 3))).isInstanceOf(MongoException.class);
            } finally {
                off(client);
            }
            c.insertOne(new Document("_id", 4));
            assertThat(c.countDocuments()).isEqualTo(2);
        }
    }

    @Test
    void appName_limitsTheFailPointToThatApplication() {
        try (TestDeployment deployment = TestDeployment.replicaSet();
                MongoClient other = Clients.client(
                        deployment.connectionString(),
                        b -> b.applicationName("other").retryWrites(false));
                MongoClient target = Clients.client(
                        deployment.connectionString(),
                        b -> b.applicationName("target").retryWrites(false))) {
            try {
                failPoint(
                        other,
                        "alwaysOn",
                        new Document("failCommands", List.of("insert"))
                                .append("errorCode", 2)
                                .append("appName", "target"));

                other.getDatabase("fp").getCollection("app").insertOne(new Document("v", 1));
                assertThatThrownBy(() ->
                                target.getDatabase("fp").getCollection("app").insertOne(new Document("v", 2)))
                        .isInstanceOf(MongoException.class);
            } finally {
                off(other);
            }
        }
    }

    @Test
    void retryableErrorCode_server44LabelsIt_andTheDriverRetriesOnce() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            failPoint(
                    client,
                    new Document("times", 1),
                    new Document("failCommands", List.of("insert")).append("errorCode", 91));

            client.getDatabase("fp").getCollection("labels").insertOne(new Document("v", 1));

            List<ReceivedCommand> inserts = cluster.truth().commands("insert");
            assertThat(inserts).hasSize(2);
            assertThat(inserts.get(0).errorCode()).isEqualTo(91);
            assertThat(inserts.get(0).txnId()).isEqualTo(inserts.get(1).txnId());
            assertThat(client.getDatabase("fp").getCollection("labels").countDocuments())
                    .isEqualTo(1);
        }
    }

    @Test
    void server42_attachesNoLabelItself() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet()
                        .serverVersion(ServerVersion.V4_2)
                        .start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            failPoint(
                    client,
                    new Document("times", 1),
                    new Document("failCommands", List.of("insert")).append("errorCode", 91));
            Document reply = client.getDatabase("fp")
                    .runCommand(
                            new Document("insert", "x")
                                    .append("documents", List.of(new Document("v", 1)))
                                    .append("txnNumber", 1L),
                            Document.class);
            // runCommand sends no lsid here, so no label either way; the driver-side labelling for 4.2 is the
            // driver's business. What matters: the 4.2 server reply carries no errorLabels field of its own.
            assertThat(reply).doesNotContainKey("errorLabels");
        } catch (com.mongodb.MongoCommandException e) {
            assertThat(e.getResponse().containsKey("errorLabels")).isFalse();
        }
    }

    @Test
    void explicitErrorLabels_replaceTheServersOwn() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            failPoint(
                    client,
                    new Document("times", 1),
                    new Document("failCommands", List.of("insert"))
                            .append("errorCode", 91)
                            .append("errorLabels", List.of()));

            assertThatThrownBy(() ->
                            client.getDatabase("fp").getCollection("labels").insertOne(new Document("v", 1)))
                    .isInstanceOfSatisfying(
                            MongoException.class,
                            e -> assertThat(e.getErrorLabels()).isEmpty());
            assertThat(cluster.truth().commands("insert")).hasSize(1);
        }
    }

    @Test
    void writeConcernError_theWriteRuns_andTheRetryReturnsTheStoredResult() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            failPoint(
                    client,
                    new Document("times", 1),
                    new Document("failCommands", List.of("insert"))
                            .append(
                                    "writeConcernError",
                                    new Document("code", 91).append("errmsg", "Replication is being shut down")));

            client.getDatabase("fp").getCollection("wce").insertOne(new Document("_id", 1));

            assertThat(cluster.truth().commands("insert"))
                    .extracting(ReceivedCommand::outcome)
                    .containsExactly(ReceivedCommand.Outcome.OK, ReceivedCommand.Outcome.RETRIED_RESULT);
            assertThat(client.getDatabase("fp").getCollection("wce").countDocuments())
                    .isEqualTo(1);
        }
    }

    @Test
    void nonRetryableWriteConcernError_reachesTheApplication() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            failPoint(
                    client,
                    new Document("times", 1),
                    new Document("failCommands", List.of("insert"))
                            .append(
                                    "writeConcernError",
                                    new Document("code", 100).append("errmsg", "Not enough data-bearing nodes")));

            assertThatThrownBy(
                            () -> client.getDatabase("fp").getCollection("wce").insertOne(new Document("_id", 1)))
                    .isInstanceOfSatisfying(
                            MongoWriteConcernException.class,
                            e -> assertThat(e.getCode()).isEqualTo(100));
            assertThat(client.getDatabase("fp").getCollection("wce").countDocuments())
                    .isEqualTo(1);
        }
    }

    @Test
    void closeConnection_dropsTheSocketWithoutAReply_andNothingRuns() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString(), b -> b.retryWrites(false))) {
            failPoint(
                    client,
                    new Document("times", 1),
                    new Document("failCommands", List.of("insert")).append("closeConnection", true));

            assertThatThrownBy(() ->
                            client.getDatabase("fp").getCollection("close").insertOne(new Document("_id", 1)))
                    .isInstanceOf(MongoSocketException.class);
            assertThat(cluster.truth().commands("insert"))
                    .singleElement()
                    .satisfies(c -> assertThat(c.outcome()).isEqualTo(ReceivedCommand.Outcome.CONNECTION_CLOSED));
            assertThat(client.getDatabase("fp").getCollection("close").countDocuments())
                    .isZero();
        }
    }

    @Test
    void blockConnection_holdsBeforeTheSessionCheckOut_soBothSendsOfACopyAreHeld() throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(
                        cluster.connectionString(),
                        b -> b.applyToSocketSettings(s -> s.readTimeout(150, TimeUnit.MILLISECONDS)))) {
            failPoint(
                    client,
                    new Document("times", 2),
                    new Document("failCommands", List.of("insert"))
                            .append("blockConnection", true)
                            .append("blockTimeMS", 1_000));

            assertThatThrownBy(() ->
                            client.getDatabase("fp").getCollection("block").insertOne(new Document("v", 1)))
                    .isInstanceOf(MongoSocketException.class);

            // Both sends of the one copy are running at once: the resend was not queued behind the session.
            List<Document> inprog = client.getDatabase("admin")
                    .runCommand(new Document("currentOp", 1).append("ns", "fp.block"))
                    .getList("inprog", Document.class);
            assertThat(inprog).hasSize(2);
            assertThat(inprog)
                    .extracting(op -> op.get("lsid"))
                    .containsOnly(inprog.get(0).get("lsid"));
            // Held before executing: no secs_running (curop.cpp reportState reports it once CurOp started), and the
            // collection's ns, which mongod sets from the parsed command before the fail point and the check-out.
            assertThat(inprog)
                    .allSatisfy(op ->
                            assertThat(op).doesNotContainKey("secs_running").containsEntry("ns", "fp.block"));
            assertThat(cluster.truth().awaitIdle(c -> true, Duration.ofSeconds(10)))
                    .isTrue();
            assertThat(client.getDatabase("fp").getCollection("block").countDocuments())
                    .isEqualTo(1);
        }
    }

    /**
     * mongod 4.4 (the emulator's default version; 5.0 alike) sets the operation's deadline only after the fail point
     * ({@code opCtx->setDeadlineAfterNowBy} follows {@code evaluateFailCommandFailPoint} in mongodb/mongo
     * {@code src/mongo/db/service_entry_point_common.cpp} {@code execCommandDatabase}): a block longer than
     * {@code maxTimeMS} does not expire the command, and the deadline counts from the block's end. From 6.0 it does:
     * {@link #blockConnection_from60_countsAgainstTheDeadline()}.
     */
    @Test
    void blockConnection_runsBeforeTheDeadline_maxTimeMSCountsAfterIt() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString(), b -> b.retryWrites(false))) {
            failPoint(
                    client,
                    new Document("times", 2),
                    new Document("failCommands", List.of("insert"))
                            .append("blockConnection", true)
                            .append("blockTimeMS", 300));
            Document ok = client.getDatabase("fp")
                    .runCommand(new Document("insert", "block")
                            .append("documents", List.of(new Document("v", 1)))
                            .append("maxTimeMS", 100));
            assertThat(ok.get("ok", Number.class).intValue()).isEqualTo(1);

            try (io.github.mongowriteguard.testkit.stall.StallHandle held = cluster.primary()
                    .stall(io.github.mongowriteguard.testkit.stall.Stall.interruptible(
                            "fp.deadline", Duration.ofSeconds(10)))) {
                long start = System.nanoTime();
                assertThatThrownBy(() -> client.getDatabase("fp")
                                .runCommand(new Document("insert", "deadline")
                                        .append("documents", List.of(new Document("v", 1)))
                                        .append("maxTimeMS", 100)))
                        .isInstanceOfSatisfying(
                                MongoException.class,
                                e -> assertThat(e.getCode()).isEqualTo(50));
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(400));
            }
        }
    }

    /**
     * From 6.0 the command's start time is taken before the fail point is evaluated and the deadline counts from it
     * ({@code service_entry_point_common.cpp} 6.0, {@code service_entry_point_shard_role.cpp} later): a block longer
     * than {@code maxTimeMS} leaves the command expired ({@code MaxTimeMSExpired}), and nothing is written.
     */
    @Test
    void blockConnection_from60_countsAgainstTheDeadline() {
        for (ServerVersion version : List.of(ServerVersion.V6_0, ServerVersion.V8_0)) {
            try (EmulatedReplicaSet cluster =
                            EmulatedCluster.replicaSet().serverVersion(version).start();
                    MongoClient client = Clients.client(cluster.connectionString(), b -> b.retryWrites(false))) {
                failPoint(
                        client,
                        new Document("times", 1),
                        new Document("failCommands", List.of("insert"))
                                .append("blockConnection", true)
                                .append("blockTimeMS", 300));

                assertThatThrownBy(() -> client.getDatabase("fp")
                                .runCommand(new Document("insert", "block")
                                        .append("documents", List.of(new Document("v", 1)))
                                        .append("maxTimeMS", 100)))
                        .as(version.toString())
                        .isInstanceOfSatisfying(
                                MongoException.class,
                                e -> assertThat(e.getCode()).isEqualTo(50));
                assertThat(client.getDatabase("fp").getCollection("block").countDocuments())
                        .isZero();
            }
        }
    }

    /**
     * The block is {@code opCtx->sleepFor(blockTimeMS)} (mongodb/mongo {@code src/mongo/db/commands.cpp}
     * {@code evaluateFailCommandFailPoint}), an interruptible wait: killing the operation (here {@code killSessions}
     * of its session) ends it with {@code Interrupted} (11601) and the write never runs.
     */
    @Test
    void killDuringTheBlock_endsTheCommand_andNothingIsWritten() throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString(), b -> b.retryWrites(false));
                com.mongodb.client.ClientSession session = client.startSession()) {
            failPoint(
                    client,
                    new Document("times", 1),
                    new Document("failCommands", List.of("insert"))
                            .append("blockConnection", true)
                            .append("blockTimeMS", 10_000));
            java.util.concurrent.CompletableFuture<Throwable> insert =
                    java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                        try {
                            client.getDatabase("fp").getCollection("killed").insertOne(session, new Document("v", 1));
                            return null;
                        } catch (RuntimeException e) {
                            return e;
                        }
                    });
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (client.getDatabase("admin")
                            .runCommand(new Document("currentOp", 1).append("ns", "fp.killed"))
                            .getList("inprog", Document.class)
                            .isEmpty()
                    && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            long start = System.nanoTime();
            client.getDatabase("admin")
                    .runCommand(new Document(
                            "killSessions", List.of(session.getServerSession().getIdentifier())));

            Throwable failure = insert.get(5, TimeUnit.SECONDS);
            assertThat(failure)
                    .isInstanceOfSatisfying(
                            MongoException.class, e -> assertThat(e.getCode()).isEqualTo(11601));
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
            assertThat(client.getDatabase("fp").getCollection("killed").countDocuments())
                    .isZero();
        }
    }

    @Test
    void unknownFailPoint_isRefusedWithItsName() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            assertThatThrownBy(() -> client.getDatabase("admin")
                            .runCommand(
                                    new Document("configureFailPoint", "noSuchFailPoint").append("mode", "alwaysOn")))
                    .hasMessageContaining("noSuchFailPoint");
        }
    }
}
