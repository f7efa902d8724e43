package io.github.mongowriteguard.benchmarks.lab;

import java.util.Arrays;
import java.util.Collection;
import java.util.Map;

/**
 * The articles' arithmetic (write-path.md section 1): expected ORDERED round trips on a hashed key, the latency
 * model behind the Little's-law table, and the slowest-shard bound of an unordered bulk.
 */
public final class Formula {
    private Formula() {}

    /** Expected ORDERED mongos-to-shard round trips of n writes spread uniformly over S shards: 1+(n-1)(1-1/S). */
    public static double orderedRoundTrips(int n, int shards) {
        if (n <= 0) {
            return 0;
        }
        return 1 + (n - 1) * (1 - 1.0 / shards);
    }

    /** Share of work that costs {@code factor} times more when one of S shards is slow: (S-1)/S + factor/S. */
    static double slowMultiplier(int shards, double slowFactor) {
        return (shards - 1.0) / shards + slowFactor / shards;
    }

    /** The article's ORDERED time: expected round trips x rtt + n x per-document (x the slow-shard share). */
    public static double orderedMillis(int n, int shards, double rttMs, double perDocMs, double slowFactor) {
        return slowMultiplier(shards, slowFactor) * (orderedRoundTrips(n, shards) * rttMs + n * perDocMs);
    }

    /** The article's UNORDERED time: the slowest child batch, rtt + n/S x per-document (x factor on the slow shard). */
    public static double unorderedMillis(int n, int shards, double rttMs, double perDocMs, double slowFactor) {
        return slowFactor * (rttMs + (double) n / shards * perDocMs);
    }

    /**
     * The slowest-shard bound of one round with the measured placement: the largest of factor x (rtt + documents on
     * the shard x per-document).
     *
     * @param documentsPerShard documents sent to each shard
     * @param slowShard         the shard that is {@code slowFactor} times slower, or null for none
     */
    public static double slowestShardMillis(
            Map<String, Integer> documentsPerShard,
            String slowShard,
            double rttMs,
            double perDocMs,
            double slowFactor) {
        double max = 0;
        for (Map.Entry<String, Integer> shard : documentsPerShard.entrySet()) {
            double factor = shard.getKey().equals(slowShard) ? slowFactor : 1;
            max = Math.max(max, factor * (rttMs + shard.getValue() * perDocMs));
        }
        return max;
    }

    /** Little's law: bulks in flight = arrival rate x time in the system. */
    public static double inFlight(double arrivalPerSecond, double millis) {
        return arrivalPerSecond * millis / 1000.0;
    }

    public static double median(Collection<? extends Number> values) {
        if (values.isEmpty()) {
            return Double.NaN;
        }
        double[] sorted = values.stream().mapToDouble(Number::doubleValue).toArray();
        Arrays.sort(sorted);
        int mid = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    }

    /** Rounds to one decimal place, for tables and JSON. */
    public static double round1(double value) {
        return Math.round(value * 10.0) / 10.0;
    }

    /** Rounds to three decimal places (the article prints 875.125). */
    public static double round3(double value) {
        return Math.round(value * 1000.0) / 1000.0;
    }

    /** Rounds to two decimal places. */
    public static double round2(double value) {
        return Math.round(value * 100.0) / 100.0;
    }
}
