package io.github.mongowriteguard.outcome;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.exception.WriteOutcomeUnknownException;
import io.github.mongowriteguard.retry.RetryPolicy;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * After a failover, the driver-style methods throw no driver command exception where the outcome is unknown: an error
 * that does not prove nothing was applied ({@code PrimarySteppedDown}, {@code InterruptedDueToReplStateChange} on a
 * multi-document write) leaves the write UNKNOWN, and the call throws {@link WriteOutcomeUnknownException} with the
 * complete outcome. On a replica set and on replicating shards behind mongos.
 */
class FailoverOutcomesTest {

    static WriteGuard guard() {
        return guard(3);
    }

    private static WriteGuard guard(int attempts) {
        return WriteGuard.create(WriteGuardSettings.builder()
                .serverDeadline(Duration.ofSeconds(5))
                .retryPolicy(RetryPolicy.builder()
                        .maxAttempts(attempts)
                        .initialBackoff(Duration.ofMillis(10))
                        .gateGrace(Duration.ofMillis(20))
                        .build())
                .build());
    }

    private static MongoClient client(WriteGuard guard, String connectionString) {
        return MongoClients.create(guard.configure(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(connectionString))
                        .applyToServerSettings(s -> s.heartbeatFrequency(100, TimeUnit.MILLISECONDS)
                                .minHeartbeatFrequency(20, TimeUnit.MILLISECONDS))
                        .applyToSocketSettings(s -> s.readTimeout(10, TimeUnit.SECONDS)))
                .build());
    }

    /**
     * Every member answers {@code update} with {@code PrimarySteppedDown} (189), as a stepping-down set does, to
     * mongos too ({@code failInternalCommands}).
     */
    static void steppedDownUpdates(List<EmulatedNode> members, boolean on) {
        BsonDocument failPoint = on
                ? BsonDocument.parse("{configureFailPoint: 'failCommand', mode: 'alwaysOn',"
                        + " data: {failCommands: ['update'], errorCode: 189,"
                        + " failInternalCommands: true}}")
                : BsonDocument.parse("{configureFailPoint: 'failCommand', mode: 'off'}");
        members.forEach(member -> member.failCommand().configure(failPoint));
    }

    static final List<WriteModel<Document>> INSERT_INC_INSERT = List.of(
            new InsertOneModel<>(new Document("_id", "a")),
            new UpdateOneModel<>(Filters.eq("_id", "k"), Updates.inc("n", 1)),
            new InsertOneModel<>(new Document("_id", "b")));

    /**
     * The first regression case: an ordered {@code [insertOne, updateOne $inc, insertOne]} whose update is answered
     * {@code PrimarySteppedDown} on every send. The driver's bulk threw {@code MongoNodeIsRecoveringException} and hid
     * the applied insert; the guard says: insert APPLIED, {@code $inc} UNKNOWN (not retry-safe).
     */
    private static void assertOrderedIncUnknown(GuardedCollection<Document> guarded, MongoCollection<Document> raw) {
        Throwable thrown = catchThrowable(() -> guarded.bulkWrite(INSERT_INC_INSERT));

        WriteOutcome<?> outcome = insertAppliedIncUnknown(thrown);
        assertThat(raw.countDocuments(Filters.eq("_id", "a"))).isEqualTo(1);
        // The guard keeps the order per key, so the second insert (another key) may have run beside the first.
        assertThat(outcome.outcome(2).status() == WriteStatus.APPLIED)
                .as(outcome.outcome(2).toString())
                .isEqualTo(raw.countDocuments(Filters.eq("_id", "b")) == 1);

        Throwable single = catchThrowable(() -> guarded.updateOne(Filters.eq("_id", "k"), Updates.inc("n", 1)));
        assertThat(single).isInstanceOf(WriteOutcomeUnknownException.class);
    }

    /**
     * What {@link #INSERT_INC_INSERT} answered {@code PrimarySteppedDown} throws: {@link WriteOutcomeUnknownException},
     * not the driver's command exception, whose outcome has the insert APPLIED and the {@code $inc} UNKNOWN, not
     * retry-safe.
     */
    static WriteOutcome<?> insertAppliedIncUnknown(Throwable thrown) {
        assertThat(thrown).isInstanceOf(WriteOutcomeUnknownException.class);
        assertThat(thrown).isNotInstanceOf(MongoCommandException.class);
        WriteOutcome<?> outcome = ((WriteOutcomeUnknownException) thrown).outcome();
        assertThat(outcome.outcome(0).status()).isEqualTo(WriteStatus.APPLIED);
        assertThat(outcome.outcome(1).status()).isEqualTo(WriteStatus.UNKNOWN);
        assertThat(outcome.outcome(1).retrySafe())
                .as("a new copy of an $inc may apply it twice")
                .isFalse();
        return outcome;
    }

    /**
     * The second regression case: an unordered bulk whose {@code updateMany} is interrupted by a stepdown
     * ({@code InterruptedDueToReplStateChange}, 11602): a multi-document write commits document by document, so the
     * error does not prove nothing changed.
     */
    private static void assertUpdateManyInterruptedUnknown(
            GuardedCollection<Document> guarded, EmulatedNode primary, Consumer<Void> stepDown) throws Exception {
        WriteOutcomeUnknownException unknown;
        try (StallHandle stall = primary.stall(Stall.interruptible("f.c", Duration.ofSeconds(20)))) {
            CompletableFuture<Throwable> call =
                    CompletableFuture.supplyAsync(() -> catchThrowable(() -> guarded.bulkWrite(
                            List.of(new UpdateManyModel<>(Filters.eq("s", 1), Updates.inc("n", 1))),
                            new BulkWriteOptions().ordered(false))));
            awaitStalledUpdate(primary);
            stepDown.accept(null);
            Throwable thrown = call.get(30, TimeUnit.SECONDS);
            assertThat(thrown).isInstanceOf(WriteOutcomeUnknownException.class);
            unknown = (WriteOutcomeUnknownException) thrown;
        }
        IndexOutcome updateMany = unknown.outcome().outcome(0);
        assertThat(updateMany.status()).isEqualTo(WriteStatus.UNKNOWN);
        assertThat(updateMany.retrySafe()).isFalse();
    }

    private static void awaitStalledUpdate(EmulatedNode primary) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (primary.commandCount("update") == 0 && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        Thread.sleep(100);
    }

    @Test
    void replicaSet_orderedIncAnsweredPrimarySteppedDown_isUnknown_notTheDriversException() throws Exception {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet().members(3).start()) {
            WriteGuard guard = guard();
            try (MongoClient client = client(guard, set.connectionString())) {
                MongoCollection<Document> raw = client.getDatabase("f").getCollection("c");
                raw.insertOne(new Document("_id", "k").append("n", 0));
                set.awaitReplication(Duration.ofSeconds(5));
                steppedDownUpdates(set.members(), true);
                try {
                    assertOrderedIncUnknown(guard.guardCollection(client, raw), raw);
                } finally {
                    steppedDownUpdates(set.members(), false);
                }
            }
        }
    }

    @Test
    void replicaSet_unorderedUpdateManyInterruptedByAStepdown_isUnknown() throws Exception {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet()
                .members(3)
                .electionTimeout(Duration.ofMillis(300))
                .start()) {
            WriteGuard guard = guard();
            try (MongoClient client = client(guard, set.connectionString())) {
                MongoCollection<Document> raw = client.getDatabase("f").getCollection("c");
                raw.insertMany(List.of(new Document("s", 1), new Document("s", 1)));
                set.awaitReplication(Duration.ofSeconds(5));
                EmulatedNode primary = set.primary();
                assertUpdateManyInterruptedUnknown(
                        guard.guardCollection(client, raw),
                        primary,
                        ignored -> set.stepDown(Duration.ofSeconds(1), Duration.ZERO, true));
            }
        }
    }

    @Test
    void replicatingShards_orderedIncAnsweredPrimarySteppedDown_isUnknown_notTheDriversException() {
        try (EmulatedShardedCluster cluster = EmulatedCluster.sharded()
                .shards(1)
                .nodesPerShard(3)
                .replicatingShards(true)
                .start()) {
            WriteGuard guard = guard();
            try (MongoClient client = client(guard, cluster.connectionString())) {
                MongoCollection<Document> raw = client.getDatabase("f").getCollection("c");
                raw.insertOne(new Document("_id", "k").append("n", 0));
                List<EmulatedNode> members = cluster.shardSet(0).members();
                steppedDownUpdates(members, true);
                try {
                    assertOrderedIncUnknown(guard.guardCollection(client, raw), raw);
                } finally {
                    steppedDownUpdates(members, false);
                }
            }
        }
    }

    @Test
    void replicatingShards_unorderedUpdateManyInterruptedByAStepdown_isUnknown() throws Exception {
        try (EmulatedShardedCluster cluster = EmulatedCluster.sharded()
                .shards(1)
                .nodesPerShard(3)
                .replicatingShards(true)
                .shardElectionTimeout(Duration.ofMillis(300))
                .start()) {
            WriteGuard guard = guard();
            try (MongoClient client = client(guard, cluster.connectionString())) {
                MongoCollection<Document> raw = client.getDatabase("f").getCollection("c");
                raw.insertMany(List.of(new Document("s", 1), new Document("s", 1)));
                cluster.shardSet(0).awaitReplication(Duration.ofSeconds(5));
                EmulatedNode primary = cluster.shardSet(0).primary();
                assertUpdateManyInterruptedUnknown(
                        guard.guardCollection(client, raw),
                        primary,
                        ignored -> cluster.shardSet(0).stepDown(Duration.ofSeconds(1), Duration.ZERO, true));
            }
        }
    }

    private static final List<WriteModel<Document>> THREE_INCS = List.of(
            new UpdateOneModel<>(Filters.eq("_id", 1), Updates.inc("n", 1)),
            new UpdateOneModel<>(Filters.eq("_id", 2), Updates.inc("n", 1)),
            new UpdateOneModel<>(Filters.eq("_id", 3), Updates.inc("n", 1)));

    /**
     * A stepdown between the statements of one command (the emulator's interrupt points, as {@code write_ops_exec.cpp}
     * has them): the first {@code $inc} is applied, the command fails with {@code InterruptedDueToReplStateChange}.
     */
    private static Throwable incsInterruptedAfterTheFirst(EmulatedReplicaSet set, int attempts) throws Exception {
        WriteGuard guard = guard(attempts);
        try (MongoClient client = client(guard, set.connectionString())) {
            MongoCollection<Document> raw = client.getDatabase("f").getCollection("c");
            raw.insertMany(List.of(
                    new Document("_id", 1).append("n", 0),
                    new Document("_id", 2).append("n", 0),
                    new Document("_id", 3).append("n", 0)));
            set.awaitReplication(Duration.ofSeconds(5));
            GuardedCollection<Document> guarded = guard.guardCollection(client, raw);
            EmulatedNode primary = set.primary();
            try (StallHandle pause = primary.pauseAfterStatements("f.c", 1, Duration.ofSeconds(20))) {
                CompletableFuture<Throwable> call =
                        CompletableFuture.supplyAsync(() -> catchThrowable(() -> guarded.bulkWrite(THREE_INCS)));
                awaitStalledUpdate(primary);
                set.stepDown(Duration.ofSeconds(1), Duration.ZERO, true);
                return call.get(30, TimeUnit.SECONDS);
            }
        }
    }

    private static List<Integer> counts(EmulatedReplicaSet set) throws Exception {
        set.awaitPrimary(Duration.ofSeconds(10));
        set.awaitReplication(Duration.ofSeconds(5));
        try (MongoClient client = MongoClients.create(set.connectionString())) {
            MongoCollection<Document> raw = client.getDatabase("f").getCollection("c");
            return List.of(1, 2, 3).stream()
                    .map(id -> raw.find(Filters.eq("_id", id)).first().getInteger("n"))
                    .toList();
        }
    }

    @Test
    void replicaSet_incsInterruptedPartWay_withoutARetry_areUnknown() throws Exception {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet()
                .members(3)
                .electionTimeout(Duration.ofMillis(300))
                .start()) {
            Throwable thrown = incsInterruptedAfterTheFirst(set, 1);

            assertThat(thrown).isInstanceOf(WriteOutcomeUnknownException.class);
            WriteOutcome<?> outcome = ((WriteOutcomeUnknownException) thrown).outcome();
            for (int index = 0; index < 3; index++) {
                assertThat(outcome.outcome(index).status())
                        .as(outcome.outcome(index).toString())
                        .isEqualTo(WriteStatus.UNKNOWN);
                assertThat(outcome.outcome(index).retrySafe()).isFalse();
            }
            assertThat(counts(set))
                    .as("the first $inc ran before the interruption")
                    .containsExactly(1, 0, 0);
        }
    }

    @Test
    void replicaSet_incsInterruptedPartWay_resentAsTheSameCopy_applyEachOnce() throws Exception {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet()
                .members(3)
                .electionTimeout(Duration.ofMillis(300))
                .start()) {
            Throwable thrown = incsInterruptedAfterTheFirst(set, 3);

            assertThat(thrown)
                    .as("the new primary ran the rest; the first from its retry record")
                    .isNull();
            assertThat(counts(set)).containsExactly(1, 1, 1);
        }
    }
}
