package io.github.mongowriteguard.internal.plan;

import io.github.mongowriteguard.bulk.PlanMode;
import java.util.Arrays;
import java.util.List;

/**
 * Step 3 of planning: from the checked writes to rounds. Linear: arrays indexed by key number ({@link KeyTable}),
 * and a link from each keyed write to the previous write on its key.
 */
final class RoundBuilder {

    private RoundBuilder() {}

    static PlannedBulk build(WriteFacts[] facts, int keyCount, PlanOptions options) {
        int n = facts.length;
        if (n == 0) {
            return new PlannedBulk(
                    PlanMode.UNORDERED_ROUNDS,
                    "empty bulk: nothing to send",
                    facts,
                    new int[0],
                    new int[0],
                    List.of(),
                    -1,
                    null,
                    null);
        }

        // previousSameKey[i]: the previous write on i's key, -1 if none; lastOfKey[k]: key k's last write.
        int[] previousSameKey = new int[n];
        int[] lastOfKey = new int[keyCount];
        Arrays.fill(lastOfKey, -1);
        int firstUnkeyed = -1;
        int unkeyedCount = 0;
        boolean keyRepeats = false;
        // Each write's key and command type, read once into arrays that the rounds below read again and again: each
        // write's facts are an object of their own, and reading 100,000 of them takes a cache miss each.
        int[] keyOf = new int[n];
        byte[] commandTypeOf = new byte[n];
        for (int i = 0; i < n; i++) {
            WriteFacts write = facts[i];
            int key = write.keyNumber;
            keyOf[i] = key;
            commandTypeOf[i] = (byte) write.kind.requestType().ordinal();
            if (key < 0) {
                previousSameKey[i] = -1;
                unkeyedCount++;
                if (firstUnkeyed < 0) {
                    firstUnkeyed = i;
                }
                continue;
            }
            previousSameKey[i] = lastOfKey[key];
            keyRepeats |= previousSameKey[i] >= 0;
            lastOfKey[key] = i;
        }

        if (options.isOrdered() && options.isStrictOrdered()) {
            return oneRound(
                    PlanMode.STRICT_ORDERED,
                    true,
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
            return oneRound(
                    PlanMode.PRESERVE_ORDER,
                    true,
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
        if (!keyRepeats) {
            return noKeyRepeats(facts, previousSameKey, firstUnkeyed, options.isOrdered());
        }
        int[] supersededBy = options.isLastWriteWins() ? LastWriteWins.supersededBy(facts, keyCount) : null;
        if (supersededBy != null) {
            // A superseded write is not sent: the next write on its key follows the one before it.
            Arrays.fill(lastOfKey, -1);
            for (int i = 0; i < n; i++) {
                int key = keyOf[i];
                if (key < 0 || supersededBy[i] >= 0) {
                    previousSameKey[i] = -1;
                    continue;
                }
                previousSameKey[i] = lastOfKey[key];
                lastOfKey[key] = i;
            }
        }
        return KeyRuns.plan(
                facts, keyOf, commandTypeOf, keyCount, options, previousSameKey, firstUnkeyed, supersededBy);
    }

    /**
     * No key written twice (a bulk of one write, or of distinct keys; unkeyed writes only in an unordered request): the
     * plan {@link KeyRuns#plan} makes of it, one UNORDERED round of every write in the caller's order and no key runs
     * (no write superseded either), without the arrays that find runs and rounds.
     */
    private static PlannedBulk noKeyRepeats(
            WriteFacts[] facts, int[] previousSameKey, int firstUnkeyed, boolean ordered) {
        return oneRound(
                PlanMode.UNORDERED_ROUNDS,
                false,
                KeyRuns.reason(ordered, 1, 1, facts.length),
                facts,
                previousSameKey,
                firstUnkeyed);
    }

    /** Every write in round 1, in the caller's order: sent as given when {@code ordered}, else UNORDERED. */
    private static PlannedBulk oneRound(
            PlanMode mode,
            boolean ordered,
            String reason,
            WriteFacts[] facts,
            int[] previousSameKey,
            int firstUnkeyed) {
        int n = facts.length;
        int[] roundOf = new int[n];
        Arrays.fill(roundOf, 1);
        int[] all = new int[n];
        for (int i = 0; i < n; i++) {
            all[i] = i;
        }
        return new PlannedBulk(
                mode,
                reason,
                facts,
                roundOf,
                previousSameKey,
                List.of(new PlannedRound(1, ordered, all)),
                firstUnkeyed,
                null,
                null);
    }

    private static String orderedCost(int n) {
        return String.format(
                "an ORDERED bulk costs about 1 + (n - 1)(1 - 1/S) mongos-to-shard round trips on S shards"
                        + " with a hashed key: %,.0f for these %,d writes on 5 shards, where an UNORDERED round costs 1",
                RoundTripEstimate.ordered(n, 5), n);
    }
}
