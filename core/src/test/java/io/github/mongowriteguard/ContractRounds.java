package io.github.mongowriteguard;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.bson.BsonValue;

/**
 * The rounds of the contract for a {@link DifferentialBulk}, computed from the contract alone (never from the planner):
 * a key's <em>run</em> is a stretch of its writes, in the caller's order, of one driver request type (insert, update,
 * replace, delete), which travels in one command; round k holds the k-th run of every key, unkeyed writes are in
 * round 1.
 * <ul>
 *   <li>Unordered bulk: every key travels in runs; a round is one driver UNORDERED bulk of its writes.</li>
 *   <li>Ordered bulk, every write keyed: the keys written more than h times travel in runs, for the h &gt;= 1 that
 *       makes (units among such keys) + h smallest (the highest on a tie), a unit being the one place of a replica set,
 *       a shard, or a key whose shard the guard cannot compute (an {@code _id} that is not a number other than
 *       Decimal128, a string or an ObjectId); other keys one write per round. A round's runs of one write go in one
 *       UNORDERED bulk; its longer runs ("key runs") in ORDERED bulks, ordered by request type in the order the types
 *       first appear, then by shard name (keys of unknown shard last), then run by run by their first write.</li>
 * </ul>
 */
final class ContractRounds {

    /** One round: the writes sent as one unordered bulk (ascending), and the key runs in sending order. */
    record Parts(List<Integer> together, List<Integer> keyRuns) {}

    private ContractRounds() {}

    /** The rounds on a replica set, where every write reaches one place. */
    static List<Parts> of(DifferentialBulk bulk) {
        return of(bulk, null);
    }

    /**
     * The rounds on a sharded cluster, {@code shardOf} giving the shard of an {@code _id} (from the emulator's chunk
     * map, never from the guard); null for a replica set.
     */
    static List<Parts> of(DifferentialBulk bulk, Function<BsonValue, String> shardOf) {
        int n = bulk.ops.size();
        Map<String, List<Integer>> byKey = bulk.writesByKey();
        boolean ordered = bulk.ordered;
        Map<String, String> shardOfKey = new java.util.HashMap<>(); // null value: unknown shard
        if (shardOf != null) {
            byKey.forEach((key, writes) -> {
                BsonValue id = idOf(bulk.ops.get(writes.get(0)));
                shardOfKey.put(key, id != null && guardComputesShardOf(id) ? shardOf.apply(id) : null);
            });
        }
        int threshold = ordered ? threshold(byKey, shardOf == null, shardOfKey) : 0;

        int[] round = new int[n];
        int[] runStart = new int[n];
        int[] runLength = new int[n];
        for (int i = 0; i < n; i++) {
            round[i] = 1;
            runStart[i] = i;
        }
        for (List<Integer> writes : byKey.values()) {
            boolean asRuns = !ordered || writes.size() > threshold;
            for (int position = 1; position < writes.size(); position++) {
                int index = writes.get(position);
                int previous = writes.get(position - 1);
                if (asRuns && type(bulk, index) == type(bulk, previous)) {
                    round[index] = round[previous];
                    runStart[index] = runStart[previous];
                } else {
                    round[index] = round[previous] + 1;
                }
            }
        }
        int rounds = 0;
        for (int i = 0; i < n; i++) {
            runLength[runStart[i]]++;
            rounds = Math.max(rounds, round[i]);
        }
        List<Parts> parts = new ArrayList<>();
        for (int r = 1; r <= rounds; r++) {
            List<Integer> together = new ArrayList<>();
            Map<Integer, List<Integer>> runsByType = new LinkedHashMap<>();
            for (int i = 0; i < n; i++) {
                if (round[i] != r) {
                    continue;
                }
                if (ordered && runLength[runStart[i]] > 1) {
                    if (runStart[i] == i) {
                        List<Integer> run = runsByType.computeIfAbsent(type(bulk, i), t -> new ArrayList<>());
                        for (int j = i; j < n; j++) {
                            if (runStart[j] == i) {
                                run.add(j);
                            }
                        }
                    }
                } else {
                    together.add(i);
                }
            }
            List<Integer> keyRuns = new ArrayList<>();
            for (List<Integer> runsOfType : runsByType.values()) {
                // by shard name, unknown last; stable: run by run by first write within a shard
                List<List<Integer>> runs = new ArrayList<>();
                for (int position = 0; position < runsOfType.size(); ) {
                    int start = runsOfType.get(position);
                    List<Integer> run = new ArrayList<>();
                    while (position < runsOfType.size() && runStart[runsOfType.get(position)] == start) {
                        run.add(runsOfType.get(position++));
                    }
                    runs.add(run);
                }
                runs.sort(java.util.Comparator.comparing(
                        run -> shardOfKey.get(bulk.ops.get(run.get(0)).key()),
                        java.util.Comparator.nullsLast(java.util.Comparator.naturalOrder())));
                runs.forEach(keyRuns::addAll);
            }
            parts.add(new Parts(together, keyRuns));
        }
        return parts;
    }

    private static int threshold(Map<String, List<Integer>> byKey, boolean onePlace, Map<String, String> shardOfKey) {
        int most = byKey.values().stream().mapToInt(List::size).max().orElse(0);
        int best = most;
        long bestCost = most;
        for (int h = most - 1; h >= 1; h--) {
            int limit = h;
            java.util.Set<Object> units = new java.util.HashSet<>();
            byKey.forEach((key, writes) -> {
                if (writes.size() > limit) {
                    String shard = shardOfKey.get(key);
                    units.add(onePlace ? "one place" : shard == null ? "key " + key : "shard " + shard);
                }
            });
            long cost = h + units.size();
            if (cost < bestCost) {
                bestCost = cost;
                best = h;
            }
        }
        return best;
    }

    /** The _id types whose shard the guard computes (README: numbers other than Decimal128, strings, ObjectIds). */
    private static boolean guardComputesShardOf(BsonValue id) {
        return id.isInt32() || id.isInt64() || id.isDouble() || id.isString() || id.isObjectId();
    }

    /** The _id a keyed write names, as {@link DifferentialBulk.Op#key()} reads it. */
    private static BsonValue idOf(DifferentialBulk.Op op) {
        if (op.kind == DifferentialBulk.Kind.INSERT) {
            return op.document.get("_id");
        }
        if (op.kind == DifferentialBulk.Kind.INSERT_WITHOUT_ID) {
            return op.assignedId;
        }
        BsonValue id = op.filter.get("_id");
        return id != null && id.isDocument() ? id.asDocument().get("$eq") : id;
    }

    private static int type(DifferentialBulk bulk, int index) {
        return switch (bulk.ops.get(index).kind) {
            case INSERT, INSERT_WITHOUT_ID -> 0;
            case UPDATE_ONE, UPDATE_MANY -> 1;
            case REPLACE_ONE -> 2;
            default -> 3;
        };
    }
}
