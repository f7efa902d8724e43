package io.github.mongowriteguard;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The rounds of the contract for a {@link DifferentialBulk}, computed from the contract alone (never from the planner):
 * a key's <em>run</em> is a stretch of its writes, in the caller's order, of one driver request type (insert, update,
 * replace, delete), which travels in one command; round k holds the k-th run of every key, unkeyed writes are in
 * round 1.
 * <ul>
 *   <li>Unordered bulk: every key travels in runs; a round is one driver UNORDERED bulk of its writes.</li>
 *   <li>Ordered bulk, every write keyed: the keys written more than h times travel in runs, for the h &gt;= 1 that
 *       makes (such keys) + h smallest (the highest on a tie); other keys one write per round. A round's runs of one
 *       write go in one UNORDERED bulk; its longer runs ("key runs") in ORDERED bulks, ordered by request type in the
 *       order the types first appear, then run by run by their first write.</li>
 * </ul>
 */
final class ContractRounds {

    /** One round: the writes sent as one unordered bulk (ascending), and the key runs in sending order. */
    record Parts(List<Integer> together, List<Integer> keyRuns) {}

    private ContractRounds() {}

    static List<Parts> of(DifferentialBulk bulk) {
        int n = bulk.ops.size();
        Map<String, List<Integer>> byKey = bulk.writesByKey();
        boolean ordered = bulk.ordered;
        int threshold = ordered ? threshold(byKey) : 0;

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
            runsByType.values().forEach(keyRuns::addAll);
            parts.add(new Parts(together, keyRuns));
        }
        return parts;
    }

    private static int threshold(Map<String, List<Integer>> byKey) {
        int most = byKey.values().stream().mapToInt(List::size).max().orElse(0);
        int best = most;
        long bestCost = most;
        for (int h = most - 1; h >= 1; h--) {
            int limit = h;
            long cost =
                    h + byKey.values().stream().filter(w -> w.size() > limit).count();
            if (cost < bestCost) {
                bestCost = cost;
                best = h;
            }
        }
        return best;
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
