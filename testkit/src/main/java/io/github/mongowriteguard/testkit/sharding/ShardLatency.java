package io.github.mongowriteguard.testkit.sharding;

import io.github.mongowriteguard.testkit.internal.Sleeps;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The simulated cost of one mongos-to-shard child batch: {@code (roundTrip + documents x perDocument) x
 * slowFactor(shard)}: a batch takes the longer of this and the emulator's own work on it. Zero by default, so tests stay fast;
 * benchmarks set it to see the cost of rounds (write-path.md, section 1: 1 ms per round trip, 0.2 ms per document,
 * one shard 10x slower). A slow shard is slower on both parts: that is the model behind the articles' numbers
 * (UNORDERED with the slow shard: 10 ms + 200 x 2 ms = 410 ms). Thread-safe; changes apply to the next batch.
 *
 * <pre>{@code
 * cluster.latency().roundTrip(Duration.ofMillis(1)).perDocument(Duration.ofNanos(200_000)).slowFactor("shard02", 10);
 * }</pre>
 */
public final class ShardLatency {
    private volatile long roundTripNanos;
    private volatile long perDocumentNanos;
    private final Map<String, Double> slowFactors = new ConcurrentHashMap<>();

    /**
     * The fixed part of every child batch, default zero.
     *
     * @param roundTrip zero or more
     * @return this model
     * @throws IllegalArgumentException if negative
     */
    public ShardLatency roundTrip(Duration roundTrip) {
        this.roundTripNanos = nonNegative("roundTrip", roundTrip);
        return this;
    }

    /**
     * The cost of each write in a child batch, default zero.
     *
     * @param perDocument zero or more
     * @return this model
     * @throws IllegalArgumentException if negative
     */
    public ShardLatency perDocument(Duration perDocument) {
        this.perDocumentNanos = nonNegative("perDocument", perDocument);
        return this;
    }

    /**
     * Multiplies the whole batch cost on one shard (default 1), e.g. 10 for the articles' slow shard.
     *
     * @param shard  the shard's name
     * @param factor at least 1
     * @return this model
     */
    public ShardLatency slowFactor(String shard, double factor) {
        Objects.requireNonNull(shard, "shard");
        if (!(factor >= 0)) {
            throw new IllegalArgumentException("slowFactor (" + factor + ") for " + shard + " must be 0 or more");
        }
        slowFactors.put(shard, factor);
        return this;
    }

    /** {@return the fixed part of every child batch} */
    public Duration roundTrip() {
        return Duration.ofNanos(roundTripNanos);
    }

    /** {@return the cost of each write in a child batch} */
    public Duration perDocument() {
        return Duration.ofNanos(perDocumentNanos);
    }

    /**
     * {@return the multiplier of {@code shard}'s batch cost, 1 unless set}
     *
     * @param shard the shard's name
     */
    public double slowFactor(String shard) {
        return slowFactors.getOrDefault(shard, 1.0);
    }

    /**
     * The simulated time of one child batch of {@code documents} writes on {@code shard}.
     *
     * @param shard     the shard's name
     * @param documents the writes in the batch
     * @return the time in nanoseconds
     */
    public long costNanos(String shard, int documents) {
        return (long) ((roundTripNanos + (double) documents * perDocumentNanos) * slowFactor(shard));
    }

    /**
     * Waits until a child batch that started at {@code startNanos} has taken its modelled cost. The emulator's own
     * work on the batch counts toward that cost, as a real shard's work is what the per-document cost models: a
     * batch takes the longer of the model and the emulator's work, never their sum.
     */
    void completeBatch(String shard, int documents, long startNanos) {
        Sleeps.until(startNanos + costNanos(shard, documents));
    }

    private static long nonNegative(String name, Duration value) {
        Objects.requireNonNull(value, name);
        if (value.isNegative()) {
            throw new IllegalArgumentException(name + " (" + value + ") must not be negative");
        }
        return value.toNanos();
    }

    @Override
    public String toString() {
        return "ShardLatency{roundTrip=" + roundTrip() + ", perDocument=" + perDocument() + ", slowFactors="
                + slowFactors + "}";
    }
}
