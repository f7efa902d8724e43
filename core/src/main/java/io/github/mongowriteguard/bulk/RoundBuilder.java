package io.github.mongowriteguard.bulk;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Step 3 of planning: from the checked writes to rounds. Linear: arrays indexed by key number ({@link KeyTable}),
 * and a link from each keyed write to the previous write on its key.
 */
final class RoundBuilder {

    private RoundBuilder() {}

    static BulkPlan build(WriteFacts[] facts, int keyCount, PlanOptions options) {
        int n = facts.length;
        if (n == 0) {
            return new BulkPlan(
                    PlanMode.UNORDERED_ROUNDS,
                    "empty bulk: nothing to send",
                    facts,
                    new int[0],
                    new int[0],
                    List.of(),
                    -1);
        }

        // previousSameKey[i]: the previous write on i's key, -1 if none; lastOfKey[k]: key k's last write.
        int[] previousSameKey = new int[n];
        int[] lastOfKey = new int[keyCount];
        Arrays.fill(lastOfKey, -1);
        int firstUnkeyed = -1;
        int unkeyedCount = 0;
        for (int i = 0; i < n; i++) {
            int key = facts[i].keyNumber;
            if (key < 0) {
                previousSameKey[i] = -1;
                unkeyedCount++;
                if (firstUnkeyed < 0) {
                    firstUnkeyed = i;
                }
                continue;
            }
            previousSameKey[i] = lastOfKey[key];
            lastOfKey[key] = i;
        }

        if (options.isOrdered() && options.isStrictOrdered()) {
            return asGiven(
                    PlanMode.STRICT_ORDERED,
                    "strictOrdered: the ordered bulk runs as the driver's ORDERED bulk," + " as given; "
                            + orderedCost(n),
                    facts,
                    previousSameKey,
                    firstUnkeyed);
        }
        if (options.isOrdered() && unkeyedCount > 0) {
            // An unkeyed write may touch any document, including keyed ones, and its effect can depend on what ran
            // before it (an upsert that finds nothing): no reordering around it can be proven safe.
            WriteFacts first = facts[firstUnkeyed];
            return asGiven(
                    PlanMode.PRESERVE_ORDER,
                    "ordered bulk with " + unkeyedCount + " unkeyed write"
                            + (unkeyedCount == 1 ? "" : "s") + " (first: index " + firstUnkeyed + ", "
                            + first.kind.modelName()
                            + ", which " + first.unkeyedExplanation()
                            + "): kept in the caller's order as one ORDERED round; "
                            + orderedCost(n)
                            + "; make the bulk unordered, or key its writes by _id, to run it in rounds",
                    facts,
                    previousSameKey,
                    firstUnkeyed);
        }
        return inRounds(facts, options, previousSameKey, firstUnkeyed);
    }

    private static BulkPlan asGiven(
            PlanMode mode, String reason, WriteFacts[] facts, int[] previousSameKey, int firstUnkeyed) {
        int n = facts.length;
        int[] roundOf = new int[n];
        Arrays.fill(roundOf, 1);
        int[] all = new int[n];
        Arrays.setAll(all, i -> i);
        return new BulkPlan(
                mode, reason, facts, roundOf, previousSameKey, List.of(new Round(1, true, all)), firstUnkeyed);
    }

    private static BulkPlan inRounds(WriteFacts[] facts, PlanOptions options, int[] previousSameKey, int firstUnkeyed) {
        int n = facts.length;

        // Round of each write: one after the previous write on its key. Unkeyed writes, and first writes of a key, go
        // to round 1. Every write is sent: a later write on a key never makes an earlier one unnecessary, because only
        // sending it tells whether it fails (which the driver reports, and which stops its key in an ordered bulk).
        int[] roundOf = new int[n];
        int roundCount = 0;
        for (int i = 0; i < n; i++) {
            int previous = previousSameKey[i];
            roundOf[i] = previous < 0 ? 1 : roundOf[previous] + 1;
            roundCount = Math.max(roundCount, roundOf[i]);
        }

        int[] sizes = new int[roundCount + 1];
        for (int i = 0; i < n; i++) {
            sizes[roundOf[i]]++;
        }
        int[][] members = new int[roundCount + 1][];
        for (int r = 1; r <= roundCount; r++) {
            members[r] = new int[sizes[r]];
        }
        int[] filled = new int[roundCount + 1];
        for (int i = 0; i < n; i++) { // ascending i: each round lists its writes in the caller's order
            int r = roundOf[i];
            members[r][filled[r]++] = i;
        }
        List<Round> rounds = new ArrayList<>(roundCount);
        for (int r = 1; r <= roundCount; r++) {
            rounds.add(new Round(r, false, members[r]));
        }

        StringBuilder reason = new StringBuilder()
                .append(options.isOrdered() ? "ordered bulk, every write keyed by _id" : "unordered bulk")
                .append(": ")
                .append(roundCount)
                .append(" UNORDERED round")
                .append(roundCount == 1 ? "" : "s");
        if (roundCount > 1) {
            reason.append(" (up to ").append(roundCount).append(" writes on one _id, kept in order)");
        } else {
            reason.append(" (no _id written twice)");
        }
        return new BulkPlan(
                PlanMode.UNORDERED_ROUNDS,
                reason.toString(),
                facts,
                roundOf,
                previousSameKey,
                List.copyOf(rounds),
                firstUnkeyed);
    }

    private static String orderedCost(int n) {
        return String.format(
                "an ORDERED bulk costs about 1 + (n - 1)(1 - 1/S) mongos-to-shard round trips on S shards"
                        + " with a hashed key: %,.0f for these %,d writes on 5 shards, where an UNORDERED round costs 1",
                BulkPlan.orderedRoundTrips(n, 5), n);
    }
}
