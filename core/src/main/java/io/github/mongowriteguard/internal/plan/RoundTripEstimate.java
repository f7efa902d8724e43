package io.github.mongowriteguard.internal.plan;

import io.github.mongowriteguard.bulk.BulkPlan;
import io.github.mongowriteguard.bulk.Round;
import java.util.List;

/**
 * Expected mongos-to-shard round trips of a plan on a collection with a hashed shard key, writes scattered uniformly
 * over S shards: an ORDERED bulk of n writes starts a new child batch at every change of target shard, about
 * {@code 1 + (n - 1)(1 - 1/S)} of them; an UNORDERED bulk costs one per 100,000 writes. An estimate for logs,
 * dashboards and the plan's reasons ({@link BulkPlan#expectedRoundTrips}), not a promise.
 */
final class RoundTripEstimate {

    /** Writes per bulk command that mongos and the driver accept before splitting (maxWriteBatchSize). */
    private static final int MAX_WRITE_BATCH_SIZE = 100_000;

    private RoundTripEstimate() {}

    /** {@link BulkPlan#expectedRoundTrips}: the round trips of all {@code rounds} together over {@code shardCount}. */
    static double of(List<Round> rounds, int shardCount) {
        if (shardCount < 1) {
            throw new IllegalArgumentException(
                    "shardCount (" + shardCount + ") must be at least 1; use 1 for an unsharded collection");
        }
        double trips = 0;
        for (Round round : rounds) {
            trips += round.isOrdered()
                    ? ordered(round.size(), shardCount)
                    : (round.size() + MAX_WRITE_BATCH_SIZE - 1) / MAX_WRITE_BATCH_SIZE;
        }
        return trips;
    }

    /** Expected round trips of an ORDERED bulk of n writes over S hashed shards: a new one per change of shard. */
    static double ordered(int writes, int shardCount) {
        return writes == 0 ? 0 : 1 + (writes - 1) * (1 - 1.0 / shardCount);
    }
}
