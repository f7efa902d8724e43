package io.github.mongowriteguard.settle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.exception.WriteOutcomeUnknownException;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.retry.RetryPolicy;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.node.NodeInternals;
import io.github.mongowriteguard.testkit.sharding.ChunkMap;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import io.github.mongowriteguard.testkit.truth.ServerTruth;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A lost reply costs a round trip, and an UNKNOWN write is settled by the same server copy: through the real driver
 * and the emulator, on a replica set and behind mongos.
 */
class SettleTest {
    static final Predicate<ReceivedCommand> UPDATES = c -> c.commandName().equals("update");
    private static final Predicate<ReceivedCommand> INSERTS =
            c -> c.commandName().equals("insert");

    enum Topology {
        REPLICA_SET,
        SHARDED
    }

    /**
     * One deployment: the node that runs the writes (stalled by a test), the node the client talks to (whose answers a
     * test loses: through mongos, mongos' own; a shard's lost answer mongos itself would resend), the client's address,
     * the server's truth.
     */
    record Deployment(AutoCloseable cluster, EmulatedNode writes, EmulatedNode answers, String uri, ServerTruth truth)
            implements AutoCloseable {
        static Deployment start(Topology topology) {
            if (topology == Topology.REPLICA_SET) {
                EmulatedReplicaSet set = EmulatedCluster.replicaSet().start();
                return new Deployment(set, set.primary(), set.primary(), set.connectionString(), set.truth());
            }
            EmulatedShardedCluster cluster = EmulatedCluster.sharded().shards(1).start();
            cluster.shardCollection("settle.counters", ShardKey.of(new BsonDocument("_id", new BsonString("hashed"))));
            return new Deployment(
                    cluster,
                    cluster.shard(0),
                    cluster.mongos(0),
                    cluster.connectionString(),
                    cluster.shard(0).truth());
        }

        @Override
        public void close() throws Exception {
            cluster.close();
        }
    }

    static WriteGuard guard(Duration serverDeadline, int attempts, Duration backoff) {
        return WriteGuard.create(WriteGuardSettings.builder()
                .serverDeadline(serverDeadline)
                .retryPolicy(RetryPolicy.builder()
                        .maxAttempts(attempts)
                        .initialBackoff(backoff)
                        .build())
                .build());
    }

    /** The counter {@code {_id: "k", n: 0}}, the server's truth forgotten since. */
    private static MongoCollection<Document> counter(MongoClient client, Deployment deployment) {
        MongoCollection<Document> raw = client.getDatabase("settle").getCollection("counters");
        raw.insertOne(new Document("_id", "k").append("n", 0));
        deployment.truth().reset();
        return raw;
    }

    /** One {@code $inc} of the counter {@code k}. */
    static List<WriteModel<Document>> incK() {
        return List.of(new UpdateOneModel<>(Filters.eq("_id", "k"), Updates.inc("n", 1)));
    }

    /** The counters' writes stall, uninterruptibly, for {@code stall}. */
    private static StallHandle stallCounters(Deployment deployment, Duration stall) {
        return deployment.writes().stall(Stall.uninterruptible("settle.counters", stall));
    }

    private static MongoClient client(WriteGuard guard, String uri, int socketTimeoutMs) {
        return MongoClients.create(guard.configure(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(uri))
                        .applyToSocketSettings(s -> s.readTimeout(socketTimeoutMs, TimeUnit.MILLISECONDS)))
                .build());
    }

    /**
     * Replies lost on every one of the guard's attempts of an {@code updateOne}: a {@code WriteOutcomeUnknownException}
     * whose {@code outcome()} (a {@code WriteOutcome<?>}) the collection settles without a cast: APPLIED, once.
     */
    @Test
    void anExceptionsOutcome_isSettledByTheCollection_withoutACast_appliedOnce() throws Exception {
        WriteGuard guard = guard(Duration.ofSeconds(20), 2, Duration.ofMillis(20));
        try (Deployment deployment = Deployment.start(Topology.REPLICA_SET);
                MongoClient client = client(guard, deployment.uri(), 30_000)) {
            MongoCollection<Document> raw = counter(client, deployment);
            GuardedCollection<Document> counters = guard.guardCollection(client, raw);
            deployment.answers().loseReplies(2, "update");

            WriteOutcomeUnknownException e = catchThrowableOfType(
                    WriteOutcomeUnknownException.class,
                    () -> counters.updateOne(Filters.eq("_id", "k"), Updates.inc("n", 1)));
            WriteOutcome<?> settled = counters.settle(e.outcome());

            assertThat(e.outcome().outcome(0).status()).isEqualTo(WriteStatus.UNKNOWN);
            assertThat(settled.outcome(0).status()).isEqualTo(WriteStatus.APPLIED);
            assertThat(deployment.truth().commands(UPDATES)).hasSize(3);
            assertThat(deployment.truth().copies(UPDATES)).hasSize(1);
            assertThat(raw.find().first().getInteger("n")).as("applied once").isEqualTo(1);
        }
    }

    /**
     * A lost reply at the usual socketTimeoutMS=30000: the same copy is resent right after the backoff, waits behind
     * nothing (the first send ended) and is answered from the statement record: applied once, one copy, two sends,
     * well under the 20 s server deadline the overlap gate used to wait out.
     */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void aLostReply_costsARoundTrip_appliedOnce(Topology topology) throws Exception {
        WriteGuard guard = WriteGuard.create();
        try (Deployment deployment = Deployment.start(topology);
                MongoClient client = client(guard, deployment.uri(), 30_000)) {
            MongoCollection<Document> raw = counter(client, deployment);
            GuardedCollection<Document> counters = guard.guardCollection(client, raw);
            deployment.answers().loseReplies(1, "update");

            long started = System.nanoTime();
            WriteOutcome<Document> outcome = counters.execute(incK(), new BulkWriteOptions());
            Duration took = Duration.ofNanos(System.nanoTime() - started);
            System.out.println("lost reply, " + topology + ": " + took.toMillis() + " ms");

            assertThat(outcome.outcome(0).status())
                    .as(outcome.outcome(0).toString())
                    .isEqualTo(WriteStatus.APPLIED);
            assertThat(outcome.commands()).isEqualTo(1);
            assertThat(outcome.sends()).isEqualTo(2);
            assertThat(deployment.truth().copies(UPDATES)).hasSize(1);
            assertThat(raw.find().first().getInteger("n")).isEqualTo(1);
            assertThat(took).as("well under the 20 s server deadline").isLessThan(Duration.ofSeconds(10));
        }
    }

    /**
     * An uninterruptible stall that ends within the call's attempts: the first send's client gives up, the resend
     * waits behind it on the session's check-out and gets its true answer once the stall ends: applied once.
     */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void aStallThatEndsWithinTheAttempts_endsAppliedOnce(Topology topology) throws Exception {
        WriteGuard guard = guard(Duration.ofMillis(1_500), 3, Duration.ofMillis(50));
        try (Deployment deployment = Deployment.start(topology);
                MongoClient client = client(guard, deployment.uri(), 2_000)) {
            MongoCollection<Document> raw = counter(client, deployment);
            GuardedCollection<Document> counters = guard.guardCollection(client, raw);
            WriteOutcome<Document> outcome;
            // Longer than the first send's socket timeout, shorter than the first resend's wait.
            try (StallHandle stall = stallCounters(deployment, Duration.ofMillis(2_800))) {
                outcome = counters.execute(incK(), new BulkWriteOptions());
            }

            assertThat(outcome.outcome(0).status())
                    .as(outcome.outcome(0).toString())
                    .isEqualTo(WriteStatus.APPLIED);
            assertThat(outcome.commands()).isEqualTo(1);
            assertThat(outcome.sends()).isEqualTo(2);
            assertThat(deployment.truth().awaitIdle(UPDATES, Duration.ofSeconds(10)))
                    .isTrue();
            assertThat(deployment.truth().copies(UPDATES)).hasSize(1);
            assertThat(deployment.truth().maxConcurrentCopies(UPDATES)).isEqualTo(1);
            assertThat(raw.find().first().getInteger("n")).isEqualTo(1);
        }
    }

    /**
     * A stall longer than the call's attempts: UNKNOWN, settleable until a stated time; once the stall ends a settle
     * sends the same copy again and proves the {@code $inc} applied, once.
     */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void aStallLongerThanTheAttempts_isUnknown_thenSettledApplied_incOnce(Topology topology) throws Exception {
        WriteGuard guard = guard(Duration.ofMillis(150), 2, Duration.ofMillis(20));
        try (Deployment deployment = Deployment.start(topology);
                MongoClient client = client(guard, deployment.uri(), 300)) {
            MongoCollection<Document> raw = counter(client, deployment);
            GuardedCollection<Document> counters = guard.guardCollection(client, raw);
            WriteOutcome<Document> outcome;
            WriteOutcome<Document> early;
            try (StallHandle stall = stallCounters(deployment, Duration.ofMillis(2_000))) {
                outcome = counters.execute(incK(), new BulkWriteOptions());
                // Settled while the first copy still runs: the resend waits behind it until its deadline, proving
                // nothing; the write stays UNKNOWN and held.
                early = guard.settle(outcome);
            }

            IndexOutcome inc = outcome.outcome(0);
            assertThat(inc.status()).isEqualTo(WriteStatus.UNKNOWN);
            assertThat(inc.retrySafe())
                    .as("a new copy of an $inc could apply it twice")
                    .isFalse();
            assertThat(inc.settleable()).isTrue();
            assertThat(outcome.settleableUntil())
                    .isAfter(java.time.Instant.now().plusSeconds(60));
            assertThat(early.outcome(0).status()).isEqualTo(WriteStatus.UNKNOWN);
            assertThat(early.outcome(0).settleable()).isTrue();
            assertThat(guard.getCopies().heldCount()).isEqualTo(1);
            assertThat(deployment.truth().awaitIdle(UPDATES, Duration.ofSeconds(10)))
                    .isTrue();

            WriteOutcome<Document> settled = counters.settle(early);

            assertThat(settled.outcome(0).status())
                    .as(settled.outcome(0).toString())
                    .isEqualTo(WriteStatus.APPLIED);
            assertThat(settled.outcome(0).settleable()).isFalse();
            assertThat(settled.settleableUntil()).isNull();
            // The settle's answer replays the statement's n and nModified from its record (write_ops_retryability.cpp),
            // through mongos too: the held reply (mongos' MaxTimeMSExpired for the child batch) counted nothing.
            assertThat(List.of(settled.matchedCount(), settled.modifiedCount()))
                    .as("matched, modified")
                    .isEqualTo(List.of(1, 1));
            assertThat(settled.commands()).as("a settle starts no copy").isEqualTo(1);
            assertThat(guard.getCopies().heldCount()).isZero();
            assertThat(guard.getCopies().possiblyRunningCount()).isZero();
            assertThat(deployment.truth().copies(UPDATES)).hasSize(1);
            assertThat(deployment.truth().maxConcurrentCopies(UPDATES)).isEqualTo(1);
            assertThat(raw.find().first().getInteger("n")).as("applied once").isEqualTo(1);
            // Settling the settled outcome again sends nothing.
            assertThat(guard.settle(settled)).isSameAs(settled);
        }
    }

    /**
     * A kill of mongos' operation is not the shard's: {@code killSessions} through mongos kills mongos' own operation
     * of the session first ({@code src/mongo/s/kill_sessions_remote.cpp}), whose wait for the shard then ends with
     * {@code Interrupted} (11601) as the child batch's write error ({@code src/mongo/s/async_requests_sender.cpp},
     * {@code batch_write_exec.cpp}), while the shard, in an uninterruptible stall, still applies the {@code $inc}. So
     * the guard says UNKNOWN and settleable, not FAILED; once the stall ends a settle proves it applied, once.
     */
    @Test
    void aKillOfMongosOperation_leavesTheIncUnknownAndSettleable_notFailed() throws Exception {
        WriteGuard guard = guard(Duration.ofSeconds(10), 1, Duration.ofMillis(20));
        try (Deployment deployment = Deployment.start(Topology.SHARDED);
                MongoClient client = client(guard, deployment.uri(), 30_000);
                MongoClient admin = MongoClients.create(deployment.uri())) {
            MongoCollection<Document> raw = counter(client, deployment);
            GuardedCollection<Document> counters = guard.guardCollection(client, raw);
            WriteOutcome<Document> outcome;
            try (StallHandle stall = stallCounters(deployment, Duration.ofMillis(1_500))) {
                java.util.concurrent.CompletableFuture<WriteOutcome<Document>> call =
                        java.util.concurrent.CompletableFuture.supplyAsync(
                                () -> counters.execute(incK(), new BulkWriteOptions()));
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (deployment.truth().commands(UPDATES).isEmpty() && System.nanoTime() < until) {
                    Thread.sleep(10);
                }
                admin.getDatabase("admin").runCommand(new Document("killSessions", List.of()));
                outcome = call.get(10, TimeUnit.SECONDS);
            }

            IndexOutcome inc = outcome.outcome(0);
            assertThat(inc.status()).as(inc.toString()).isEqualTo(WriteStatus.UNKNOWN);
            assertThat(inc.settleable()).isTrue();
            assertThat(deployment.truth().awaitIdle(UPDATES, Duration.ofSeconds(10)))
                    .isTrue();

            WriteOutcome<Document> settled = counters.settle(outcome);

            assertThat(settled.outcome(0).status())
                    .as(settled.outcome(0).toString())
                    .isEqualTo(WriteStatus.APPLIED);
            assertThat(raw.find().first().getInteger("n")).as("applied once").isEqualTo(1);
        }
    }

    /**
     * The lost update: a full replacement, then an {@code $inc} on the same {@code _id}, in one ordered bulk; the
     * replacement's command gets a write-concern error (applied on the primary, UNKNOWN). The {@code $inc} must not be
     * applied before the replacement is settled, or a recipe that sends the replacement again undoes it. Settle, then
     * send what was held back: 105.
     */
    @Test
    void aReplacementWithAWriteConcernError_holdsBackTheLaterIncOnItsKey_settleThenSend_makes105() throws Exception {
        WriteGuard guard = WriteGuard.create();
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet().start();
                MongoClient client = client(guard, set.connectionString(), 30_000)) {
            MongoCollection<Document> raw = stockAtZero(client);
            GuardedCollection<Document> stock = guard.guardCollection(client, raw);
            List<WriteModel<Document>> models = List.of(
                    new ReplaceOneModel<>(Filters.eq("_id", 1), new Document("qty", 100)),
                    new UpdateOneModel<>(Filters.eq("_id", 1), Updates.inc("qty", 5)));

            WriteOutcome<Document> outcome = stock.execute(models, new BulkWriteOptions().ordered(true));
            assertThat(outcome.outcome(1).relatedIndex()).isZero();

            assertThat(outcome.outcome(0).status()).isEqualTo(WriteStatus.UNKNOWN);
            assertThat(outcome.outcome(0).writeConcernFailed()).isTrue();
            assertThat(outcome.outcome(1).status())
                    .as("the $inc is not applied before the replacement is settled: " + outcome.outcome(1))
                    .isNotEqualTo(WriteStatus.APPLIED);

            WriteOutcome<Document> settled = stock.settle(outcome);
            assertThat(settled.outcome(0).status()).isEqualTo(WriteStatus.APPLIED);
            List<WriteModel<Document>> again = new ArrayList<>();
            for (IndexOutcome o : settled.outcomes()) {
                if (o.status() == WriteStatus.SKIPPED) {
                    again.add(models.get(o.index()));
                }
            }
            assertThat(again).hasSize(1);
            assertThat(stock.execute(again, new BulkWriteOptions().ordered(true))
                            .isComplete())
                    .isTrue();
            assertThat(raw.find().first().getInteger("qty")).isEqualTo(105);
        }
    }

    /**
     * A chain on one key after the write-concern error, in an ordered and in an unordered bulk: every later write names
     * the UNKNOWN one (not the write held back before it), so that the recipe sends them only after its settle, in
     * order: 100 + 5 + 7.
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(booleans = {true, false})
    void aChainBehindAnUnknownWrite_namesTheUnknownOne_andEndsInOrder(boolean ordered) throws Exception {
        WriteGuard guard = WriteGuard.create();
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet().start();
                MongoClient client = client(guard, set.connectionString(), 30_000)) {
            MongoCollection<Document> raw = stockAtZero(client);
            GuardedCollection<Document> stock = guard.guardCollection(client, raw);
            List<WriteModel<Document>> models = List.of(
                    new ReplaceOneModel<>(Filters.eq("_id", 1), new Document("qty", 100)),
                    new UpdateOneModel<>(Filters.eq("_id", 1), Updates.inc("qty", 5)),
                    new UpdateOneModel<>(Filters.eq("_id", 1), Updates.inc("qty", 7)));

            WriteOutcome<Document> outcome = stock.execute(models, new BulkWriteOptions().ordered(ordered));

            assertThat(outcome.outcomes())
                    .extracting(IndexOutcome::status)
                    .containsExactly(WriteStatus.UNKNOWN, WriteStatus.SKIPPED, WriteStatus.SKIPPED);
            assertThat(outcome.outcomes())
                    .extracting(IndexOutcome::relatedIndex)
                    .containsExactly(-1, 0, 0);
            WriteOutcome<Document> settled = stock.settle(outcome);
            assertThat(settled.outcome(0).status()).isEqualTo(WriteStatus.APPLIED);
            assertThat(stock.execute(models.subList(1, 3), new BulkWriteOptions().ordered(true))
                            .isComplete())
                    .isTrue();
            assertThat(raw.find().first().getInteger("qty")).isEqualTo(112);
        }
    }

    /**
     * The same case in a bulk the guard runs as given (an unkeyed {@code updateMany} keeps the caller's order): the
     * bulk stops before the {@code $inc} whose {@code _id} has the UNKNOWN replacement, rather than apply it first.
     */
    @Test
    void aBulkRunAsGiven_stopsBeforeTheWriteBehindAnUnknownOne() throws Exception {
        WriteGuard guard = WriteGuard.create();
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet().start();
                MongoClient client = client(guard, set.connectionString(), 30_000)) {
            MongoCollection<Document> raw = client.getDatabase("settle").getCollection("stock");
            raw.insertOne(new Document("_id", 1).append("qty", 0).append("kind", "x"));
            GuardedCollection<Document> stock = guard.guardCollection(client, raw);
            failNextUpdateWithAWriteConcernError(client);
            List<WriteModel<Document>> models = List.of(
                    new ReplaceOneModel<>(Filters.eq("_id", 1), new Document("qty", 100).append("kind", "x")),
                    new InsertOneModel<>(new Document("_id", 2)),
                    new UpdateManyModel<>(Filters.eq("kind", "x"), Updates.set("seen", true)),
                    new UpdateOneModel<>(Filters.eq("_id", 1), Updates.inc("qty", 5)),
                    new InsertOneModel<>(new Document("_id", 3)));

            WriteOutcome<Document> outcome = stock.execute(models, new BulkWriteOptions().ordered(true));

            assertThat(outcome.outcomes())
                    .extracting(IndexOutcome::status)
                    .containsExactly(
                            WriteStatus.UNKNOWN,
                            WriteStatus.APPLIED,
                            WriteStatus.APPLIED,
                            WriteStatus.SKIPPED,
                            WriteStatus.SKIPPED);
            assertThat(outcome.outcome(3).relatedIndex()).isZero();
            assertThat(raw.find(Filters.eq("_id", 1)).first().getInteger("qty")).isEqualTo(100);

            WriteOutcome<Document> settled = stock.settle(outcome);
            assertThat(settled.outcome(0).status()).isEqualTo(WriteStatus.APPLIED);
            assertThat(stock.execute(models.subList(3, 5), new BulkWriteOptions().ordered(true))
                            .isComplete())
                    .isTrue();
            assertThat(raw.find(Filters.eq("_id", 1)).first().getInteger("qty")).isEqualTo(105);
        }
    }

    /**
     * The record is gone: an {@code $inc} left UNKNOWN (every answer lost by mongos), then its chunk migrates after the
     * donor's oplog rolled over, without the sessions' history. The settle's resend reaches the new owner, which
     * answers {@code IncompleteTransactionHistory} (217): still UNKNOWN, not settleable, saying why; never run again.
     */
    @Test
    void aChunkMovedWithoutItsHistory_cannotBeSettled_andSaysWhy() throws Exception {
        WriteGuard guard = guard(Duration.ofSeconds(20), 2, Duration.ofMillis(20));
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(2).start();
                MongoClient client = client(guard, cluster.connectionString(), 30_000)) {
            ShardKey key = cluster.shardCollection(
                            "settle.moved", ShardKey.of(new BsonDocument("_id", new BsonInt32(1))))
                    .key();
            cluster.placeChunks(
                    "settle.moved",
                    ChunkMap.splitAt(key, List.of(new BsonInt32(10)), List.of("shard00", "shard01"))
                            .chunks());
            MongoCollection<Document> raw = client.getDatabase("settle").getCollection("moved");
            raw.insertOne(new Document("_id", 5).append("n", 0));
            GuardedCollection<Document> moved = guard.guardCollection(client, raw);
            cluster.mongos(0).loseReplies(2, "update");
            WriteOutcome<Document> outcome = moved.execute(
                    List.of(new UpdateOneModel<>(Filters.eq("_id", 5), Updates.inc("n", 1))), new BulkWriteOptions());
            assertThat(outcome.outcome(0).status()).isEqualTo(WriteStatus.UNKNOWN);
            assertThat(outcome.outcome(0).settleable()).isTrue();

            cluster.moveChunkAfterOplogRollover("settle.moved", new BsonDocument("_id", new BsonInt32(5)), "shard01");
            WriteOutcome<Document> settled = guard.settle(outcome);

            IndexOutcome inc = settled.outcome(0);
            assertThat(inc.status()).as(inc.toString()).isEqualTo(WriteStatus.UNKNOWN);
            assertThat(inc.settleable()).isFalse();
            assertThat(inc.message()).contains("cannot be settled").contains("217");
            assertThat(guard.getCopies().heldCount()).isZero();
            assertThat(raw.find().first().getInteger("n"))
                    .as("applied once, never again")
                    .isEqualTo(1);
            assertThat(guard.settle(settled).outcome(0).status()).isEqualTo(WriteStatus.UNKNOWN);
        }
    }

    /** {@code {_id: 1, qty: 0}}, and the next update command's write concern fails. */
    private static MongoCollection<Document> stockAtZero(MongoClient client) {
        MongoCollection<Document> raw = client.getDatabase("settle").getCollection("stock");
        raw.insertOne(new Document("_id", 1).append("qty", 0));
        failNextUpdateWithAWriteConcernError(client);
        return raw;
    }

    static void failNextUpdateWithAWriteConcernError(MongoClient client) {
        client.getDatabase("admin")
                .runCommand(new Document("configureFailPoint", "failCommand")
                        .append("mode", new Document("times", 1))
                        .append(
                                "data",
                                new Document("failCommands", List.of("update"))
                                        .append(
                                                "writeConcernError",
                                                new Document("code", 64)
                                                        .append("codeName", "WriteConcernFailed")
                                                        .append("errmsg", "waiting for replication timed out"))));
    }

    /**
     * An insert without {@code _id} whose every answer is lost: UNKNOWN, with the {@code _id} the guard gave it; a
     * settle sends the same copy and proves it applied: one document.
     */
    @Test
    void anInsertWithoutId_answeredUnknown_isSettled_oneDocument() throws Exception {
        WriteGuard guard = guard(Duration.ofSeconds(20), 2, Duration.ofMillis(20));
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet().start();
                MongoClient client = client(guard, set.connectionString(), 30_000)) {
            MongoCollection<Document> raw = client.getDatabase("settle").getCollection("events");
            GuardedCollection<Document> events = guard.guardCollection(client, raw);
            set.primary().loseReplies(2, "insert");

            WriteOutcome<Document> outcome = events.execute(
                    List.of(new InsertOneModel<>(new Document("event", "paid"))), new BulkWriteOptions());

            IndexOutcome insert = outcome.outcome(0);
            assertThat(insert.status()).isEqualTo(WriteStatus.UNKNOWN);
            assertThat(insert.settleable()).isTrue();
            assertThat(insert.assignedId()).isNotNull();

            WriteOutcome<Document> settled = guard.settle(outcome);

            assertThat(settled.outcome(0).status()).isEqualTo(WriteStatus.APPLIED);
            assertThat(raw.countDocuments()).isEqualTo(1);
            assertThat(raw.find().first().get("_id"))
                    .isEqualTo(insert.assignedId().asObjectId().getValue());
            assertThat(settled.inserts())
                    .singleElement()
                    .satisfies(i -> assertThat(i.getId()).isEqualTo(insert.assignedId()));
            assertThat(set.truth().copies(INSERTS)).hasSize(1);
        }
    }

    /**
     * An applied insert whose statement record the server no longer has (here the node forgot its retryable-write
     * records; on a real server a session it reaped): the settle runs the insert again, which fails with DuplicateKey
     * on the {@code _id} the guard gave it, which only this write can have used: APPLIED, not FAILED.
     */
    @Test
    void anAppliedInsertWhoseSettleAnswersDuplicateKeyOnItsOwnId_isApplied() throws Exception {
        WriteGuard guard = guard(Duration.ofSeconds(20), 2, Duration.ofMillis(20));
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet().start();
                MongoClient client = client(guard, set.connectionString(), 30_000)) {
            MongoCollection<Document> raw = client.getDatabase("settle").getCollection("events");
            GuardedCollection<Document> events = guard.guardCollection(client, raw);
            set.primary().loseReplies(2, "insert");
            WriteOutcome<Document> outcome = events.execute(
                    List.of(new InsertOneModel<>(new Document("event", "paid"))), new BulkWriteOptions());
            assertThat(outcome.outcome(0).status()).isEqualTo(WriteStatus.UNKNOWN);
            NodeInternals.of(set.primary()).clearRetryRecords();

            WriteOutcome<Document> settled = guard.settle(outcome);

            assertThat(settled.outcome(0).status())
                    .as(settled.outcome(0).toString())
                    .isEqualTo(WriteStatus.APPLIED);
            assertThat(raw.countDocuments()).isEqualTo(1);
        }
    }
}
