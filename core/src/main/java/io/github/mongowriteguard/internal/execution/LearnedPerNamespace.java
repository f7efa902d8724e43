package io.github.mongowriteguard.internal.execution;

import com.mongodb.MongoNamespace;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * What a planner learned of each collection, kept for a while: a lesson for its time to live, one learned from a
 * failed read for a shorter one (the failure may pass: a failover, a timeout). Shared by {@link SingleDocumentRules}
 * and {@link KeyPlacements}.
 *
 * @param <V> what is learned
 */
final class LearnedPerNamespace<V> {

    /**
     * What one read taught.
     *
     * @param value       the value to use
     * @param fromFailure whether a read failed while learning it
     * @param <V>         what is learned
     */
    record Lesson<V>(V value, boolean fromFailure) {}

    private record Learned<V>(V value, long atNanos, long timeToLiveNanos) {
        boolean freshAt(long now) {
            return now - atNanos < timeToLiveNanos;
        }
    }

    private final ConcurrentHashMap<String, Learned<V>> learned = new ConcurrentHashMap<>();
    private final Duration timeToLive;
    private final Duration failureTimeToLive;
    private final LongSupplier nanoClock;

    LearnedPerNamespace(Duration timeToLive, Duration failureTimeToLive, LongSupplier nanoClock) {
        this.timeToLive = timeToLive;
        this.failureTimeToLive = failureTimeToLive;
        this.nanoClock = nanoClock;
    }

    /** The value learned for {@code namespace} within its time to live, or what {@code learn} teaches now. */
    V get(MongoNamespace namespace, Supplier<Lesson<V>> learn) {
        long now = nanoClock.getAsLong();
        Learned<V> known = learned.get(namespace.getFullName());
        if (known != null && known.freshAt(now)) {
            return known.value();
        }
        Lesson<V> lesson = learn.get();
        Duration ttl = lesson.fromFailure() ? failureTimeToLive : timeToLive;
        learned.put(namespace.getFullName(), new Learned<>(lesson.value(), now, ttl.toNanos()));
        return lesson.value();
    }
}
