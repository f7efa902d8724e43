package io.github.mongowriteguard.copies;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.internal.copies.LiveCopyLedger;
import io.github.mongowriteguard.internal.copies.OverlapGate;
import io.github.mongowriteguard.internal.copies.SettleHold;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.retry.RetryPolicy;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.mongowriteguard.testkit.stall.StallMode;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The overlap gate on the deployments a real application meets, through the real driver and the emulator:
 * through mongos (string opids {@code "<shard>:<opid>"}), with write commands larger than 1,000 bytes (which
 * {@code currentOp} truncates to {@code {$truncated, comment}}), for an application user without {@code inprog}
 * (mongod: {@code $ownOps}; mongos: refused whatever it asks), and with its own {@code currentOp} failing (issue 14,
 * class 3): it answers {@link GateVerdict#BLIND}, never an exception.
 */
class OverlapGateTest {
    private static final String NS = "gate.records";
    private static final int SOCKET_TIMEOUT_MS = 300;
    private static final long MAX_TIME_MS = 100;
    /** Over currentOp's 1,000-byte limit, so the command's txnNumber and documents are truncated away. */
    private static final String PADDING = "p".repeat(2_000);

    enum Topology {
        REPLICA_SET,
        SHARDED
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void largeWriteStillRunning_isSeenByLsidAndComment_killedIfInterruptible(Topology topology) throws Exception {
        try (Deployment deployment = Deployment.start(topology, false);
                MongoClient gateClient = client(deployment.uri(null), null);
                StallHandle stall = deployment
                        .stalled()
                        .stall(new Stall(NS, Stall.WRITE_COMMANDS, StallMode.INTERRUPTIBLE, Duration.ofSeconds(30)))) {
            // No deadline on the server: only the gate's kill stops it.
            Sent copy = sendAndGiveUp(topology, deployment.uri(null), 5L, "mwg:test:1.1", 0);

            GateVerdict verdict = new OverlapGate(Duration.ofMillis(50))
                    .beforeRetry(gateClient.getDatabase("admin"), copy.copy, copy.sentAt, MAX_TIME_MS);

            assertThat(verdict).isEqualTo(GateVerdict.KILLED);
            assertThat(copy.copy.isPossiblyRunning()).isFalse();
            assertThat(deployment.truth().awaitIdle(c -> c.commandName().equals("insert"), Duration.ofSeconds(5)))
                    .isTrue();
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void largeWriteThatIgnoresKills_isRefused_andNamedByTheServersOpid(Topology topology) throws Exception {
        try (Deployment deployment = Deployment.start(topology, false);
                MongoClient gateClient = client(deployment.uri(null), null);
                StallHandle stall = deployment
                        .stalled()
                        .stall(new Stall(NS, Stall.WRITE_COMMANDS, StallMode.UNINTERRUPTIBLE, Duration.ofSeconds(3)))) {
            Sent copy = sendAndGiveUp(topology, deployment.uri(null), 5L, "mwg:test:1.1");

            GateVerdict verdict = new OverlapGate(Duration.ofMillis(50))
                    .beforeRetry(gateClient.getDatabase("admin"), copy.copy, copy.sentAt, MAX_TIME_MS);

            assertThat(verdict).isEqualTo(GateVerdict.REFUSED);
            CopyRecord record = copy.copy.snapshot();
            assertThat(record.possiblyRunning()).isTrue();
            assertThat(record.serverOpId()).matches(topology == Topology.SHARDED ? "shard00:\\d+" : "\\d+");
            assertThat(record.secsRunning()).isGreaterThanOrEqualTo(0);
            stall.release();
        }
    }

    @Test
    void anotherCopyOnTheSameSession_isNotTakenForThisOne() throws Exception {
        try (Deployment deployment = Deployment.start(Topology.REPLICA_SET, false);
                MongoClient gateClient = client(deployment.uri(null), null);
                StallHandle stall = deployment
                        .stalled()
                        .stall(new Stall(NS, Stall.WRITE_COMMANDS, StallMode.UNINTERRUPTIBLE, Duration.ofSeconds(2)))) {
            Sent running = sendAndGiveUp(Topology.REPLICA_SET, deployment.uri(null), 5L, "mwg:test:1.1");
            // The gate asks about another copy of the same session: another guard comment.
            LiveCopyLedger.Copy other = new LiveCopyLedger().start(NS, running.copy.lsid(), 4L, "mwg:test:1.0");
            other.sent();
            other.clientGaveUp();

            GateVerdict verdict = new OverlapGate(Duration.ofMillis(50))
                    .beforeRetry(gateClient.getDatabase("admin"), other, running.sentAt, MAX_TIME_MS);

            assertThat(verdict).isEqualTo(GateVerdict.PROCEED);
            stall.release();
        }
    }

    @Test
    void applicationUserWithoutInprog_onMongod_seesItsOwnCopyWithOwnOps() throws Exception {
        try (Deployment deployment = Deployment.start(Topology.REPLICA_SET, true);
                Recorder sent = new Recorder();
                MongoClient gateClient = client(deployment.uri("app"), sent);
                StallHandle stall = deployment
                        .stalled()
                        .stall(new Stall(NS, Stall.WRITE_COMMANDS, StallMode.UNINTERRUPTIBLE, Duration.ofSeconds(3)))) {
            Sent copy = sendAndGiveUp(Topology.REPLICA_SET, deployment.uri("app"), 5L, "mwg:test:1.1");

            OverlapGate gate = new OverlapGate(Duration.ofMillis(50));
            GateVerdict verdict =
                    gate.beforeRetry(gateClient.getDatabase("admin"), copy.copy, copy.sentAt, MAX_TIME_MS);

            assertThat(verdict).isEqualTo(GateVerdict.REFUSED);
            assertThat(copy.copy.snapshot().serverOpId()).matches("\\d+");
            List<BsonDocument> currentOps = sent.commands("currentOp");
            assertThat(currentOps.get(0)).doesNotContainKey("$ownOps");
            assertThat(currentOps.subList(1, currentOps.size()))
                    .allSatisfy(
                            c -> assertThat(c.getBoolean("$ownOps").getValue()).isTrue());
            assertThat(sent.commands("killSessions")).hasSize(1);
            stall.release();
        }
    }

    @Test
    void applicationUserWithoutInprog_throughMongos_isBlind_becauseMongosRequiresInprogForEveryCurrentOp()
            throws Exception {
        try (Deployment deployment = Deployment.start(Topology.SHARDED, true);
                MongoClient gateClient = client(deployment.uri("app"), null);
                MongoClient monitorClient = client(deployment.uri("monitor"), null);
                StallHandle stall = deployment
                        .stalled()
                        .stall(new Stall(NS, Stall.WRITE_COMMANDS, StallMode.UNINTERRUPTIBLE, Duration.ofSeconds(3)))) {
            Sent copy = sendAndGiveUp(Topology.SHARDED, deployment.uri("app"), 5L, "mwg:test:1.1");

            GateVerdict blind = new OverlapGate(Duration.ofMillis(50))
                    .beforeRetry(gateClient.getDatabase("admin"), copy.copy, copy.sentAt, MAX_TIME_MS);
            assertThat(blind).isEqualTo(GateVerdict.BLIND);
            assertThat(copy.copy.isPossiblyRunning()).isTrue();

            // A user granted inprog (clusterMonitor) sees the shard's copy through the same mongos.
            GateVerdict seen = new OverlapGate(Duration.ofMillis(50))
                    .beforeRetry(monitorClient.getDatabase("admin"), copy.copy, copy.sentAt, MAX_TIME_MS);
            assertThat(seen).isEqualTo(GateVerdict.REFUSED);
            assertThat(copy.copy.snapshot().serverOpId()).matches("shard00:\\d+");
            stall.release();
        }
    }

    enum GateFault {
        CLOSE_CONNECTION,
        INTERRUPTED_AT_SHUTDOWN,
        SLOWER_THAN_THE_SOCKET_TIMEOUT
    }

    @ParameterizedTest
    @EnumSource(GateFault.class)
    void gatesOwnCurrentOpFailing_isBlind_notAnException(GateFault fault) throws Exception {
        try (Deployment deployment = Deployment.start(Topology.SHARDED, false);
                MongoClient gateClient = client(deployment.uri(null), null);
                StallHandle stall = deployment
                        .stalled()
                        .stall(new Stall(NS, Stall.WRITE_COMMANDS, StallMode.UNINTERRUPTIBLE, Duration.ofSeconds(3)))) {
            Sent copy = sendAndGiveUp(Topology.SHARDED, deployment.uri(null), 5L, "mwg:test:1.1");
            failCurrentOp(gateClient, fault);

            GateVerdict verdict = new OverlapGate(Duration.ofMillis(50))
                    .beforeRetry(gateClient.getDatabase("admin"), copy.copy, copy.sentAt, MAX_TIME_MS);

            assertThat(verdict).isEqualTo(GateVerdict.BLIND);
            assertThat(copy.copy.isPossiblyRunning()).isTrue();
            stall.release();
        }
    }

    /**
     * Issue 14, class 3, through the guard: the gate's currentOp closes its connection on every call; the call still
     * returns its complete outcome, no driver exception escapes from the gate (before: {@code execute()} threw the
     * driver's exception from {@code OverlapGate.runningOp} and the rest of the bulk was never sent).
     */
    @Test
    void guardedExecute_whenTheGatesCurrentOpFails_returnsItsCompleteOutcome() throws Exception {
        WriteOutcome<Document> outcome = executeWithBlindGate();

        assertThat(outcome.outcomes())
                .hasSize(2)
                .doesNotContainNull()
                .allSatisfy(o -> assertThat(o.status()).isNotNull().isNotEqualTo(WriteStatus.APPLIED));
    }

    /**
     * What the outcome must then say: the first send was given up on and the gate could not see, so nothing proves
     * the original copy ended; a resend that times out behind it at the shard's session check-out proves nothing
     * either (issue 14, class 2): the guard used to report both writes FAILED (50) while the stalled original applied.
     */
    @Test
    void guardedExecute_whenTheGateIsBlind_reportsTheWritesUnknown() throws Exception {
        WriteOutcome<Document> outcome = executeWithBlindGate();

        assertThat(outcome.outcomes()).allSatisfy(o -> assertThat(o.status()).isEqualTo(WriteStatus.UNKNOWN));
    }

    private static WriteOutcome<Document> executeWithBlindGate() throws Exception {
        try (Deployment deployment = Deployment.start(Topology.SHARDED, false);
                StallHandle stall = deployment
                        .stalled()
                        .stall(new Stall(NS, Stall.WRITE_COMMANDS, StallMode.UNINTERRUPTIBLE, Duration.ofSeconds(3)))) {
            WriteGuard guard = WriteGuard.builder()
                    .settings(WriteGuardSettings.builder()
                            .retryPolicy(RetryPolicy.builder()
                                    .maxAttempts(2)
                                    .initialBackoff(Duration.ofMillis(20))
                                    .build())
                            .build())
                    .build();
            try (MongoClient client = MongoClients.create(
                    guard.configure(settings(deployment.uri(null), null)).build())) {
                failCurrentOp(client, GateFault.CLOSE_CONNECTION);
                GuardedCollection<Document> records =
                        guard.guardCollection(client, client.getDatabase("gate").getCollection("records"));

                return records.execute(
                        List.of(
                                new InsertOneModel<>(new Document("pad", PADDING)),
                                new InsertOneModel<>(new Document("v", 2))),
                        new com.mongodb.client.model.BulkWriteOptions().ordered(false));
            } finally {
                stall.release();
            }
        }
    }

    /**
     * A copy the ledger forgot (more copies given up on than it tracks) is not known to be gone: the gate answers
     * BLIND for it, although the server still runs it, and never PROCEED.
     */
    @Test
    void copyTheLedgerForgot_whileItStillRuns_isBlind_neverGone() throws Exception {
        try (Deployment deployment = Deployment.start(Topology.REPLICA_SET, false);
                MongoClient gateClient = client(deployment.uri(null), null);
                StallHandle stall = deployment
                        .stalled()
                        .stall(new Stall(NS, Stall.WRITE_COMMANDS, StallMode.UNINTERRUPTIBLE, Duration.ofSeconds(3)))) {
            LiveCopyLedger ledger = new LiveCopyLedger(new SettleHold(10, Duration.ofMinutes(10)), 1);
            Sent copy =
                    sendAndGiveUp(ledger, Topology.REPLICA_SET, deployment.uri(null), 5L, "mwg:test:1.1", MAX_TIME_MS);
            LiveCopyLedger.Copy later =
                    ledger.start(NS, java.util.UUID.randomUUID().toString(), 1L, "mwg:test:2.1");
            later.sent();
            later.clientGaveUp();

            GateVerdict verdict = new OverlapGate(Duration.ofMillis(50))
                    .beforeRetry(gateClient.getDatabase("admin"), copy.copy, copy.sentAt, MAX_TIME_MS);

            assertThat(copy.copy.isForgotten()).isTrue();
            assertThat(ledger.forgottenCount()).isEqualTo(1);
            assertThat(verdict).isEqualTo(GateVerdict.BLIND);
            assertThat(copy.copy.isPossiblyRunning()).isTrue();
            assertThat(deployment.truth().awaitIdle(c -> c.commandName().equals("insert"), Duration.ofMillis(1)))
                    .isFalse();
            stall.release();
        }
    }

    @Test
    void copyNoLongerRunning_proceeds() throws Exception {
        try (Deployment deployment = Deployment.start(Topology.SHARDED, false);
                MongoClient gateClient = client(deployment.uri(null), null)) {
            LiveCopyLedger.Copy copy =
                    new LiveCopyLedger().start(NS, java.util.UUID.randomUUID().toString(), 1L, "mwg:test:1.1");
            copy.sent();
            copy.clientGaveUp();

            assertThat(new OverlapGate(Duration.ofMillis(10))
                            .beforeRetry(gateClient.getDatabase("admin"), copy, System.nanoTime(), 10))
                    .isEqualTo(GateVerdict.PROCEED);
            assertThat(copy.isPossiblyRunning()).isFalse();
        }
    }

    // ---- helpers ------------------------------------------------------------------------------------------

    /** One copy sent by hand as the guard sends it (runCommand body, lsid, txnNumber, maxTimeMS, comment). */
    private record Sent(LiveCopyLedger.Copy copy, long sentAt) {}

    /**
     * Sends a > 1,000-byte retryable insert that the stalled node holds, and gives up on it: at the socket timeout on a
     * mongod; through mongos when mongos answers at the command's {@code maxTimeMS} (below the socket timeout) with
     * write error 50 "Write results unavailable", while the stalled shard still runs the copy (mongodb/mongo
     * {@code src/mongo/s/async_requests_sender.cpp}, {@code src/mongo/s/write_ops/batch_write_exec.cpp}).
     */
    private static Sent sendAndGiveUp(Topology topology, String uri, long txnNumber, String comment) throws Exception {
        return sendAndGiveUp(topology, uri, txnNumber, comment, MAX_TIME_MS);
    }

    /** As above; {@code maxTimeMs} 0 sends no deadline (a copy that only a kill can stop, whose answer never comes). */
    private static Sent sendAndGiveUp(Topology topology, String uri, long txnNumber, String comment, long maxTimeMs)
            throws Exception {
        return sendAndGiveUp(new LiveCopyLedger(), topology, uri, txnNumber, comment, maxTimeMs);
    }

    /** As above, tracked in {@code ledger}. */
    private static Sent sendAndGiveUp(
            LiveCopyLedger ledger, Topology topology, String uri, long txnNumber, String comment, long maxTimeMs)
            throws Exception {
        try (MongoClient writer = client(uri, null);
                ClientSession session = writer.startSession()) {
            String lsid = session.getServerSession()
                    .getIdentifier()
                    .getBinary("id")
                    .asUuid()
                    .toString();
            LiveCopyLedger.Copy copy = ledger.start(NS, lsid, txnNumber, comment);
            BsonDocument insert = new BsonDocument("insert", new BsonString("records"))
                    .append(
                            "documents",
                            new org.bson.BsonArray(List.of(new BsonDocument("_id", new BsonString("large"))
                                    .append("pad", new BsonString(PADDING)))))
                    .append("ordered", org.bson.BsonBoolean.TRUE);
            if (maxTimeMs > 0) {
                insert.append("maxTimeMS", new BsonInt64(maxTimeMs));
            }
            insert.append("txnNumber", new BsonInt64(txnNumber)).append("comment", new BsonString(comment));
            copy.sent();
            long sentAt = System.nanoTime();
            if (topology == Topology.SHARDED && maxTimeMs > 0) {
                BsonDocument reply = writer.getDatabase("gate").runCommand(session, insert, BsonDocument.class);
                assertThat(reply.getArray("writeErrors")
                                .get(0)
                                .asDocument()
                                .getInt32("code")
                                .getValue())
                        .as("mongos answers at its deadline: %s", reply)
                        .isEqualTo(50);
            } else {
                assertThatThrownBy(() -> writer.getDatabase("gate").runCommand(session, insert, BsonDocument.class))
                        .isInstanceOf(com.mongodb.MongoSocketException.class);
            }
            copy.clientGaveUp();
            return new Sent(copy, sentAt);
        }
    }

    private static void failCurrentOp(MongoClient client, GateFault fault) {
        Document data = new Document("failCommands", List.of("currentOp"));
        switch (fault) {
            case CLOSE_CONNECTION -> data.append("closeConnection", true);
            case INTERRUPTED_AT_SHUTDOWN -> data.append("errorCode", 11600);
            case SLOWER_THAN_THE_SOCKET_TIMEOUT ->
                data.append("blockConnection", true).append("blockTimeMS", 2 * SOCKET_TIMEOUT_MS);
        }
        client.getDatabase("admin")
                .runCommand(new Document("configureFailPoint", "failCommand")
                        .append("mode", "alwaysOn")
                        .append("data", data));
    }

    private static MongoClientSettings.Builder settings(String uri, CommandListener listener) {
        MongoClientSettings.Builder builder = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .applyToSocketSettings(s -> s.readTimeout(SOCKET_TIMEOUT_MS, TimeUnit.MILLISECONDS))
                .applyToClusterSettings(c -> c.serverSelectionTimeout(5, TimeUnit.SECONDS));
        if (listener != null) {
            builder.addCommandListener(listener);
        }
        return builder;
    }

    private static MongoClient client(String uri, CommandListener listener) {
        return MongoClients.create(settings(uri, listener).retryWrites(false).build());
    }

    /** The commands a client sent. */
    private static final class Recorder implements CommandListener, AutoCloseable {
        private final List<BsonDocument> started = new CopyOnWriteArrayList<>();

        @Override
        public void commandStarted(CommandStartedEvent event) {
            // The event's document reads the message buffer, which is released after the event: copy it now.
            started.add(event.getCommand().clone());
        }

        List<BsonDocument> commands(String name) {
            return started.stream().filter(c -> c.getFirstKey().equals(name)).toList();
        }

        @Override
        public void close() {}
    }

    /**
     * A replica set, or a 2-shard cluster whose first shard (the unsharded collection's) is the one stalled; with
     * users, {@code app} (readWrite, no inprog) and {@code monitor} (clusterMonitor: inprog) and authorization on.
     */
    private record Deployment(
            AutoCloseable cluster,
            String connectionString,
            EmulatedNode stalled,
            io.github.mongowriteguard.testkit.truth.ServerTruth truth)
            implements AutoCloseable {
        static Deployment start(Topology topology, boolean users) {
            if (topology == Topology.REPLICA_SET) {
                EmulatedReplicaSet.Builder builder = EmulatedCluster.replicaSet();
                if (users) {
                    builder.user("app", "secret", "readWriteAnyDatabase").user("monitor", "secret", "clusterMonitor");
                }
                EmulatedReplicaSet set = builder.start();
                return new Deployment(set, set.connectionString(), set.primary(), set.truth());
            }
            EmulatedShardedCluster.Builder builder = EmulatedCluster.sharded().shards(2);
            if (users) {
                builder.user("app", "secret", "readWriteAnyDatabase").user("monitor", "secret", "clusterMonitor");
            }
            EmulatedShardedCluster sharded = builder.start();
            return new Deployment(sharded, sharded.connectionString(), sharded.shard(0), sharded.truth());
        }

        /** The connection string, as {@code user} (password {@code secret}) or anonymous for null. */
        String uri(String user) {
            if (user == null) {
                return connectionString;
            }
            String withUser = connectionString.replace("mongodb://", "mongodb://" + user + ":secret@");
            return withUser + (withUser.contains("?") ? "&" : "?") + "authSource=admin";
        }

        @Override
        public void close() throws Exception {
            cluster.close();
        }
    }
}
