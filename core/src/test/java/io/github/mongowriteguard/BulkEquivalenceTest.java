package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Set;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;

import org.bson.Document;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.WriteModel;

import io.github.mongowriteguard.bulk.BulkPlan;
import io.github.mongowriteguard.bulk.InvalidBulkException;
import io.github.mongowriteguard.bulk.PlanMode;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.TestDeployment;
import io.github.mongowriteguard.testkit.sharding.ShardKey;

/**
 * Property: a guarded bulk ends as the driver's would. Random bulks over {@code _id} 0..7 mixing every write kind,
 * from random initial data, ordered and unordered, run by the plain driver on one collection and by the guard on
 * another:
 * <ul>
 *   <li>when the driver's ORDERED run has no error, the guarded state equals it;</li>
 *   <li>when a plan runs in rounds, the guarded state and statuses equal each key's surviving writes run in order up
 *       to that key's first error (replayed per key with the driver), superseded writes not run;</li>
 *   <li>when a plan keeps the caller's order (unkeyed writes in an ordered bulk), it equals the driver's ORDERED
 *       run, errors included;</li>
 *   <li>an unordered bulk without repeated keys equals the driver's UNORDERED run;</li>
 *   <li>every index has one outcome, and the rounds are as many as the most writes sent on one key.</li>
 * </ul>
 * Replay one bulk with {@code -Dequiv.seed=<seed printed in the failure>} (and {@code -Dequiv.bulks=1}).
 */
class BulkEquivalenceTest {
    private static final long BASE_SEED = Long.getLong("equiv.seed", 20_240_501L);
    private static final int BULKS = Integer.getInteger("equiv.bulks", 700);

    @Test
    void randomBulksOnAReplicaSet_endAsTheDriversOrderedRunOrPerKey() {
        try (TestDeployment deployment = TestDeployment.replicaSet();
             GuardFixture fixture = new GuardFixture(deployment.connectionString(), 5_000)) {
            Stats stats = run(fixture, fixture.client.getDatabase("equiv"), namespace -> { }, BASE_SEED, BULKS);
            System.out.println("BulkEquivalenceTest replica set: " + stats);
            stats.assertEnough(BULKS);
        }
    }

    @Test
    void randomBulksOnAShardedClusterHashedOnId_endAsTheDriversOrderedRunOrPerKey() {
        try (EmulatedShardedCluster cluster = EmulatedCluster.sharded().shards(3).start();
             GuardFixture fixture = new GuardFixture(cluster.connectionString(), 5_000)) {
            ShardKey hashedId = ShardKey.of(new BsonDocument("_id", new BsonString("hashed")));
            int bulks = Math.max(1, BULKS * 3 / 7);
            Stats stats = run(fixture, fixture.client.getDatabase("equiv_sharded"),
                namespace -> cluster.shardCollection(namespace, hashedId), BASE_SEED + 1_000_000_007L, bulks);
            System.out.println("BulkEquivalenceTest sharded (3 shards, hashed _id): " + stats);
            stats.assertEnough(bulks);
        }
    }

    /**
     * The four collections of one bulk: the guard's, the driver's ordered and unordered runs, the per-key replay.
     * Fresh per bulk: a write with a non-_id filter picks the first match in natural order, and the storage engine
     * reuses freed slots, so collections with different histories can pick different documents.
     */
    private static final class Target {
        final List<MongoCollection<Document>> all = new ArrayList<>();
        final MongoCollection<Document> guard;
        final MongoCollection<Document> ordered;
        final MongoCollection<Document> unordered;
        final MongoCollection<Document> replay;
        final GuardedCollection<Document> guarded;
        /** What the runs reported, for the failure message. */
        final StringBuilder trace = new StringBuilder();

        Target(GuardFixture fixture, MongoDatabase database, Consumer<String> prepare, int bulk) {
            guard = collection(database, prepare, "guard" + bulk);
            ordered = collection(database, prepare, "ordered" + bulk);
            unordered = collection(database, prepare, "unordered" + bulk);
            replay = collection(database, prepare, "replay" + bulk);
            guarded = fixture.wrap(guard);
        }

        private MongoCollection<Document> collection(MongoDatabase database, Consumer<String> prepare, String name) {
            prepare.accept(database.getName() + "." + name);
            MongoCollection<Document> collection = database.getCollection(name);
            all.add(collection);
            return collection;
        }

        void drop() {
            all.forEach(MongoCollection::drop);
        }
    }

    private static final class Stats {
        int bulks;
        int rejected;
        final Map<PlanMode, Integer> modes = new EnumMap<>(PlanMode.class);
        int comparedToOrdered;
        int comparedPerKey;
        int comparedToUnordered;
        int driverOrderedErrors;
        int invariantsOnly;

        void assertEnough(int expected) {
            assertThat(bulks).as("bulks run").isEqualTo(expected);
            assertThat(comparedToOrdered + comparedPerKey + comparedToUnordered).as("bulks whose state was compared")
                .isGreaterThan(expected / 2);
        }

        @Override
        public String toString() {
            return bulks + " bulks (" + rejected + " rejected as invalid by the guard, checked), plan modes " + modes
                + ", driver ORDERED run with errors in " + driverOrderedErrors + "; state compared to the ORDERED run "
                + comparedToOrdered + ", to the per-key replay " + comparedPerKey + ", to the UNORDERED run "
                + comparedToUnordered + "; invariants only (unordered with unkeyed writes) " + invariantsOnly;
        }
    }

    private static Stats run(GuardFixture fixture, MongoDatabase database, Consumer<String> prepare, long baseSeed, int bulks) {
        Stats stats = new Stats();
        for (int i = 0; i < bulks; i++) {
            long seed = baseSeed + i;
            RandomBulk bulk = RandomBulk.generate(seed);
            Target target = new Target(fixture, database, prepare, i);
            try {
                check(target, bulk, stats);
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError("bulk " + i + " failed; replay with -Dequiv.seed=" + seed + " -Dequiv.bulks=1\n"
                    + bulk + target.trace + "\n" + e.getMessage(), e);
            }
            target.drop();
            stats.bulks++;
        }
        return stats;
    }

    private static void check(Target target, RandomBulk bulk, Stats stats) {
        BulkWriteOptions options = new BulkWriteOptions().ordered(bulk.ordered);
        reset(target.guard, bulk);
        reset(target.ordered, bulk);

        // The guard first: it gives inserts without _id their ids, which the driver's copies then reuse.
        List<WriteModel<Document>> guardModels = bulk.models(false);
        BulkPlan plan;
        WriteOutcome<Document> outcome;
        try {
            plan = target.guarded.plan(bulk.models(false), options);
            outcome = target.guarded.execute(guardModels, options);
        } catch (InvalidBulkException rejected) {
            checkRejection(target, bulk, rejected);
            stats.rejected++;
            return;
        }
        bulk.recordAssignedIds(guardModels);
        stats.modes.merge(plan.mode(), 1, Integer::sum);
        target.trace.append("\n  plan: ").append(plan).append("\n  guard: ").append(outcome.outcomes());

        // Every index exactly once, nothing unknown on a healthy deployment.
        assertThat(outcome.outcomes()).hasSize(bulk.ops.size());
        for (int i = 0; i < bulk.ops.size(); i++) {
            assertThat(outcome.outcome(i).index()).isEqualTo(i);
        }
        assertThat(outcome.hasUnknown()).as("unknown outcomes: %s", outcome.outcomes()).isFalse();

        DriverRun orderedRun = DriverRun.of(target.ordered, bulk.models(true), true);
        target.trace.append("\n  driver ORDERED run: ").append(orderedRun);
        if (orderedRun.firstError >= 0) {
            stats.driverOrderedErrors++;
        }
        Map<Object, Document> guardState = state(target.guard, bulk);

        if (plan.mode() == PlanMode.UNORDERED_ROUNDS) {
            checkRounds(bulk, plan, outcome);
            if (bulk.ordered && orderedRun.firstError < 0) {
                assertThat(guardState).as("state after the guard vs the driver's ORDERED run").isEqualTo(state(target.ordered, bulk));
                assertThat(outcome.isComplete()).as("statuses %s", outcome.outcomes()).isTrue();
                stats.comparedToOrdered++;
            }
            if (bulk.allKeyed()) {
                Map<Integer, IndexOutcome> expected = replayPerKey(target.replay, bulk);
                assertThat(guardState).as("state after the guard vs each key's writes replayed in order up to its first error")
                    .isEqualTo(state(target.replay, bulk));
                for (int i = 0; i < bulk.ops.size(); i++) {
                    IndexOutcome want = expected.get(i);
                    IndexOutcome got = outcome.outcome(i);
                    assertThat(got.status()).as("status of #%d: %s", i, got).isEqualTo(want.status());
                    assertThat(got.errorCode()).as("error code of #%d: %s", i, got).isEqualTo(want.errorCode());
                    if (want.status() == WriteStatus.SKIPPED || want.status() == WriteStatus.SUPERSEDED) {
                        assertThat(got.relatedIndex()).as("related index of #%d: %s", i, got).isEqualTo(want.relatedIndex());
                    }
                }
                stats.comparedPerKey++;
            }
            if (!bulk.ordered && bulk.allKeyed() && !bulk.hasRepeatedKey()) {
                reset(target.unordered, bulk);
                DriverRun.of(target.unordered, bulk.models(true), false);
                assertThat(guardState).as("state after the guard vs the driver's UNORDERED run").isEqualTo(state(target.unordered, bulk));
                stats.comparedToUnordered++;
            }
            if (!bulk.ordered && !bulk.allKeyed()) {
                stats.invariantsOnly++;
            }
        } else {
            // The caller's order kept as one ORDERED round: exactly the driver's ORDERED run, errors included.
            assertThat(bulk.ordered).isTrue();
            assertThat(plan.rounds()).hasSize(1);
            assertThat(outcome.rounds()).isEqualTo(1);
            assertThat(outcome.commands()).isPositive();
            assertThat(guardState).as("state after the guard (order kept) vs the driver's ORDERED run").isEqualTo(state(target.ordered, bulk));
            for (int i = 0; i < bulk.ops.size(); i++) {
                WriteStatus want = orderedRun.firstError < 0 || i < orderedRun.firstError ? WriteStatus.APPLIED
                    : i == orderedRun.firstError ? WriteStatus.FAILED : WriteStatus.SKIPPED;
                assertThat(outcome.outcome(i).status()).as("status of #%d: %s", i, outcome.outcome(i)).isEqualTo(want);
                if (i == orderedRun.firstError) {
                    assertThat(outcome.outcome(i).errorCode()).isEqualTo(orderedRun.firstErrorCode);
                }
            }
            stats.comparedToOrdered++;
        }
    }

    /**
     * The guard refuses a bulk that inserts an {@code _id} twice with no delete between, claiming the second insert
     * would always fail. Check the claim against the driver's ORDERED run, and that nothing was sent.
     */
    private static void checkRejection(Target target, RandomBulk bulk, InvalidBulkException rejected) {
        assertThat(rejected.problem()).as(rejected.getMessage()).isEqualTo(InvalidBulkException.Problem.DUPLICATE_INSERT_ID);
        assertThat(state(target.guard, bulk)).as("nothing sent for a rejected bulk").isEqualTo(initialState(bulk));
        if (bulk.ordered) {
            List<WriteModel<Document>> models = bulk.models(false);
            DriverRun orderedRun = DriverRun.of(target.ordered, models, true);
            assertThat(orderedRun.firstError).as("the guard rejected #%d as an insert that always fails (%s), but the driver's"
                + " ORDERED run got past it", rejected.index(), rejected.getMessage())
                .isBetween(0, rejected.index());
        }
    }

    /** plan.rounds() = the most surviving writes on one key; outcome.rounds() = the most writes sent on one key. */
    private static void checkRounds(RandomBulk bulk, BulkPlan plan, WriteOutcome<Document> outcome) {
        assertThat(plan.superseded()).as("superseded writes").isEqualTo(bulk.superseded());
        int unkeyed = (int) bulk.ops.stream().filter(op -> op.key() == null).count();
        int mostSurviving = bulk.survivingWritesByKey().values().stream().mapToInt(List::size).max().orElse(0);
        assertThat(plan.rounds()).as("plan rounds").hasSize(Math.max(mostSurviving, unkeyed > 0 ? 1 : 0));
        int mostSent = 0;
        for (List<Integer> writes : bulk.writesByKey().values()) {
            int sent = (int) writes.stream().map(outcome::outcome)
                .filter(o -> o.status() == WriteStatus.APPLIED || o.status() == WriteStatus.FAILED).count();
            mostSent = Math.max(mostSent, sent);
        }
        if (unkeyed > 0) {
            mostSent = Math.max(mostSent, 1);
        }
        assertThat(outcome.rounds()).as("rounds run").isEqualTo(mostSent);
        for (int i = 0; i < bulk.ops.size(); i++) {
            assertThat(plan.roundOf(i) == 0).as("#%d in no round iff superseded", i).isEqualTo(plan.superseded().containsKey(i));
        }
    }

    /**
     * The guard's documented semantics, computed with the driver: each key's surviving writes as one ORDERED bulk of
     * their own (stopping at that key's first error); superseded writes are not run.
     */
    private static Map<Integer, IndexOutcome> replayPerKey(MongoCollection<Document> replay, RandomBulk bulk) {
        reset(replay, bulk);
        Map<Integer, IndexOutcome> expected = new HashMap<>();
        bulk.superseded().forEach((index, by) -> expected.put(index, IndexOutcome.superseded(index, by)));
        List<WriteModel<Document>> all = bulk.models(true);
        for (List<Integer> writes : bulk.survivingWritesByKey().values()) {
            List<WriteModel<Document>> models = new ArrayList<>();
            writes.forEach(i -> models.add(all.get(i)));
            DriverRun run = DriverRun.of(replay, models, true);
            for (int position = 0; position < writes.size(); position++) {
                int index = writes.get(position);
                if (run.firstError < 0 || position < run.firstError) {
                    expected.put(index, IndexOutcome.applied(index));
                } else if (position == run.firstError) {
                    expected.put(index, IndexOutcome.failed(index, run.firstErrorCode, "", false));
                } else {
                    expected.put(index, IndexOutcome.skipped(index, writes.get(position - 1), ""));
                }
            }
        }
        return expected;
    }

    /** The driver's own bulkWrite: the position and code of its first write error, or -1. */
    private record DriverRun(int firstError, int firstErrorCode, String errors) {
        static DriverRun of(MongoCollection<Document> collection, List<WriteModel<Document>> models, boolean ordered) {
            try {
                collection.bulkWrite(models, new BulkWriteOptions().ordered(ordered));
                return new DriverRun(-1, 0, "no error");
            } catch (MongoBulkWriteException e) {
                return new DriverRun(e.getWriteErrors().get(0).getIndex(), e.getWriteErrors().get(0).getCode(),
                    e.getWriteErrors().toString());
            }
        }
    }

    private static void reset(MongoCollection<Document> collection, RandomBulk bulk) {
        if (!bulk.initial.isEmpty()) {
            List<Document> copies = new ArrayList<>();
            bulk.initial.forEach(d -> copies.add(Document.parse(d.toJson())));
            collection.insertMany(copies);
        }
    }

    /**
     * The documents by {@code _id}. Documents whose {@code _id} the server generated (an upsert whose filter names no
     * {@code _id}) differ between runs, so they are keyed by their content instead.
     */
    private static Map<Object, Document> state(MongoCollection<Document> collection, RandomBulk bulk) {
        Set<Object> known = new HashSet<>();
        for (int id = 0; id < RandomBulk.KEYS; id++) {
            known.add(id);
        }
        bulk.ops.forEach(op -> known.add(op.assignedId));
        Map<Object, Document> byId = new TreeMap<>((a, b) -> String.valueOf(a).compareTo(String.valueOf(b)));
        List<String> generated = new ArrayList<>();
        for (Document document : collection.find()) {
            if (known.contains(document.get("_id"))) {
                assertThat(byId.put(document.get("_id"), document)).as("_id %s twice", document.get("_id")).isNull();
            } else {
                Document withoutId = new Document(document);
                withoutId.remove("_id");
                generated.add(new TreeMap<>(withoutId).toString());
            }
        }
        generated.sort(null);
        for (int i = 0; i < generated.size(); i++) {
            byId.put("generated " + i, Document.parse(new Document("content", generated.get(i)).toJson()));
        }
        return byId;
    }

    private static Map<Object, Document> initialState(RandomBulk bulk) {
        Map<Object, Document> byId = new TreeMap<>((a, b) -> String.valueOf(a).compareTo(String.valueOf(b)));
        bulk.initial.forEach(d -> byId.put(d.get("_id"), Document.parse(d.toJson())));
        return byId;
    }
}
