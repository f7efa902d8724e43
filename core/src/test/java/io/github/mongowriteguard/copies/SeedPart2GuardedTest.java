package io.github.mongowriteguard.copies;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
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
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.mongowriteguard.testkit.stall.StallMode;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import io.github.mongowriteguard.testkit.truth.ServerTruth;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The articles' part 2, scaled down, raw driver and guard side by side on the same emulated deployment: socket
 * timeout 300 ms, a stall on the collection longer than the whole run, 4 executions of an insert without {@code _id}.
 * Raw: an application loop of 4 with the driver's retryWrites. Guarded: the guard's own 4 attempts.
 */
class SeedPart2GuardedTest {
    private static final int EXECUTIONS = 4;
    private static final int SOCKET_TIMEOUT_MS = 300;
    private static final int INTERRUPTIBLE_SOCKET_TIMEOUT_MS = 2_000;
    private static final String NS = "lab.records";
    private static final Predicate<ReceivedCommand> INSERTS =
            c -> c.commandName().equals("insert") && c.namespace().equals(NS);

    enum Topology {
        REPLICA_SET,
        SHARDED_ONE_SHARD_STALLED
    }

    @SuppressWarnings("unchecked")
    @ParameterizedTest
    @EnumSource(Topology.class)
    void uninterruptibleStall_rawMakesACopyPerExecution_guardedKeepsOneCopy_andSettlesItAfterTheStall(Topology topology)
            throws Exception {
        try (Deployment deployment = Deployment.start(topology)) {
            // Raw driver, retryWrites on, an application loop like FixedBackOff(0, 3).
            try (MongoClient raw = client(deployment.uri(), null);
                    StallHandle stall = deployment
                            .stalledNode()
                            .stall(new Stall(
                                    NS, Stall.WRITE_COMMANDS, StallMode.UNINTERRUPTIBLE, Duration.ofSeconds(3)))) {
                MongoCollection<Document> records = raw.getDatabase("lab").getCollection("records");
                int failures = 0;
                for (int execution = 0; execution < EXECUTIONS; execution++) {
                    try {
                        records.insertOne(new Document("record", 42));
                    } catch (MongoException e) {
                        failures++;
                    }
                }
                ServerTruth truth = deployment.truth();
                assertThat(failures).isEqualTo(EXECUTIONS);
                assertThat(truth.commands(INSERTS)).hasSize(2 * EXECUTIONS);
                assertThat(truth.copies(INSERTS)).hasSize(EXECUTIONS);
                assertThat(truth.maxConcurrentCopies(INSERTS)).isEqualTo(EXECUTIONS);
                stall.release();
                assertThat(truth.awaitIdle(INSERTS, Duration.ofSeconds(10))).isTrue();
                assertThat(records.countDocuments()).isEqualTo(EXECUTIONS);
                records.drop();
                truth.reset();
            }

            // Guarded, the guard's own 4 attempts.
            MeterRegistry meters = new SimpleMeterRegistry();
            WriteGuard guard = guard(meters);
            try (MongoClient client = client(deployment.uri(), guard);
                    StallHandle stall = deployment
                            .stalledNode()
                            .stall(new Stall(
                                    NS, Stall.WRITE_COMMANDS, StallMode.UNINTERRUPTIBLE, Duration.ofSeconds(3)))) {
                GuardedCollection<Document> records =
                        guard.guardCollection(client, client.getDatabase("lab").getCollection("records"));

                // The same copy is resent at once after each socket timeout: each resend waits behind the stalled
                // first send on the session's check-out until its own deadline (MaxTimeMSExpired), which proves
                // nothing about the first send, so the write stays UNKNOWN, one copy, and is settled once the stall
                // ends.
                WriteOutcomeUnknownException unknown = catchThrowableOfType(
                        WriteOutcomeUnknownException.class, () -> records.insertOne(new Document("record", 42)));
                WriteOutcome<Document> outcome = (WriteOutcome<Document>) unknown.outcome();
                assertThat(outcome.possiblyRunning())
                        .singleElement()
                        .satisfies(copy -> assertThat(copy.possiblyRunning()).isTrue());
                assertThat(outcome.outcome(0).settleable()).isTrue();
                assertThat(outcome.settleableUntil()).isNotNull();
                assertThat(outcome.sends()).isLessThanOrEqualTo(EXECUTIONS);
                assertThat(outcome.commands()).isEqualTo(1);

                ServerTruth truth = deployment.truth();
                assertThat(truth.maxConcurrentCopies(INSERTS)).isEqualTo(1);
                assertThat(truth.copies(INSERTS)).hasSize(1);
                assertThat(guard.getCopies().possiblyRunning()).hasSize(1);
                assertThat(meters.find("mongodb.guard.gate.refusals").counter())
                        .as("a resend of the same copy asks no gate")
                        .isNull();
                assertThat(meters.get("mongodb.guard.copies.running").gauge().value())
                        .isEqualTo(1);
                assertThat(meters.get("mongodb.guard.copies.held").gauge().value())
                        .isEqualTo(1);
                assertThat(meters.get("mongodb.guard.writes")
                                .tag("outcome", "unknown")
                                .timer()
                                .count())
                        .isEqualTo(1);
                stall.release();
                assertThat(truth.awaitIdle(INSERTS, Duration.ofSeconds(10))).isTrue();

                WriteOutcome<Document> settled = guard.settle(outcome);

                assertThat(settled.outcome(0).status()).isEqualTo(WriteStatus.APPLIED);
                assertThat(settled.commands()).as("a settle starts no copy").isEqualTo(1);
                assertThat(truth.copies(INSERTS)).hasSize(1);
                assertThat(meters.get("mongodb.guard.copies.held").gauge().value())
                        .isZero();
                assertThat(meters.get("mongodb.guard.copies.running").gauge().value())
                        .isZero();
                assertThat(client.getDatabase("lab").getCollection("records").countDocuments())
                        .isEqualTo(1);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void interruptibleStall_guardedRetriesTheSameCopy_theServerStopsEachAtItsDeadline(Topology topology)
            throws Exception {
        try (Deployment deployment = Deployment.start(topology)) {
            MeterRegistry meters = new SimpleMeterRegistry();
            WriteGuard guard = guard(meters);
            // A socket timeout well above the deadline: the server's MaxTimeMSExpired must reach the client before its
            // socket timeout also on a loaded machine (with 300 ms, a busy CI machine made it time out first, and the
            // guard then rightly said UNKNOWN).
            try (MongoClient client = client(deployment.uri(), guard, INTERRUPTIBLE_SOCKET_TIMEOUT_MS);
                    StallHandle stall = deployment
                            .stalledNode()
                            .stall(new Stall(
                                    NS, Stall.WRITE_COMMANDS, StallMode.INTERRUPTIBLE, Duration.ofSeconds(20)))) {
                GuardedCollection<Document> records =
                        guard.guardCollection(client, client.getDatabase("lab").getCollection("records"));

                if (topology == Topology.REPLICA_SET) {
                    // a mongod's MaxTimeMSExpired for one single-document statement: rolled back, not applied
                    assertThatThrownBy(() -> records.insertOne(new Document("record", 42)))
                            .isInstanceOf(ServerDeadlineExceededException.class);
                } else {
                    // mongos answers MaxTimeMSExpired at its own deadline whatever the shard does
                    // (async_requests_sender.cpp, batch_write_exec.cpp): it proves nothing, the write is UNKNOWN and
                    // held for a settle.
                    WriteOutcomeUnknownException unknown = catchThrowableOfType(
                            WriteOutcomeUnknownException.class, () -> records.insertOne(new Document("record", 42)));
                    assertThat(unknown.outcome().outcome(0).message()).contains("mongos answered MaxTimeMSExpired");
                    assertThat(unknown.outcome().outcome(0).settleable()).isTrue();
                }

                ServerTruth truth = deployment.truth();
                assertThat(truth.awaitIdle(INSERTS, Duration.ofSeconds(10))).isTrue();
                assertThat(truth.commands(INSERTS)).hasSize(EXECUTIONS);
                assertThat(truth.copies(INSERTS)).hasSize(1);
                assertThat(truth.maxConcurrentCopies(INSERTS)).isEqualTo(1);
                assertThat(meters.get("mongodb.guard.deadline.hits").counter().count())
                        .isEqualTo(EXECUTIONS);
                assertThat(meters.get("mongodb.guard.attempts")
                                .tag("attempt", "retry")
                                .counter()
                                .count())
                        .isEqualTo(EXECUTIONS - 1);
                stall.release();
                assertThat(client.getDatabase("lab").getCollection("records").countDocuments())
                        .isZero();
            }
        }
    }

    private static WriteGuard guard(MeterRegistry meters) {
        return WriteGuard.builder()
                .settings(WriteGuardSettings.builder()
                        .retryPolicy(RetryPolicy.builder()
                                .maxAttempts(EXECUTIONS)
                                .initialBackoff(Duration.ofMillis(20))
                                .build())
                        .build())
                .meterRegistry(meters)
                .build();
    }

    private static MongoClient client(String uri, WriteGuard guard) {
        return client(uri, guard, SOCKET_TIMEOUT_MS);
    }

    private static MongoClient client(String uri, WriteGuard guard, int socketTimeoutMs) {
        MongoClientSettings.Builder builder = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .applyToSocketSettings(s -> s.readTimeout(socketTimeoutMs, TimeUnit.MILLISECONDS));
        return MongoClients.create((guard == null ? builder : guard.configure(builder)).build());
    }

    /** A replica set, or a 2-shard cluster whose first shard (where the unsharded collection lives) stalls. */
    private record Deployment(AutoCloseable cluster, String uri, EmulatedNode stalledNode, ServerTruth truth)
            implements AutoCloseable {
        static Deployment start(Topology topology) {
            if (topology == Topology.REPLICA_SET) {
                EmulatedReplicaSet replicaSet = EmulatedCluster.replicaSet().start();
                return new Deployment(
                        replicaSet, replicaSet.connectionString(), replicaSet.primary(), replicaSet.truth());
            }
            EmulatedShardedCluster sharded = EmulatedCluster.sharded().shards(2).start();
            return new Deployment(sharded, sharded.connectionString(), sharded.shard(0), sharded.truth());
        }

        @Override
        public void close() throws Exception {
            cluster.close();
        }
    }
}
