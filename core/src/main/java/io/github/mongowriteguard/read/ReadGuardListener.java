package io.github.mongowriteguard.read;

import io.github.mongowriteguard.outcome.ReadSignals;
import java.time.Duration;
import java.util.Objects;

/**
 * Callbacks for the counts a metrics layer wants from guarded reads: StaleConfig errors, timeouts and degraded
 * (approximate) reads. Every method has a no-op default; each call gets one immutable event, a record below holding
 * tag-safe values only (namespaces, shard ids, enums).
 *
 * <p>A listener never breaks a read: an exception it throws is logged and ignored.
 *
 * <pre>{@code
 * ReadGuardOptions options = ReadGuardOptions.builder().degradedReads(true)
 *     .listener(new ReadGuardListener() {
 *         public void degradedRead(DegradedReadEvent event) { degraded.increment(); }
 *     })
 *     .build();
 * }</pre>
 *
 * <p>Implemented by applications (new methods come with defaults).
 */
public interface ReadGuardListener {
    /** A no-op listener, the default. */
    ReadGuardListener NONE = new ReadGuardListener() {};

    /**
     * A normal read failed with StaleConfig (13388).
     *
     * @param event the namespace and the shard the error named
     */
    default void staleConfig(StaleConfigEvent event) {}

    /**
     * A normal read timed out (maxTimeMS, socket read, server selection).
     *
     * @param event the namespace and the kind of timeout
     */
    default void readTimedOut(ReadTimeoutEvent event) {}

    /**
     * A degraded read answered approximately.
     *
     * @param event what the degraded read returned
     */
    default void degradedRead(DegradedReadEvent event) {}

    /**
     * @param namespace {@code db.collection}
     * @param shard     the shard id the error named, or {@link ReadSignals#UNKNOWN_SHARD}
     */
    record StaleConfigEvent(String namespace, String shard) {
        /**
         * Checks that every component is given.
         *
         * @param namespace {@code db.collection}
         * @param shard     the shard id the error named, or {@link ReadSignals#UNKNOWN_SHARD}
         */
        public StaleConfigEvent {
            Objects.requireNonNull(namespace, "namespace");
            Objects.requireNonNull(shard, "shard");
        }

        @Override
        public String toString() {
            return "StaleConfig on " + namespace + " from shard " + shard;
        }
    }

    /**
     * @param namespace {@code db.collection}
     * @param kind      the driver exception's simple class name, e.g. {@code MongoExecutionTimeoutException}
     */
    record ReadTimeoutEvent(String namespace, String kind) {
        /**
         * Checks that every component is given.
         *
         * @param namespace {@code db.collection}
         * @param kind      the driver exception's simple class name
         */
        public ReadTimeoutEvent {
            Objects.requireNonNull(namespace, "namespace");
            Objects.requireNonNull(kind, "kind");
        }

        @Override
        public String toString() {
            return "read of " + namespace + " timed out (" + kind + ")";
        }
    }

    /**
     * @param namespace         {@code db.collection}
     * @param reason            why the degraded read ran
     * @param documents         documents returned after de-duplication
     * @param duplicatesRemoved copies removed by {@code _id}
     * @param elapsed           time of the degraded read
     */
    record DegradedReadEvent(
            String namespace, ApproximationReason reason, int documents, int duplicatesRemoved, Duration elapsed) {
        /**
         * Checks that every component is given.
         *
         * @param namespace         {@code db.collection}
         * @param reason            why the degraded read ran
         * @param documents         documents returned after de-duplication
         * @param duplicatesRemoved copies removed by {@code _id}
         * @param elapsed           time of the degraded read
         */
        public DegradedReadEvent {
            Objects.requireNonNull(namespace, "namespace");
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(elapsed, "elapsed");
        }

        @Override
        public String toString() {
            return "degraded read of " + namespace + " (" + reason + "): " + documents + " documents, "
                    + duplicatesRemoved + " duplicates removed in " + elapsed.toMillis() + " ms";
        }
    }
}
