package io.github.mongowriteguard.internal.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.bulk.PlanMode;
import io.github.mongowriteguard.bulk.Round;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import org.bson.Document;
import org.bson.types.Decimal128;
import org.junit.jupiter.api.Test;

/**
 * Random bulks (seeded, reproducible) against the plan's invariants, and against a small in-memory model of the
 * server: running the plan (rounds in order, each round's writes shuffled, every write sent) must end in the
 * same documents as running the bulk one write after the other, whenever that run had no failure.
 *
 * <p>Plain JUnit with a seeded {@link Random}: a failure names its seed, and the run is reproducible from it. (jqwik
 * is not used: see the commit that added this test.)
 */
class PlanInvariantsTest {

    private static final long BASE_SEED = 20_260_430L;
    private static final int BULKS = 3_000;

    private enum Kind {
        INSERT,
        INSERT_WITHOUT_ID,
        REPLACE,
        UPDATE,
        DELETE,
        UPDATE_MANY,
        DELETE_MANY
    }

    /** One generated write: what the model is, and what the test knows about it independently of the planner. */
    private static final class Spec {
        final Kind kind;
        final Integer key; // the _id as a whole number; null for unkeyed writes and inserts without _id
        final String condition; // extra filter condition on "sk", or null
        final boolean upsert;
        final String newSk; // value written to "sk" (null: an update that does not set it)
        final WriteModel<Document> model;

        Spec(Kind kind, Integer key, String condition, boolean upsert, String newSk, WriteModel<Document> model) {
            this.kind = kind;
            this.key = key;
            this.condition = condition;
            this.upsert = upsert;
            this.newSk = newSk;
            this.model = model;
        }
    }

    @Test
    void randomBulks_keepEveryInvariant_andTheSequentialResult() {
        int comparedWithSequentialRun = 0;
        for (int run = 0; run < BULKS; run++) {
            long seed = BASE_SEED + run;
            Random random = new Random(seed);
            List<Spec> specs = randomBulk(random);
            boolean ordered = random.nextBoolean();
            boolean strict = random.nextInt(10) == 0;
            PlanOptions options =
                    PlanOptions.builder().ordered(ordered).strictOrdered(strict).build();
            List<WriteModel<Document>> models =
                    specs.stream().map(spec -> spec.model).toList();

            PlannedBulk plan = Models.planner().plan(models, options);

            String context = "seed " + seed + ", " + options + ", " + plan;
            checkStructure(specs, options, plan, context);
            if (checkAgainstSequentialRun(specs, options, plan, random, context)) {
                comparedWithSequentialRun++;
            }
        }
        // The semantic check must not be vacuous: many random bulks run without a failure.
        assertThat(comparedWithSequentialRun).isGreaterThan(BULKS / 5);
    }

    @Test
    void largeBulk_keepsEveryInvariant() {
        Random random = new Random(BASE_SEED);
        List<Spec> specs = new ArrayList<>();
        Set<Integer> inserted = new HashSet<>();
        for (int i = 0; i < 100_000; i++) {
            int key = random.nextInt(20_000);
            if (random.nextInt(4) == 0 && inserted.add(key)) {
                specs.add(new Spec(
                        Kind.INSERT,
                        key,
                        null,
                        false,
                        "a",
                        new InsertOneModel<>(new Document("_id", key).append("sk", "a"))));
            } else if (random.nextInt(10) == 0) {
                specs.add(
                        new Spec(Kind.DELETE, key, null, false, null, new DeleteOneModel<>(new Document("_id", key))));
                inserted.remove(key);
            } else {
                specs.add(new Spec(
                        Kind.UPDATE,
                        key,
                        null,
                        false,
                        null,
                        new UpdateOneModel<>(
                                new Document("_id", (long) key), new Document("$inc", new Document("n", 1)))));
            }
        }
        List<WriteModel<Document>> models =
                specs.stream().map(spec -> spec.model).toList();

        PlannedBulk plan = Models.planner().plan(models, PlanOptions.ordered());

        checkStructure(specs, PlanOptions.ordered(), plan, plan.toString());
        assertThat(plan.mode()).isEqualTo(PlanMode.UNORDERED_ROUNDS);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Generation

    private static List<Spec> randomBulk(Random random) {
        int keys = 1 + random.nextInt(8);
        int size = 1 + random.nextInt(40);
        boolean withUnkeyed = random.nextInt(5) == 0;
        Map<Integer, Boolean> insertedSinceDelete = new HashMap<>();
        List<Spec> specs = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            int key = random.nextInt(keys);
            String condition = random.nextInt(5) == 0 ? sk(random) : null;
            Object id = number(random, key);
            Document filter = new Document("_id", random.nextInt(6) == 0 ? new Document("$eq", id) : id);
            if (condition != null) {
                filter.append("sk", condition);
            }
            int pick = random.nextInt(withUnkeyed ? 100 : 92);
            Kind kind = pick < 18
                    ? Kind.INSERT
                    : pick < 24
                            ? Kind.INSERT_WITHOUT_ID
                            : pick < 46
                                    ? Kind.REPLACE
                                    : pick < 72
                                            ? Kind.UPDATE
                                            : pick < 92 ? Kind.DELETE : pick < 96 ? Kind.UPDATE_MANY : Kind.DELETE_MANY;
            if (kind == Kind.INSERT && insertedSinceDelete.getOrDefault(key, false)) {
                kind = Kind.REPLACE; // a second insert of the key would be rejected; that rule has its own test
            }
            String newSk = sk(random);
            boolean upsert = random.nextBoolean();
            switch (kind) {
                case INSERT:
                    insertedSinceDelete.put(key, true);
                    specs.add(new Spec(
                            kind,
                            key,
                            null,
                            false,
                            newSk,
                            new InsertOneModel<>(new Document("_id", number(random, key))
                                    .append("sk", newSk)
                                    .append("n", 0))));
                    break;
                case INSERT_WITHOUT_ID:
                    specs.add(new Spec(
                            kind,
                            null,
                            null,
                            false,
                            newSk,
                            new InsertOneModel<>(new Document("sk", newSk).append("n", 0))));
                    break;
                case REPLACE:
                    specs.add(new Spec(
                            kind,
                            key,
                            condition,
                            upsert,
                            newSk,
                            new ReplaceOneModel<>(
                                    filter,
                                    new Document("sk", newSk).append("n", 0),
                                    new ReplaceOptions().upsert(upsert))));
                    break;
                case UPDATE: {
                    boolean setsSk = random.nextBoolean();
                    Document update = new Document("$inc", new Document("n", 1));
                    if (setsSk) {
                        update.append("$set", new Document("sk", newSk));
                    }
                    specs.add(new Spec(
                            kind,
                            key,
                            condition,
                            upsert,
                            setsSk ? newSk : null,
                            new UpdateOneModel<>(filter, update, new UpdateOptions().upsert(upsert))));
                    break;
                }
                case DELETE:
                    insertedSinceDelete.put(key, false);
                    specs.add(new Spec(kind, key, condition, false, null, new DeleteOneModel<>(filter)));
                    break;
                case UPDATE_MANY:
                    specs.add(new Spec(
                            kind,
                            null,
                            newSk,
                            false,
                            null,
                            new UpdateManyModel<>(
                                    new Document("sk", newSk), new Document("$inc", new Document("n", 1)))));
                    break;
                case DELETE_MANY:
                    specs.add(
                            new Spec(kind, null, newSk, false, null, new DeleteManyModel<>(new Document("sk", newSk))));
                    break;
                default:
                    throw new AssertionError(kind);
            }
        }
        return specs;
    }

    private static String sk(Random random) {
        return random.nextBoolean() ? "eu" : "us";
    }

    /** The same whole number as int, long, double or Decimal128: one key for the server. */
    private static Object number(Random random, int key) {
        switch (random.nextInt(4)) {
            case 0:
                return key;
            case 1:
                return (long) key;
            case 2:
                return (double) key;
            default:
                return new Decimal128(new BigDecimal(key).setScale(random.nextInt(3)));
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Invariants of the plan's structure

    private static void checkStructure(List<Spec> specs, PlanOptions options, PlannedBulk plan, String context) {
        int n = specs.size();
        boolean anyUnkeyed =
                specs.stream().anyMatch(spec -> spec.kind == Kind.UPDATE_MANY || spec.kind == Kind.DELETE_MANY);
        PlanMode expectedMode = options.isOrdered() && options.isStrictOrdered()
                ? PlanMode.STRICT_ORDERED
                : options.isOrdered() && anyUnkeyed ? PlanMode.PRESERVE_ORDER : PlanMode.UNORDERED_ROUNDS;
        assertThat(plan.mode()).as(context).isEqualTo(expectedMode);
        assertThat(plan.size()).as(context).isEqualTo(n);

        // Every index exactly once, in one round.
        int[] seen = new int[n];
        for (Round round : plan.rounds()) {
            List<Integer> indices = round.indices();
            assertThat(indices).as(context).isSorted();
            for (int index : indices) {
                seen[index]++;
                assertThat(plan.roundOf(index)).as(context).isEqualTo(round.number());
            }
        }
        for (int i = 0; i < n; i++) {
            assertThat(seen[i]).as(context + ": index " + i).isEqualTo(1);
        }

        // Writes of each key, in index order.
        Map<Integer, List<Integer>> writesByKey = new HashMap<>();
        for (int i = 0; i < n; i++) {
            if (specs.get(i).key != null) {
                writesByKey
                        .computeIfAbsent(specs.get(i).key, k -> new ArrayList<>())
                        .add(i);
            }
        }

        if (expectedMode != PlanMode.UNORDERED_ROUNDS) {
            assertThat(plan.rounds()).as(context).hasSize(1);
            assertThat(plan.rounds().get(0).isOrdered()).as(context).isTrue();
            for (List<Integer> writes : writesByKey.values()) {
                for (int position = 0; position < writes.size(); position++) {
                    assertThat(plan.previousOnKey(writes.get(position)))
                            .as(context)
                            .isEqualTo(position == 0 ? -1 : writes.get(position - 1));
                }
            }
            return;
        }

        // Per-key order: a key's writes in index order; a write shares its previous write's round (and command) only
        // when both are of one command type and the key travels in runs; otherwise it is one round later.
        Set<Integer> keysInRuns = keysInRuns(writesByKey, options.isOrdered());
        int rounds = 0;
        for (Map.Entry<Integer, List<Integer>> key : writesByKey.entrySet()) {
            List<Integer> writes = key.getValue();
            int expectedRound = 1;
            for (int position = 0; position < writes.size(); position++) {
                int index = writes.get(position);
                if (position > 0
                        && !(keysInRuns.contains(key.getKey())
                                && commandType(specs.get(index).kind)
                                        == commandType(specs.get(writes.get(position - 1)).kind))) {
                    expectedRound++;
                }
                assertThat(plan.roundOf(index)).as(context + ": index " + index).isEqualTo(expectedRound);
                assertThat(plan.previousOnKey(index))
                        .as(context + ": index " + index)
                        .isEqualTo(position == 0 ? -1 : writes.get(position - 1));
            }
            rounds = Math.max(rounds, expectedRound);
        }
        // Key runs: only in ordered requests; each run contiguous, in the caller's order, and at least two writes.
        for (Round round : plan.rounds()) {
            List<Integer> keyRuns = round.keyRuns();
            if (!options.isOrdered()) {
                assertThat(keyRuns).as(context).isEmpty();
            }
            Set<Integer> finished = new HashSet<>();
            for (int position = 0; position < keyRuns.size(); position++) {
                Integer key = specs.get(keyRuns.get(position)).key;
                assertThat(key).as(context).isNotNull();
                boolean continues = position > 0 && key.equals(specs.get(keyRuns.get(position - 1)).key);
                if (continues) {
                    assertThat(keyRuns.get(position)).as(context).isGreaterThan(keyRuns.get(position - 1));
                } else {
                    assertThat(finished.add(key))
                            .as(context + ": one run per key and round")
                            .isTrue();
                    boolean longerThanOne =
                            position + 1 < keyRuns.size() && key.equals(specs.get(keyRuns.get(position + 1)).key);
                    assertThat(longerThanOne)
                            .as(context + ": a key run has two writes or more")
                            .isTrue();
                }
            }
        }
        int maxSurvivingOnOneKey = rounds;
        for (int i = 0; i < n; i++) {
            if (specs.get(i).key == null) {
                assertThat(plan.roundOf(i)).as(context + ": unkeyed index " + i).isEqualTo(1);
                assertThat(plan.previousOnKey(i)).as(context).isEqualTo(-1);
            }
        }
        boolean anyWithoutKey = specs.stream().anyMatch(spec -> spec.key == null);
        int expectedRounds = Math.max(maxSurvivingOnOneKey, anyWithoutKey ? 1 : 0);
        assertThat(plan.rounds()).as(context).hasSize(expectedRounds);
        assertThat(plan.rounds())
                .as(context)
                .allSatisfy(round -> assertThat(round.isOrdered()).isFalse());
    }

    /** The driver's request type, the command a write travels in: insert, update, replace, delete. */
    private static int commandType(Kind kind) {
        switch (kind) {
            case INSERT:
            case INSERT_WITHOUT_ID:
                return 0;
            case UPDATE:
            case UPDATE_MANY:
                return 1;
            case REPLACE:
                return 2;
            default:
                return 3;
        }
    }

    /**
     * The keys whose writes travel in runs, by the rule of the package documentation: every key of an unordered
     * request; in an ordered one, the keys written more than h times, h >= 1 minimising (such keys) + h, the
     * highest h on a tie.
     */
    private static Set<Integer> keysInRuns(Map<Integer, List<Integer>> writesByKey, boolean ordered) {
        if (!ordered) {
            return writesByKey.keySet();
        }
        int most = writesByKey.values().stream().mapToInt(List::size).max().orElse(0);
        int best = most;
        long bestCost = most;
        for (int h = most - 1; h >= 1; h--) {
            int threshold = h;
            long cost = h
                    + writesByKey.values().stream()
                            .filter(w -> w.size() > threshold)
                            .count();
            if (cost < bestCost) {
                bestCost = cost;
                best = h;
            }
        }
        int threshold = best;
        Set<Integer> keys = new HashSet<>();
        writesByKey.forEach((key, writes) -> {
            if (writes.size() > threshold && most >= 2) {
                keys.add(key);
            }
        });
        return keys;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // The same result as running the bulk in order

    /** @return whether the comparison applied (the sequential run had no failure, and order was the caller's concern) */
    private static boolean checkAgainstSequentialRun(
            List<Spec> specs, PlanOptions options, PlannedBulk plan, Random random, String context) {
        boolean anyUnkeyed =
                specs.stream().anyMatch(spec -> spec.kind == Kind.UPDATE_MANY || spec.kind == Kind.DELETE_MANY);
        if (!options.isOrdered() && anyUnkeyed) {
            return false; // the caller allowed any order around its unkeyed writes: there is no single expected result
        }
        Map<Object, Doc> initial = randomInitialState(random);

        Map<Object, Doc> sequential = copy(initial);
        for (Spec spec : specs) {
            if (!apply(spec, sequential)) {
                return false; // ORDERED would stop here; the guard's semantics are per key by design
            }
        }

        Map<Object, Doc> guarded = copy(initial);
        for (Round round : plan.rounds()) {
            List<Integer> order = new ArrayList<>();
            if (round.isOrdered()) {
                order.addAll(round.indices());
            } else {
                // Writes of one UNORDERED round may run in any order, except a key's run, which is in one command.
                Map<Object, List<Integer>> runs = new java.util.LinkedHashMap<>();
                for (int index : round.unorderedPart()) {
                    Object key = specs.get(index).key == null ? "unkeyed " + index : specs.get(index).key;
                    runs.computeIfAbsent(key, k -> new ArrayList<>()).add(index);
                }
                List<List<Integer>> shuffled = new ArrayList<>(runs.values());
                Collections.shuffle(shuffled, random);
                shuffled.forEach(order::addAll);
                order.addAll(round.keyRuns()); // ORDERED, as given
            }
            for (int index : order) {
                if (!apply(specs.get(index), guarded)) {
                    fail(context + ": write " + index + " failed under the plan but not in the sequential run");
                }
            }
        }
        assertThat(guarded).as(context).isEqualTo(sequential);
        return true;
    }

    /** A stored document: {sk, n}. */
    private static final class Doc {
        final String sk;
        final int n;

        Doc(String sk, int n) {
            this.sk = sk;
            this.n = n;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Doc && Objects.equals(((Doc) o).sk, sk) && ((Doc) o).n == n;
        }

        @Override
        public int hashCode() {
            return Objects.hash(sk, n);
        }

        @Override
        public String toString() {
            return "{sk=" + sk + ", n=" + n + '}';
        }
    }

    private static Map<Object, Doc> randomInitialState(Random random) {
        Map<Object, Doc> state = new HashMap<>();
        for (int key = 0; key < 8; key++) {
            if (random.nextBoolean()) {
                state.put(key, new Doc(sk(random), random.nextInt(3)));
            }
        }
        return state;
    }

    private static Map<Object, Doc> copy(Map<Object, Doc> state) {
        return new HashMap<>(state);
    }

    /** The server's behaviour for the writes the generator makes; false when the write fails. */
    private static boolean apply(Spec spec, Map<Object, Doc> state) {
        switch (spec.kind) {
            case INSERT:
                return state.putIfAbsent(spec.key, new Doc(spec.newSk, 0)) == null;
            case INSERT_WITHOUT_ID: {
                Object id =
                        ((InsertOneModel<Document>) spec.model).getDocument().get("_id"); // assigned by the planner
                return state.putIfAbsent(id, new Doc(spec.newSk, 0)) == null;
            }
            case REPLACE: {
                Doc current = state.get(spec.key);
                if (matches(current, spec.condition)) {
                    state.put(spec.key, new Doc(spec.newSk, 0));
                } else if (spec.upsert) {
                    if (current != null) {
                        return false; // the upsert inserts an existing _id: duplicate key
                    }
                    state.put(spec.key, new Doc(spec.newSk, 0));
                }
                return true;
            }
            case UPDATE: {
                Doc current = state.get(spec.key);
                if (matches(current, spec.condition)) {
                    state.put(spec.key, new Doc(spec.newSk != null ? spec.newSk : current.sk, current.n + 1));
                } else if (spec.upsert) {
                    if (current != null) {
                        return false;
                    }
                    String sk =
                            spec.newSk != null ? spec.newSk : spec.condition; // $set wins over the filter's equality
                    state.put(spec.key, new Doc(sk, 1));
                }
                return true;
            }
            case DELETE:
                if (matches(state.get(spec.key), spec.condition)) {
                    state.remove(spec.key);
                }
                return true;
            case UPDATE_MANY:
                state.replaceAll((id, doc) -> spec.condition.equals(doc.sk) ? new Doc(doc.sk, doc.n + 1) : doc);
                return true;
            case DELETE_MANY:
                state.values().removeIf(doc -> spec.condition.equals(doc.sk));
                return true;
            default:
                throw new AssertionError(spec.kind);
        }
    }

    private static boolean matches(Doc current, String condition) {
        return current != null && (condition == null || condition.equals(current.sk));
    }
}
