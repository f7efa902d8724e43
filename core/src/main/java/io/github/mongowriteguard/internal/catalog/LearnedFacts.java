package io.github.mongowriteguard.internal.catalog;

import com.mongodb.MongoException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Facts read from the server, each kept for a while: a value for its time to live, a failed read (its
 * {@link MongoException}, thrown again to every asker) for a shorter one, since the failure may pass (a failover, a
 * timeout). Bounded: past {@code maxEntries} keys the least recently used is forgotten. One read per key at a time:
 * the threads that ask for a key being read wait for that read instead of sending their own.
 *
 * @param <K> what a fact is about
 * @param <V> the fact
 */
final class LearnedFacts<K, V> {

    private static final class Slot<V> {
        private V value;
        private MongoException failure;
        private long atNanos;
        private long timeToLiveNanos;
        private boolean known;
    }

    private final LinkedHashMap<K, Slot<V>> slots;
    private final int maxEntries;
    private final Duration timeToLive;
    private final Duration failureTimeToLive;
    private final LongSupplier nanoClock;

    LearnedFacts(int maxEntries, Duration timeToLive, Duration failureTimeToLive, LongSupplier nanoClock) {
        this.maxEntries = maxEntries;
        this.timeToLive = timeToLive;
        this.failureTimeToLive = failureTimeToLive;
        this.nanoClock = nanoClock;
        this.slots = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<K, Slot<V>> eldest) {
                return size() > LearnedFacts.this.maxEntries;
            }
        };
    }

    /**
     * The fact about {@code key} learned within its time to live, or what {@code read} returns now.
     *
     * @throws MongoException what {@code read} threw, now or within the failure's time to live
     */
    V get(K key, Supplier<V> read) {
        Slot<V> slot;
        synchronized (slots) {
            slot = slots.computeIfAbsent(key, k -> new Slot<>());
        }
        synchronized (slot) {
            long now = nanoClock.getAsLong();
            if (!slot.known || now - slot.atNanos >= slot.timeToLiveNanos) {
                try {
                    slot.value = read.get();
                    slot.failure = null;
                    slot.timeToLiveNanos = timeToLive.toNanos();
                } catch (MongoException e) {
                    slot.value = null;
                    slot.failure = e;
                    slot.timeToLiveNanos = failureTimeToLive.toNanos();
                }
                slot.atNanos = now;
                slot.known = true;
            }
            if (slot.failure != null) {
                throw slot.failure;
            }
            return slot.value;
        }
    }

    /** How many keys are held now. */
    int size() {
        synchronized (slots) {
            return slots.size();
        }
    }

    /** The most keys held. */
    int bound() {
        return maxEntries;
    }
}
