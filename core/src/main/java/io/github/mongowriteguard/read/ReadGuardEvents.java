package io.github.mongowriteguard.read;

import io.github.mongowriteguard.outcome.ReadSignals;
import java.time.Duration;
import java.util.Objects;

/** The immutable events of {@link ReadGuardListener}. Tag-safe values only: namespaces, shard ids, enums. */
public final class ReadGuardEvents {
    private ReadGuardEvents() {}

    /**
     * @param namespace {@code db.collection}
     * @param shard     the shard id the error named, or {@link ReadSignals#UNKNOWN_SHARD}
     */
    public record StaleConfigEvent(String namespace, String shard) {
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
    public record ReadTimeoutEvent(String namespace, String kind) {
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
    public record DegradedReadEvent(
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
