package io.github.mongowriteguard.testkit.sharding;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * How mongos split one client write command ({@code insert}, {@code update} or {@code delete}) into child
 * batches: the server-side truth behind "an ORDERED bulk costs one round trip per shard change".
 *
 * @param namespace   {@code db.collection}
 * @param commandName {@code insert}, {@code update} or {@code delete}
 * @param ordered     the command's {@code ordered} flag
 * @param writes      how many writes the client command carried
 * @param batches     every child batch in the order mongos sent them
 * @param modelledTime the time the bulk costs by the {@link ShardLatency} model: per round the slowest child
 *                     batch, summed over rounds; wall-clock free, so tests may assert it (zero without latency)
 * @param startedNanos {@link System#nanoTime()} when mongos received the command
 * @param endedNanos   {@link System#nanoTime()} when mongos had its reply: two writes whose spans overlap were routed
 *                     side by side ({@link RoutingStats#roundsInSequence()})
 */
public record RoutedWrite(
        String namespace,
        String commandName,
        boolean ordered,
        int writes,
        List<ChildBatch> batches,
        java.time.Duration modelledTime,
        long startedNanos,
        long endedNanos) {
    /**
     * Copies the batches (the record is immutable).
     *
     * @param namespace    {@code db.collection}
     * @param commandName  {@code insert}, {@code update} or {@code delete}
     * @param ordered      the command's {@code ordered} flag
     * @param writes       how many writes the client command carried
     * @param batches      every child batch in the order mongos sent them
     * @param modelledTime the time the bulk costs by the latency model
     * @param startedNanos {@link System#nanoTime()} when mongos received the command
     * @param endedNanos   {@link System#nanoTime()} when mongos had its reply
     */
    public RoutedWrite {
        batches = List.copyOf(batches);
    }

    /**
     * A write without its span (both times 0).
     *
     * @param namespace    {@code db.collection}
     * @param commandName  {@code insert}, {@code update} or {@code delete}
     * @param ordered      the command's {@code ordered} flag
     * @param writes       how many writes the client command carried
     * @param batches      every child batch in the order mongos sent them
     * @param modelledTime the time the bulk costs by the latency model
     */
    public RoutedWrite(
            String namespace,
            String commandName,
            boolean ordered,
            int writes,
            List<ChildBatch> batches,
            java.time.Duration modelledTime) {
        this(namespace, commandName, ordered, writes, batches, modelledTime, 0, 0);
    }

    /**
     * Rounds: mongos waits for every reply of a round before it targets the next.
     *
     * @return the number of rounds
     */
    public int rounds() {
        return batches.stream().mapToInt(ChildBatch::round).max().orElse(0);
    }

    /**
     * Child batches, i.e. mongos-to-shard round trips.
     *
     * @return the number of child batches
     */
    public int childBatches() {
        return batches.size();
    }

    /**
     * Child batches per shard, in shard-name order.
     *
     * @return child batches by shard name
     */
    public Map<String, Integer> childBatchesPerShard() {
        Map<String, Integer> counts = new TreeMap<>();
        batches.forEach(b -> counts.merge(b.shard(), 1, Integer::sum));
        return counts;
    }

    /**
     * Writes sent per shard (a broadcast write counts once on every shard), in shard-name order.
     *
     * @return writes by shard name
     */
    public Map<String, Integer> documentsPerShard() {
        Map<String, Integer> counts = new TreeMap<>();
        batches.forEach(b -> counts.merge(b.shard(), b.size(), Integer::sum));
        return counts;
    }

    /**
     * The child batches of each round, by round number.
     *
     * @return the batches by round
     */
    public Map<Integer, List<ChildBatch>> byRound() {
        Map<Integer, List<ChildBatch>> rounds = new LinkedHashMap<>();
        batches.forEach(b -> rounds.computeIfAbsent(b.round(), r -> new java.util.ArrayList<>())
                .add(b));
        return rounds;
    }
}
