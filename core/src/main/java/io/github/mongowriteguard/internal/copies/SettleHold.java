package io.github.mongowriteguard.internal.copies;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The commands whose outcome is UNKNOWN that a guard keeps for {@code settle}: each keeps its session open, so that the
 * server keeps the session's statement record, and its command, so that a settle sends the very same copy. Bounded by
 * count (past it the oldest is released) and by age since the last send (older ones are released when the hold is
 * next touched), both from {@code WriteGuardSettings.settleHold}. Thread-safe. Not API.
 */
public final class SettleHold {
    /** How many commands a hold keeps by default (the settings' default). */
    public static final int DEFAULT_MAX_COPIES = 1_000;

    /** How long after its last send a hold keeps a command by default (the settings' default). */
    public static final Duration DEFAULT_MAX_AGE = Duration.ofMinutes(10);

    private final int maxCopies;
    private final Duration maxAge;
    /** In the order they were held (the oldest first); guarded by {@code this}. */
    private final LinkedHashSet<Entry> entries = new LinkedHashSet<>();

    /** What a held command does when the hold lets it go: closes the session it holds, if the guard's own. */
    public interface Held {
        void release();
    }

    /** One held command, as the outcome refers to it. */
    public final class Entry {
        private final Held held;
        private volatile long lastSendNanos;
        private volatile Instant until;
        private volatile @Nullable String releasedBecause;

        private Entry(Held held) {
            this.held = held;
            touch();
        }

        /** {@return what is held} */
        public Held held() {
            return held;
        }

        /** {@return until when a settle is possible (the hold's age limit after the last send)} */
        public Instant until() {
            return until;
        }

        /** {@return why the hold let it go, or null while it is held} */
        public @Nullable String releasedBecause() {
            expire();
            return releasedBecause;
        }

        /** Lets it go (settled, or its record is gone); {@code because} is kept for a later settle of it. */
        public void release(String because) {
            SettleHold.this.release(this, because);
        }

        /** A settle sent it again: the age counts from now. */
        public void touch() {
            lastSendNanos = System.nanoTime();
            until = Instant.now().plus(maxAge);
        }
    }

    /**
     * @param maxCopies most commands held at once, 0 for none
     * @param maxAge    how long after its last send a command stays held
     */
    public SettleHold(int maxCopies, Duration maxAge) {
        this.maxCopies = maxCopies;
        this.maxAge = maxAge;
    }

    /**
     * Holds a command; releases the oldest when the hold is full. With a hold of no copies the entry is released at
     * once.
     *
     * @return the entry the outcome refers to
     */
    public Entry hold(Held held) {
        Entry entry = new Entry(held);
        List<Entry> evicted = new ArrayList<>(1);
        synchronized (this) {
            expireLocked(evicted);
            if (maxCopies == 0) {
                entry.releasedBecause = "the guard holds no command for settling (settleHold maxCopies is 0)";
                evicted.add(entry);
            } else {
                entries.add(entry);
                Iterator<Entry> oldest = entries.iterator();
                while (entries.size() > maxCopies) {
                    Entry first = oldest.next();
                    oldest.remove();
                    first.releasedBecause = "released from the guard's hold: more than " + maxCopies
                            + " unsettled commands were held (settleHold maxCopies)";
                    evicted.add(first);
                }
            }
        }
        evicted.forEach(e -> e.held.release());
        return entry;
    }

    /** Lets a settled command go. */
    public void release(Entry entry, String because) {
        boolean was;
        synchronized (this) {
            was = entries.remove(entry);
            if (entry.releasedBecause == null) {
                entry.releasedBecause = because;
            }
        }
        if (was) {
            entry.held.release();
        }
    }

    /** {@return the number of commands held now} */
    public int count() {
        expire();
        synchronized (this) {
            return entries.size();
        }
    }

    private void expire() {
        List<Entry> evicted = new ArrayList<>(0);
        synchronized (this) {
            expireLocked(evicted);
        }
        evicted.forEach(e -> e.held.release());
    }

    private void expireLocked(List<Entry> evicted) {
        long now = System.nanoTime();
        long limit = maxAge.toNanos();
        Iterator<Entry> each = entries.iterator();
        while (each.hasNext()) {
            Entry entry = each.next();
            if (now - entry.lastSendNanos > limit) {
                each.remove();
                entry.releasedBecause = "released from the guard's hold: its last send is older than "
                        + maxAge.toMinutes() + " min (settleHold maxAge), near the server's session lifetime";
                evicted.add(entry);
            }
        }
    }
}
