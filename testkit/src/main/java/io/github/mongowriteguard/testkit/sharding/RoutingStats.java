package io.github.mongowriteguard.testkit.sharding;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Every write command the cluster's mongos routed, with its rounds and child batches: what a test asserts
 * instead of timing anything.
 *
 * <pre>{@code
 * cluster.routing().reset();
 * collection.bulkWrite(models);                           // one ORDERED bulk
 * RoutedWrite bulk = cluster.routing().last();
 * assertThat(bulk.rounds()).isEqualTo(6);
 * assertThat(bulk.childBatchesPerShard()).containsEntry("shard01", 2);
 * }</pre>
 */
public final class RoutingStats {
    private final ConcurrentLinkedQueue<RoutedWrite> writes = new ConcurrentLinkedQueue<>();
    private final java.util.concurrent.atomic.AtomicLong staleConfigRetries =
            new java.util.concurrent.atomic.AtomicLong();

    private final java.util.concurrent.atomic.AtomicLong shardRetries = new java.util.concurrent.atomic.AtomicLong();

    private final java.util.concurrent.atomic.AtomicLong currentOpShardRequests =
            new java.util.concurrent.atomic.AtomicLong();

    void currentOpShardRequested() {
        currentOpShardRequests.incrementAndGet();
    }

    /**
     * How many shard primaries mongos asked for a client's {@code currentOp} or {@code $currentOp}: one per shard per
     * command (mongos' {@code $currentOp} targets every shard), counted even when the shard could not be reached.
     *
     * @return the count since the cluster started or the last {@link #reset()}
     */
    public long currentOpShardRequests() {
        return currentOpShardRequests.get();
    }

    void shardRetried() {
        shardRetries.incrementAndGet();
    }

    /**
     * How many times mongos sent a retryable write's child batch again after a retryable error from the shard
     * ({@code AsyncRequestsSender}, at most 3 per batch); the client never sees these sends.
     *
     * @return the number of such sends
     */
    public long shardRetries() {
        return shardRetries.get();
    }

    void staleConfigRetried() {
        staleConfigRetries.incrementAndGet();
    }

    /**
     * How many times mongos sent a shard read again after {@code StaleConfig} (its log's StaleConfig lines).
     *
     * @return the count since the cluster started or the last {@link #reset()}
     */
    public long staleConfigRetries() {
        return staleConfigRetries.get();
    }

    private final java.util.concurrent.atomic.AtomicLong staleWriteBatches =
            new java.util.concurrent.atomic.AtomicLong();

    void staleWriteBatch() {
        staleWriteBatches.incrementAndGet();
    }

    /**
     * How many rounds of write child batches had a shard answer {@code StaleConfig} (the shard was in a migration's
     * critical section, or mongos' routing was older than the shard's), after which mongos refreshed its routing and
     * sent those writes again to their owner (mongos' {@code numStaleBatches}, {@code batch_write_exec.cpp}).
     *
     * @return the count since the cluster started or the last {@link #reset()}
     */
    public long staleWriteBatches() {
        return staleWriteBatches.get();
    }

    void add(RoutedWrite write) {
        writes.add(write);
    }

    /**
     * The routed write commands in completion order.
     *
     * @return the writes
     */
    public List<RoutedWrite> writes() {
        return new ArrayList<>(writes);
    }

    /**
     * The routed write commands on one namespace.
     *
     * @param namespace {@code db.collection}
     * @return its writes
     */
    public List<RoutedWrite> writes(String namespace) {
        return writes.stream().filter(w -> w.namespace().equals(namespace)).toList();
    }

    /**
     * The most recently completed routed write.
     *
     * @return the write
     * @throws IllegalStateException when there is none
     */
    public RoutedWrite last() {
        List<RoutedWrite> all = writes();
        if (all.isEmpty()) {
            throw new IllegalStateException("mongos has routed no write command since the last reset()");
        }
        return all.get(all.size() - 1);
    }

    /**
     * Total child batches (mongos-to-shard round trips) of all recorded writes.
     *
     * @return the total
     */
    public long childBatches() {
        return writes.stream().mapToLong(RoutedWrite::childBatches).sum();
    }

    /**
     * Total rounds of all recorded writes.
     *
     * @return the total
     */
    public long rounds() {
        return writes.stream().mapToLong(RoutedWrite::rounds).sum();
    }

    /**
     * Mongos rounds in sequence: the most rounds of recorded writes of which each started after the one before it had
     * ended (their spans do not overlap), summed. Writes routed side by side (spans that overlap, e.g. commands sent
     * by several threads at once) count once, as the longest of them; writes routed one after another add up. This is
     * what the writes cost in mongos rounds of waiting: {@link #rounds()} counts every round of every write.
     *
     * @return the rounds on the longest chain of writes routed one after another
     */
    public long roundsInSequence() {
        // Weighted interval scheduling: best[i] = the most rounds of a chain that ends with the i-th write to end.
        List<RoutedWrite> byEnd = new ArrayList<>(writes);
        byEnd.sort(java.util.Comparator.comparingLong(RoutedWrite::endedNanos));
        long[] best = new long[byEnd.size()];
        long most = 0;
        for (int i = 0; i < byEnd.size(); i++) {
            RoutedWrite write = byEnd.get(i);
            long before = 0;
            for (int j = 0; j < i; j++) {
                if (byEnd.get(j).endedNanos() < write.startedNanos()) {
                    before = Math.max(before, best[j]);
                }
            }
            best[i] = before + write.rounds();
            most = Math.max(most, best[i]);
        }
        return most;
    }

    /**
     * The summed {@link RoutedWrite#modelledTime()} of all recorded writes.
     *
     * @return the total
     */
    public java.time.Duration modelledTime() {
        return writes.stream().map(RoutedWrite::modelledTime).reduce(java.time.Duration.ZERO, java.time.Duration::plus);
    }

    /** Forgets the recorded writes and every count, e.g. between the phases of a test. */
    public void reset() {
        writes.clear();
        staleConfigRetries.set(0);
        staleWriteBatches.set(0);
        shardRetries.set(0);
        currentOpShardRequests.set(0);
    }
}
