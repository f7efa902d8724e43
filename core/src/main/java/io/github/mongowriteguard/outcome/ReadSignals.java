package io.github.mongowriteguard.outcome;

import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * What was observed about reads of one collection, as the input of {@link StaleReadDiagnosis#of(ReadSignals)}:
 * {@code StaleConfig} errors by shard, timeouts of reads aimed at a node, and shards whose primary is known not to
 * accept writes (the guard cannot see that from reads; the caller reports it, e.g. from write deadlines).
 * Immutable: every {@code with...} method returns a new value.
 *
 * @param namespace                  {@code db.collection}
 * @param readTarget                 the read preference the reads used, e.g. {@code secondary [node:a1]}; null if unknown
 * @param staleConfigByShard         StaleConfig (13388) errors per shard id ({@code "unknown"} when the reply named none)
 * @param timeouts                   reads that ended in a timeout (maxTimeMS, socket, server selection)
 * @param shardsNotAcceptingWrites   shards whose primary is alive but does not complete writes
 */
public record ReadSignals(
        String namespace,
        @Nullable String readTarget,
        Map<String, Integer> staleConfigByShard,
        int timeouts,
        Set<String> shardsNotAcceptingWrites) {
    /** The shard id used when a StaleConfig reply named none. */
    public static final String UNKNOWN_SHARD = "unknown";

    /**
     * Copies the map and the set (the record is immutable).
     *
     * @param namespace                {@code db.collection}
     * @param readTarget               the read preference the reads used, or null if unknown
     * @param staleConfigByShard       StaleConfig errors per shard id
     * @param timeouts                 reads that ended in a timeout
     * @param shardsNotAcceptingWrites shards whose primary is alive but does not complete writes
     * @throws IllegalArgumentException for a negative number of timeouts
     */
    public ReadSignals {
        Objects.requireNonNull(namespace, "namespace");
        staleConfigByShard = Map.copyOf(staleConfigByShard);
        shardsNotAcceptingWrites = Set.copyOf(shardsNotAcceptingWrites);
        if (timeouts < 0) {
            throw new IllegalArgumentException("timeouts (" + timeouts + ") must not be negative");
        }
    }

    /**
     * No signal yet.
     *
     * @param namespace {@code db.collection}
     * @return signals with nothing observed
     */
    public static ReadSignals none(String namespace) {
        return new ReadSignals(namespace, null, Map.of(), 0, Set.of());
    }

    /**
     * One more StaleConfig error from {@code shard}.
     *
     * @param shard the shard id the error named, or null when it named none
     * @return the new signals
     */
    public ReadSignals withStaleConfig(@Nullable String shard) {
        Map<String, Integer> counts = new TreeMap<>(staleConfigByShard);
        counts.merge(shard == null ? UNKNOWN_SHARD : shard, 1, Integer::sum);
        return new ReadSignals(namespace, readTarget, counts, timeouts, shardsNotAcceptingWrites);
    }

    /**
     * One more read that ended in a timeout.
     *
     * @return the new signals
     */
    public ReadSignals withTimeout() {
        return new ReadSignals(namespace, readTarget, staleConfigByShard, timeouts + 1, shardsNotAcceptingWrites);
    }

    /**
     * The read preference the reads used.
     *
     * @param target e.g. {@code secondary [node:a1]}, or null if unknown
     * @return the new signals
     */
    public ReadSignals withReadTarget(@Nullable String target) {
        return new ReadSignals(namespace, target, staleConfigByShard, timeouts, shardsNotAcceptingWrites);
    }

    /**
     * The primary of {@code shard} is alive but does not complete writes.
     *
     * @param shard the shard id
     * @return the new signals
     */
    public ReadSignals withPrimaryNotAcceptingWrites(String shard) {
        Set<String> shards = new TreeSet<>(shardsNotAcceptingWrites);
        shards.add(Objects.requireNonNull(shard, "shard"));
        return new ReadSignals(namespace, readTarget, staleConfigByShard, timeouts, shards);
    }

    /** {@return the StaleConfig errors observed, on every shard} */
    public int staleConfigs() {
        return staleConfigByShard.values().stream().mapToInt(Integer::intValue).sum();
    }
}
