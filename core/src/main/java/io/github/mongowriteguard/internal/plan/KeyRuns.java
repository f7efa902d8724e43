package io.github.mongowriteguard.internal.plan;

import io.github.mongowriteguard.bulk.PlanMode;
import io.github.mongowriteguard.bulk.Round;
import io.github.mongowriteguard.bulk.WriteKind;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Step 3 of planning an {@link PlanMode#UNORDERED_ROUNDS} plan: which writes of a key travel together in one command,
 * and which round each write is in. Linear: int arrays indexed by write and by key number.
 *
 * <p>A key's <em>run</em> is a stretch of its writes, in the caller's order, of one command type (insert, update,
 * replace, delete: the driver's request types). A run travels in one command, so a key written 3,000 times with
 * {@code $inc} costs one command, not 3,000 rounds. Round k holds the k-th run of every key. This is exact because of
 * how the server runs a write command:
 * <ul>
 *   <li>mongod runs the statements of one {@code insert}, {@code update} or {@code delete} command one after another,
 *       in the order given ({@code src/mongo/db/ops/write_ops_exec.cpp}: {@code performInserts},
 *       {@code performUpdates} and {@code performDeletes} loop over the command's statements in order); an ORDERED
 *       command stops at its first write error, an UNORDERED one goes on (its {@code handleError}).</li>
 *   <li>mongos appends each write to the child batch of the shard it targets, in the command's order
 *       ({@code src/mongo/s/write_ops/batch_write_op.cpp}, {@code BatchWriteOp::targetBatch}), and a key's document is
 *       on one shard: its run reaches that shard in order, inside one child batch. An UNORDERED command is one mongos
 *       round (one child batch per shard, in parallel); an ORDERED command starts a new child batch whenever the next
 *       write targets another shard ({@code isNewBatchRequiredOrdered}) and stops after the first error
 *       ({@code batch_write_exec.cpp}, {@code write_op.cpp}).</li>
 * </ul>
 *
 * <p>Unordered request: every run is one stretch of a key's writes in the UNORDERED command of its type. Every write is
 * attempted, in the key's order, as before: the statements run in order and an error stops nothing.
 *
 * <p>Ordered request: a key's later writes must not run after one of its writes did not apply, and other keys must go
 * on. A run of one write is sent in the round's UNORDERED command, as before. A longer run is sent in an ORDERED command
 * of <em>key runs</em>: each run contiguous, the server stops at the first failing write, the writes before it are
 * applied and none after it ran; the executor then sends the rest again without that key's remaining writes. Each
 * failure inside key runs costs one more command; nothing runs that the per-key contract forbids.
 *
 * <p>What an ORDERED command of key runs costs depends on where its writes land ({@link KeyPlacement}). On a replica
 * set, or for a collection that is not sharded, it is one round trip whatever it holds, so every key written more than
 * once travels as a run: 100 keys written 10 times each are 1 command, not 10 rounds. Through mongos it costs one child
 * batch per change of target shard, in sequence ({@code isNewBatchRequiredOrdered}); the runs of one type are sent
 * grouped by shard, so when the placement is known (a collection sharded on {@code {_id: "hashed"}} or
 * {@code {_id: 1}}, from its chunks) an ORDERED command of key runs costs one mongos round per shard it reaches, and
 * otherwise about one per key. (The executor then sends each shard's runs as an ORDERED command of its own, the
 * shards' commands side by side, so that they cost one mongos round together; with the caller's session, or a
 * parallelism of 1, they stay one ORDERED command. The choice below still counts a shard per unit, as for one command:
 * it picks runs only where even one command after another gains.) The keys whose writes travel as runs are chosen to make
 * {@code (shards, or keys of unknown shard, among the keys sent as runs) + (most writes of any other key)} smallest:
 * 1,000 writes over 100 keys on 5 shards are 1 ORDERED command of 5 child batches (one per shard) instead of 10
 * UNORDERED rounds; without the placement they stay in 10 rounds (one ORDERED command would cost about 80 sequential
 * child batches). A placement that is stale (a chunk moved since it was read) costs more child batches, never
 * exactness: mongos stops an ORDERED command at its first error whichever shards its batches reach.
 */
final class KeyRuns {

    /** No key runs: shared, as nothing changes it. */
    static final int[] NONE = new int[0];

    private KeyRuns() {}

    /**
     * @param keyOf         per write, its key's number ({@link WriteFacts#keyNumber}), -1 when unkeyed
     * @param commandTypeOf per write, the ordinal of its kind's {@link WriteKind#requestType}
     * @param supersededBy per write, the later write that supersedes it under last-write-wins, or -1; null when none:
     *                     a superseded write is in no round
     */
    static PlannedBulk plan(
            WriteFacts[] facts,
            int[] keyOf,
            byte[] commandTypeOf,
            int keyCount,
            PlanOptions options,
            int[] previousSameKey,
            int firstUnkeyed,
            int @Nullable [] supersededBy) {
        int n = facts.length;
        boolean ordered = options.isOrdered();
        int[] shardOfKey = ordered ? new int[keyCount] : null;
        boolean[] asRuns = keysAsRuns(facts, keyOf, keyCount, ordered, supersededBy, options, shardOfKey);

        // runStart[i]: the first write of i's run. Round of a run: one after the round of the key's previous run.
        int[] runStart = new int[n];
        int[] runLength = new int[n]; // indexed by a run's first write
        int[] roundOf = new int[n];
        int roundCount = 0;
        for (int i = 0; i < n; i++) {
            if (supersededBy != null && supersededBy[i] >= 0) {
                runStart[i] = i; // in no round (round 0), not sent
                continue;
            }
            int previous = previousSameKey[i];
            int key = keyOf[i];
            if (previous >= 0 && asRuns[key] && commandTypeOf[previous] == commandTypeOf[i]) {
                runStart[i] = runStart[previous];
                roundOf[i] = roundOf[previous];
            } else {
                runStart[i] = i;
                roundOf[i] = previous < 0 ? 1 : roundOf[previous] + 1;
            }
            runLength[runStart[i]]++;
            roundCount = Math.max(roundCount, roundOf[i]);
        }

        // Per round: the writes sent UNORDERED (ascending), and, in an ordered request, the runs of two or more writes
        // sent as ORDERED key runs.
        int[] unorderedSizes = new int[roundCount + 1];
        int[] runSizes = new int[roundCount + 1];
        boolean[] inKeyRun = new boolean[n];
        for (int i = 0; i < n; i++) {
            if (roundOf[i] == 0) {
                continue; // superseded
            }
            inKeyRun[i] = ordered && runLength[runStart[i]] > 1;
            if (inKeyRun[i]) {
                runSizes[roundOf[i]]++;
            } else {
                unorderedSizes[roundOf[i]]++;
            }
        }
        int[][] unordered = new int[roundCount + 1][];
        int[][] runs = new int[roundCount + 1][];
        for (int r = 1; r <= roundCount; r++) {
            unordered[r] = new int[unorderedSizes[r]];
            runs[r] = runSizes[r] == 0 ? NONE : new int[runSizes[r]];
        }
        int[] filled = new int[roundCount + 1];
        for (int i = 0; i < n; i++) { // ascending i: the caller's order
            if (!inKeyRun[i] && roundOf[i] > 0) {
                int r = roundOf[i];
                unordered[r][filled[r]++] = i;
            }
        }
        if (ordered) {
            fillKeyRuns(facts, previousSameKey, runStart, roundOf, inKeyRun, runs, roundCount, shardOfKey);
        }

        List<Round> rounds = new ArrayList<>(roundCount);
        int longestRun = 0;
        for (int i = 0; i < n; i++) {
            longestRun = Math.max(longestRun, runLength[i]);
        }
        for (int r = 1; r <= roundCount; r++) {
            rounds.add(new PlannedRound(r, false, unordered[r], runs[r]));
        }
        return new PlannedBulk(
                PlanMode.UNORDERED_ROUNDS,
                reason(ordered, roundCount, longestRun, n),
                facts,
                roundOf,
                previousSameKey,
                List.copyOf(rounds),
                firstUnkeyed,
                runStart,
                supersededBy);
    }

    /**
     * Which keys travel as runs: every key of an unordered request (an UNORDERED command is one mongos round, whatever
     * it holds); in an ordered request, the keys written more than {@code h} times, for the {@code h >= 1} that makes
     * {@code (units among the keys written more than h times) + h} smallest (the highest such {@code h}), a unit being
     * the one place of a {@linkplain KeyPlacement#isSingleTarget() single target}, a known shard, or a key of unknown
     * shard. Keys written equally often are treated alike, so the choice does not depend on the keys' order.
     *
     * @param shardOfKey filled, in an ordered request with a repeated key, with each key's shard number or
     *                   {@link KeyPlacement#UNKNOWN}
     */
    private static boolean[] keysAsRuns(
            WriteFacts[] facts,
            int[] keyOf,
            int keyCount,
            boolean ordered,
            int @Nullable [] supersededBy,
            PlanOptions options,
            int @Nullable [] shardOfKey) {
        boolean[] asRuns = new boolean[keyCount];
        if (!ordered) {
            Arrays.fill(asRuns, true);
            return asRuns;
        }
        int[] writes = new int[keyCount];
        int[] firstOfKey = new int[keyCount];
        int most = 0;
        for (int i = 0; i < keyOf.length; i++) {
            int key = keyOf[i];
            if (key >= 0 && (supersededBy == null || supersededBy[i] < 0)) {
                if (writes[key] == 0) {
                    firstOfKey[key] = i;
                }
                most = Math.max(most, ++writes[key]);
            }
        }
        if (shardOfKey != null) {
            Arrays.fill(shardOfKey, KeyPlacement.UNKNOWN);
        }
        if (most < 2) {
            return asRuns; // no key repeats: nothing to gain
        }
        // Asked only now: a guarded collection reads its chunks for an ordered request that repeats a key.
        KeyPlacement placement = options.keyPlacement();
        int[][] keysWith = keysByWrites(writes, most); // keysWith[c]: the keys written exactly c times
        // Threshold h from the top down: keys above h travel as runs (cost ~1 child batch per unit), the rest take h
        // rounds. A key written once costs nothing either way (its one write is in the UNORDERED part): h stops at 1.
        boolean[] shardSeen = null;
        int units = 0;
        int bestThreshold = most;
        long bestCost = most;
        for (int h = most - 1; h >= 1; h--) {
            for (int key : keysWith[h + 1]) {
                if (placement.isSingleTarget()) {
                    units = 1;
                    continue;
                }
                int shard = placement.shardOf(facts[firstOfKey[key]].id);
                if (shardOfKey != null) {
                    shardOfKey[key] = shard;
                }
                if (shard == KeyPlacement.UNKNOWN) {
                    units++;
                } else {
                    if (shardSeen == null || shard >= shardSeen.length) {
                        shardSeen = shardSeen == null
                                ? new boolean[Math.max(16, shard + 1)]
                                : Arrays.copyOf(shardSeen, Math.max(shardSeen.length * 2, shard + 1));
                    }
                    if (!shardSeen[shard]) {
                        shardSeen[shard] = true;
                        units++;
                    }
                }
            }
            long cost = units + (long) h;
            if (cost < bestCost) {
                bestCost = cost;
                bestThreshold = h;
            }
        }
        for (int k = 0; k < keyCount; k++) {
            asRuns[k] = writes[k] > bestThreshold;
        }
        return asRuns;
    }

    /** The keys grouped by how often they are written: {@code [c]} holds the keys written exactly c times. */
    private static int[][] keysByWrites(int[] writes, int most) {
        int[] sizes = new int[most + 1];
        for (int c : writes) {
            sizes[c]++;
        }
        int[][] keysWith = new int[most + 1][];
        for (int c = 0; c <= most; c++) {
            keysWith[c] = new int[sizes[c]];
        }
        int[] filled = new int[most + 1];
        for (int key = 0; key < writes.length; key++) {
            keysWith[writes[key]][filled[writes[key]]++] = key;
        }
        return keysWith;
    }

    /**
     * Orders each round's key runs for sending: by command type in the order each type first appears in the round
     * (fewer ORDERED commands: an ORDERED bulk starts a new command at every change of type), then by shard (mongos
     * starts a new child batch at every change of shard; keys of unknown shard last), then run by run in the order of
     * their first writes, each run's writes contiguous and in the caller's order.
     */
    private static void fillKeyRuns(
            WriteFacts[] facts,
            int[] previousSameKey,
            int[] runStart,
            int[] roundOf,
            boolean[] inKeyRun,
            int[][] runs,
            int roundCount,
            int[] shardOfKey) {
        int n = facts.length;
        int[] nextInRun = new int[n];
        Arrays.fill(nextInRun, -1);
        int[] runsInRound = new int[roundCount + 1];
        for (int i = 0; i < n; i++) {
            int previous = previousSameKey[i];
            if (inKeyRun[i] && previous >= 0 && runStart[previous] == runStart[i]) {
                nextInRun[previous] = i;
            }
            if (inKeyRun[i] && runStart[i] == i) {
                runsInRound[roundOf[i]]++;
            }
        }
        // Per round, each run's first write with its sort key: type rank (order of first appearance), shard, index.
        long[][] order = new long[roundCount + 1][];
        int[][] typeRank = new int[roundCount + 1][];
        int[] typesSeen = new int[roundCount + 1];
        int[] filled = new int[roundCount + 1];
        for (int r = 1; r <= roundCount; r++) {
            order[r] = new long[runsInRound[r]];
            typeRank[r] = new int[] {-1, -1, -1, -1}; // one per WriteKind.RequestType
        }
        for (int i = 0; i < n; i++) {
            if (!inKeyRun[i] || runStart[i] != i) {
                continue;
            }
            int r = roundOf[i];
            int type = facts[i].kind.requestType().ordinal();
            if (typeRank[r][type] < 0) {
                typeRank[r][type] = typesSeen[r]++;
            }
            int shard = shardOfKey[facts[i].keyNumber];
            long shardRank = shard == KeyPlacement.UNKNOWN ? 0xFF_FFFFL : Math.min(shard, 0xFF_FFFE);
            order[r][filled[r]++] = ((long) typeRank[r][type] << 56) | (shardRank << 32) | i;
        }
        Arrays.fill(filled, 0);
        for (int r = 1; r <= roundCount; r++) {
            Arrays.sort(order[r]);
            for (long entry : order[r]) {
                for (int w = (int) (entry & 0xFFFF_FFFFL); w >= 0; w = nextInRun[w]) {
                    runs[r][filled[r]++] = w;
                }
            }
        }
    }

    static String reason(boolean ordered, int roundCount, int longestRun, int n) {
        if (roundCount == 1 && longestRun <= 1) {
            // the most common plans, one round with no key written twice: their texts built once, not per bulk
            return ordered
                    ? (n == 1 ? ORDERED_ONE_WRITE : ORDERED_ONE_ROUND)
                    : (n == 1 ? UNORDERED_ONE_WRITE : UNORDERED_ONE_ROUND);
        }
        return describe(ordered, roundCount, longestRun, n);
    }

    private static final String ORDERED_ONE_WRITE = describe(true, 1, 1, 1);
    private static final String ORDERED_ONE_ROUND = describe(true, 1, 1, 2);
    private static final String UNORDERED_ONE_WRITE = describe(false, 1, 1, 1);
    private static final String UNORDERED_ONE_ROUND = describe(false, 1, 1, 2);

    private static String describe(boolean ordered, int roundCount, int longestRun, int n) {
        StringBuilder reason = new StringBuilder()
                .append(ordered ? "ordered bulk, every write keyed by _id" : "unordered bulk")
                .append(": ")
                .append(roundCount)
                .append(" UNORDERED round")
                .append(roundCount == 1 ? "" : "s");
        if (longestRun > 1) {
            reason.append(" (writes on one _id travel together in one command, up to ")
                    .append(longestRun)
                    .append(ordered ? ", as ORDERED key runs" : "")
                    .append(')');
        } else if (roundCount > 1) {
            reason.append(" (up to ").append(roundCount).append(" writes on one _id, kept in order)");
        } else {
            reason.append(n == 1 ? " (one write)" : " (no _id written twice)");
        }
        return reason.toString();
    }
}
