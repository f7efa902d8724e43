package io.github.mongowriteguard.outcome;

import java.util.Comparator;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A plain-language reading of {@link ReadSignals}: which shard, which node, why, and what not to do.
 *
 * <pre>{@code
 * StaleReadDiagnosis diagnosis = reads.diagnose();
 * log.warn(diagnosis.message());
 * // Reads of demo.store_inventory aimed at secondary [node:a1] fail: shard shard00 answered StaleConfig (13388)
 * // 3 times and its primary is not completing writes. A secondary loads routing metadata only from a write of
 * // its own primary (config.cache.*) ... Do not restart secondaries of shard shard00 ...
 * }</pre>
 *
 * @param cause   the most likely cause
 * @param shard   the shard the signals point at, or null when unknown
 * @param node    the node the reads were aimed at (their read preference), or null when unknown
 * @param signals what was observed
 */
public record StaleReadDiagnosis(
        Cause cause, @Nullable String shard, @Nullable String node, ReadSignals signals) {

    /** The most likely cause behind the signals. */
    public enum Cause {
        /** No StaleConfig and no timeout were observed. */
        NONE,
        /**
         * StaleConfig (or timeouts) on a shard whose primary does not complete writes: its secondaries cannot
         * refresh routing metadata until the primary writes again.
         */
        SECONDARY_CANNOT_REFRESH,
        /** StaleConfig that mongos did not retry away; the shard's refresh is slow or failing. */
        STALE_ROUTING_METADATA,
        /** Reads timed out; mongos may be retrying StaleConfig behind them. */
        READ_TIMEOUTS
    }

    /**
     * Checks that the cause and the signals are given.
     *
     * @param cause   the most likely cause
     * @param shard   the shard the signals point at, or null when unknown
     * @param node    the node the reads were aimed at, or null when unknown
     * @param signals what was observed
     */
    public StaleReadDiagnosis {
        Objects.requireNonNull(cause, "cause");
        Objects.requireNonNull(signals, "signals");
    }

    /**
     * Turns the signals into a diagnosis.
     *
     * @param signals what was observed
     * @return the diagnosis
     */
    public static StaleReadDiagnosis of(ReadSignals signals) {
        Objects.requireNonNull(signals, "signals");
        Optional<String> staleShard = signals.staleConfigByShard().entrySet().stream()
                .filter(e -> !e.getKey().equals(ReadSignals.UNKNOWN_SHARD))
                .max(Comparator.comparingInt(Map.Entry::getValue))
                .map(Map.Entry::getKey);
        String notWriting = staleShard
                .filter(signals.shardsNotAcceptingWrites()::contains)
                .orElse(signals.shardsNotAcceptingWrites().stream().findFirst().orElse(null));
        boolean stale = signals.staleConfigs() > 0;
        boolean timeouts = signals.timeouts() > 0;
        if (!stale && !timeouts) {
            return new StaleReadDiagnosis(Cause.NONE, null, signals.readTarget(), signals);
        }
        if (notWriting != null) {
            return new StaleReadDiagnosis(Cause.SECONDARY_CANNOT_REFRESH, notWriting, signals.readTarget(), signals);
        }
        if (stale) {
            return new StaleReadDiagnosis(
                    Cause.STALE_ROUTING_METADATA, staleShard.orElse(null), signals.readTarget(), signals);
        }
        return new StaleReadDiagnosis(Cause.READ_TIMEOUTS, null, signals.readTarget(), signals);
    }

    /**
     * The diagnosis as sentences an operator can act on.
     *
     * @return the diagnosis in plain language
     */
    public String message() {
        String ns = signals.namespace();
        String aimed = node == null ? "" : " aimed at " + node;
        String shardName = shard == null ? "the shard" : "shard " + shard;
        String observed = observed();
        String restart = " Do not restart secondaries of " + shardName + " to see if it helps: a restart empties a"
                + " node's in-memory routing metadata, so a secondary that still serves turns into one that fails every"
                + " collection until the primary writes again.";
        return switch (cause) {
            case NONE -> "Reads of " + ns + aimed + ": no StaleConfig or timeout observed.";
            case SECONDARY_CANNOT_REFRESH ->
                "Reads of " + ns + aimed + " fail (" + observed + ") and the primary of " + shardName
                        + " is not completing writes. A secondary loads routing metadata only from a write of its own"
                        + " primary (config.cache.*, through _flushRoutingTableCacheUpdates, 30 s limit) replicated to it,"
                        + " so a restarted secondary, or one reading this collection for the first time, cannot serve it"
                        + " until that primary writes again; secondaries that already hold the collection keep serving."
                        + " Fix or step down the primary of " + shardName + "." + restart
                        + " Screens that accept approximate answers can use degraded reads (readConcern \"available\");"
                        + " counts that must add up cannot.";
            case STALE_ROUTING_METADATA ->
                "Reads of " + ns + aimed + " fail with StaleConfig from " + shardName + " (" + observed
                        + "): the node's routing metadata is unknown or old and its refresh does not finish. On a"
                        + " secondary the refresh needs a write of its primary: check whether the primary of "
                        + shardName
                        + " completes writes (a primary can answer heartbeats while its writes hang)." + restart;
            case READ_TIMEOUTS ->
                "Reads of " + ns + aimed + " time out (" + observed + "). Behind a timeout mongos may be"
                        + " retrying StaleConfig from a secondary that cannot refresh its routing metadata: look for"
                        + " 'Failed to refresh metadata' or forceRoutingTableRefresh in the secondaries' logs and StaleConfig"
                        + " in mongos' log, and check that each shard's primary completes writes." + restart;
        };
    }

    private String observed() {
        StringBuilder text = new StringBuilder();
        if (signals.staleConfigs() > 0) {
            text.append(signals.staleConfigs()).append(" StaleConfig (13388)");
            if (shard != null) {
                text.append(" from ").append(shard);
            }
        }
        if (signals.timeouts() > 0) {
            if (text.length() > 0) {
                text.append(", ");
            }
            text.append(signals.timeouts()).append(" timeout(s)");
        }
        return text.toString();
    }

    @Override
    public String toString() {
        return "StaleReadDiagnosis{" + cause + ", shard=" + shard + ", node=" + node + "}";
    }
}
