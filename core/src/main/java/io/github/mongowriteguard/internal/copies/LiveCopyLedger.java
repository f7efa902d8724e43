package io.github.mongowriteguard.internal.copies;

import io.github.mongowriteguard.copies.CopyLedger;
import io.github.mongowriteguard.copies.CopyRecord;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link CopyLedger} of a guard, and where its executors report each copy's attempts and sends ({@link #start}).
 *
 * <p>Bounded by count ({@link CopyLedger#MAX_TRACKED}, or the count given) as well as by age ({@link #RETENTION}):
 * past the count, the oldest copy the server is not known to run (one still being sent, whose client still waits) is
 * dropped first (if it later turns possibly running it is tracked again); only when every tracked copy may still run
 * is the oldest of those forgotten. A copy forgotten while it may still run, by the count or by its age, is counted
 * ({@link #forgottenCount()}, the meter {@code mongodb.guard.copies.forgotten}), logged in a rate-limited WARN, and
 * marked {@link Copy#isForgotten() forgotten}: the overlap gate then answers BLIND for it, never "gone". Thread-safe.
 * Not API.
 */
public final class LiveCopyLedger implements CopyLedger {
    private static final Logger log = LoggerFactory.getLogger(LiveCopyLedger.class);

    private static final long EXPIRY_INTERVAL_NANOS = 1_000_000_000L;
    /** At most one WARN about forgotten copies a minute. */
    private static final long WARN_INTERVAL_NANOS = 60_000_000_000L;

    private final int maxTracked;
    private final Clock clock;
    /** Every tracked copy by key, for {@link #resume}; guarded by {@code this}. */
    private final Map<Key, Copy> open = new HashMap<>();
    /** The tracked copies the server is not known to run (being sent, the client waits), oldest first; {@code this}. */
    private final LinkedHashSet<Copy> quiet = new LinkedHashSet<>();
    /** The tracked copies the server may still run (the client stopped waiting), oldest first; {@code this}. */
    private final LinkedHashSet<Copy> mayRun = new LinkedHashSet<>();

    private final AtomicLong forgotten = new AtomicLong();
    private volatile @Nullable Instant lastForgotten;
    private final AtomicLong forgottenSinceWarn = new AtomicLong();
    private final AtomicLong nextWarn = new AtomicLong(System.nanoTime());
    private final AtomicInteger running = new AtomicInteger();
    private final AtomicInteger maxRunning = new AtomicInteger();
    /**
     * When {@link #start} next looks for copies past their retention ({@link System#nanoTime()}): at most once a
     * second, not on every copy of every call, since a copy is kept for minutes ({@code RETENTION}) and only one
     * a client gave up on stays after its call.
     */
    private volatile long nextExpiry = System.nanoTime();

    /** The commands whose outcome is UNKNOWN, held for {@code settle}. */
    private final SettleHold settleHold;

    /** A ledger of at most {@link CopyLedger#MAX_TRACKED} copies whose settle hold has the default bounds. */
    public LiveCopyLedger() {
        this(new SettleHold(SettleHold.DEFAULT_MAX_COPIES, SettleHold.DEFAULT_MAX_AGE));
    }

    /** @param settleHold where the guard holds the commands it may settle */
    public LiveCopyLedger(SettleHold settleHold) {
        this(settleHold, MAX_TRACKED);
    }

    /**
     * @param settleHold where the guard holds the commands it may settle
     * @param maxTracked the most copies tracked at once, at least 1
     */
    public LiveCopyLedger(SettleHold settleHold, int maxTracked) {
        this(settleHold, maxTracked, Clock.systemUTC());
    }

    /** As {@link #LiveCopyLedger(SettleHold, int)}, with the clock copies' ages are read on (tests). */
    LiveCopyLedger(SettleHold settleHold, int maxTracked, Clock clock) {
        this.clock = clock;
        if (maxTracked < 1) {
            throw new IllegalArgumentException("maxTracked (" + maxTracked + ") must be at least 1");
        }
        this.settleHold = settleHold;
        this.maxTracked = maxTracked;
    }

    /** {@return the most copies this ledger tracks at once} */
    public int maxTracked() {
        return maxTracked;
    }

    /** {@return where the guard holds the commands whose outcome is UNKNOWN, for settle} */
    public SettleHold settleHold() {
        return settleHold;
    }

    @Override
    public int heldCount() {
        return settleHold.count();
    }

    /**
     * The copy of {@code (lsid, txnNumber)} the ledger still tracks (a settle sends it again), or a new entry for it
     * when the ledger forgot it.
     */
    public Copy resume(String namespace, String lsid, long txnNumber, @Nullable String comment) {
        Copy tracked;
        synchronized (this) {
            tracked = open.get(new Key(lsid, txnNumber, false));
        }
        return tracked != null ? tracked : start(namespace, lsid, txnNumber, comment);
    }

    /**
     * Starts tracking a copy before its first send.
     *
     * @param namespace the collection's namespace
     * @param lsid      the session id the copy is sent in
     * @param txnNumber the copy's transaction number; null for a write sent without one (a multi-document write)
     * @param comment   the comment that names the copy on the server, if any
     * @return the copy, to be told of each attempt and send
     */
    public Copy start(String namespace, String lsid, @Nullable Long txnNumber, @Nullable String comment) {
        long now = System.nanoTime();
        if (now - nextExpiry >= 0) {
            nextExpiry = now + EXPIRY_INTERVAL_NANOS;
            expire();
        }
        Copy copy = new Copy(namespace, lsid, txnNumber, comment);
        List<Copy> dropped;
        synchronized (this) {
            Copy replaced = open.get(copy.key);
            if (replaced != null) {
                untrackLocked(replaced);
            }
            open.put(copy.key, copy);
            quiet.add(copy);
            copy.tracked = true;
            dropped = trimLocked();
        }
        warnForgotten(dropped);
        return copy;
    }

    /**
     * Drops copies past {@link #maxTracked}: the oldest quiet one first (not known to run: nothing about the server is
     * lost), else the oldest that may still run, which is forgotten. Guarded by {@code this}.
     *
     * @return the copies forgotten while they may still run
     */
    private List<Copy> trimLocked() {
        List<Copy> dropped = List.of();
        while (open.size() > maxTracked) {
            Iterator<Copy> oldest = (quiet.isEmpty() ? mayRun : quiet).iterator();
            Copy copy = oldest.next();
            if (copy.forgetLocked()) {
                if (dropped.isEmpty()) {
                    dropped = new ArrayList<>(1);
                }
                dropped.add(copy);
            }
        }
        return dropped;
    }

    /** Stops tracking {@code copy}; guarded by {@code this}. */
    private void untrackLocked(Copy copy) {
        if (copy.tracked) {
            copy.tracked = false;
            open.remove(copy.key, copy);
            quiet.remove(copy);
            if (mayRun.remove(copy)) {
                running.decrementAndGet();
            }
        }
    }

    /** Counts copies forgotten while they may still run, and says so at most once a minute. */
    private void warnForgotten(List<Copy> dropped) {
        if (dropped.isEmpty()) {
            return;
        }
        forgotten.addAndGet(dropped.size());
        lastForgotten = clock.instant();
        long since = forgottenSinceWarn.addAndGet(dropped.size());
        long now = System.nanoTime();
        long due = nextWarn.get();
        if (now - due >= 0 && nextWarn.compareAndSet(due, now + WARN_INTERVAL_NANOS)) {
            forgottenSinceWarn.addAndGet(-since);
            log.warn(
                    "mongo-write-guard: the copy ledger forgot {} server cop{} that may still be running (since the last"
                            + " such warning; {} in all): more than {} copies were tracked at once, or a copy was"
                            + " older than {} min. The overlap gate answers 'blind' for a forgotten copy. Many copies"
                            + " the client gave up on point to a stalled shard or a socket timeout below the server"
                            + " deadline (mongodb.guard.copies.forgotten, mongodb.guard.copies.running)",
                    since,
                    since == 1 ? "y" : "ies",
                    forgotten.get(),
                    maxTracked,
                    RETENTION.toMinutes());
        }
    }

    /**
     * Copies the server may still be running now.
     *
     * @return a snapshot of each such copy
     */
    @Override
    public List<CopyRecord> possiblyRunning() {
        expire();
        List<Copy> copies;
        synchronized (this) {
            copies = new ArrayList<>(mayRun);
        }
        List<CopyRecord> result = new ArrayList<>(copies.size());
        for (Copy copy : copies) {
            result.add(copy.snapshot());
        }
        return result;
    }

    /**
     * The number of copies the server may be running now, across every write of this guard.
     *
     * @return the count, 0 when no client gave up on a copy that may still run
     */
    @Override
    public int possiblyRunningCount() {
        return running.get();
    }

    /**
     * The largest number of copies that may have been running at once, across every write of this guard.
     *
     * @return the highest count seen since the guard was built
     */
    @Override
    public int maxPossiblyRunning() {
        return maxRunning.get();
    }

    @Override
    public synchronized int trackedCount() {
        return open.size();
    }

    @Override
    public long forgottenCount() {
        return forgotten.get();
    }

    @Override
    public @Nullable Instant lastForgotten() {
        return lastForgotten;
    }

    /** The counts and up to 10 copies possibly running, e.g. for a log line: never the object's identity. */
    @Override
    public String toString() {
        List<CopyRecord> running = possiblyRunning();
        return "CopyLedger{possiblyRunning=" + running.size() + ", maxPossiblyRunning=" + maxPossiblyRunning()
                + ", tracked=" + trackedCount()
                + ", heldForSettle=" + heldCount()
                + (forgottenCount() == 0 ? "" : ", forgotten=" + forgottenCount())
                + (running.isEmpty() ? "" : ", copies=" + running.subList(0, Math.min(10, running.size())))
                + "}";
    }

    /**
     * Drops the copies first sent (or, never sent, started) more than {@link #RETENTION} ago. One that may still run
     * is forgotten, not taken for ended: the gate answers BLIND for it.
     */
    private void expire() {
        Instant oldest = clock.instant().minus(RETENTION);
        List<Copy> dropped = new ArrayList<>(0);
        synchronized (this) {
            for (Copy copy : new ArrayList<>(open.values())) {
                if (copy.since().isBefore(oldest) && copy.forgetLocked()) {
                    dropped.add(copy);
                }
            }
        }
        warnForgotten(dropped);
    }

    /**
     * What tracks a copy in {@link #open}: its session and transaction number, or, for a write sent without one, its
     * session and start time as a copy of its own. A record, not a concatenated string, since every copy makes one.
     */
    private record Key(String lsid, long number, boolean withoutTxnNumber) {}

    /** One copy while its write runs; the executor reports its sends here. */
    public final class Copy {
        private final Key key;
        private final String namespace;
        private final String lsid;
        private final @Nullable Long txnNumber;
        private final @Nullable String comment;
        private final Instant started = clock.instant();
        private @Nullable Instant firstSent;
        private int attempts;
        private int sends;
        /** Guarded by the ledger; volatile for the readers outside it. */
        private volatile boolean possiblyRunning;
        /** Whether the ledger tracks it now; guarded by the ledger. */
        private boolean tracked;
        /** Dropped by the ledger while it may still run, and not seen to end since; guarded by the ledger. */
        private volatile boolean forgotten;

        private @Nullable String serverOpId;
        private long secsRunning = -1;

        private Copy(String namespace, String lsid, @Nullable Long txnNumber, @Nullable String comment) {
            this.key = txnNumber == null ? new Key(lsid, System.nanoTime(), true) : new Key(lsid, txnNumber, false);
            this.namespace = namespace;
            this.lsid = lsid;
            this.txnNumber = txnNumber;
            this.comment = comment;
        }

        /** {@return the session id the copy is sent in} */
        public String lsid() {
            return lsid;
        }

        /** {@return the copy's transaction number, or null for a write sent without one} */
        public @Nullable Long txnNumber() {
            return txnNumber;
        }

        /**
         * The {@code comment} the copy was sent with, or null.
         *
         * @return the comment, or null
         */
        public @Nullable String comment() {
            return comment;
        }

        /** An attempt to send this copy starts; counted in the record's {@code attempts}. */
        public synchronized void attempt() {
            attempts++;
        }

        /** This copy was sent (again); the first send is the copy's start time. */
        public synchronized void sent() {
            sends++;
            if (firstSent == null) {
                firstSent = clock.instant();
            }
        }

        /**
         * The client stopped waiting: the server may still be running this copy. A copy the ledger dropped while it
         * was quiet is tracked again (and the oldest copy past the count dropped).
         */
        public void clientGaveUp() {
            List<Copy> dropped = List.of();
            synchronized (LiveCopyLedger.this) {
                if (possiblyRunning) {
                    return;
                }
                possiblyRunning = true;
                if (forgotten) {
                    // forgotten while it may run, and not seen to end since: it stays forgotten
                    return;
                }
                if (!tracked) {
                    open.put(key, this);
                    tracked = true;
                } else {
                    quiet.remove(this);
                }
                mayRun.add(this);
                int now = running.incrementAndGet();
                maxRunning.accumulateAndGet(now, Math::max);
                dropped = trimLocked();
            }
            warnForgotten(dropped);
        }

        /** A server answer or {@code currentOp} showed this copy is no longer running. */
        public void markEnded() {
            synchronized (LiveCopyLedger.this) {
                forgotten = false;
                if (possiblyRunning) {
                    possiblyRunning = false;
                    if (mayRun.remove(this)) {
                        running.decrementAndGet();
                        quiet.add(this);
                    }
                }
            }
            synchronized (this) {
                serverOpId = null;
            }
        }

        /**
         * Drops this copy from the ledger; guarded by the ledger.
         *
         * @return whether it may still run, so was forgotten
         */
        private boolean forgetLocked() {
            boolean mayStillRun = possiblyRunning;
            untrackLocked(this);
            if (mayStillRun) {
                forgotten = true;
            }
            return mayStillRun;
        }

        /**
         * Whether the ledger dropped this copy while the server may still run it (past its count or its retention),
         * and no answer since showed it ended: nothing proves it gone, and the overlap gate answers BLIND for it.
         *
         * @return true for a forgotten copy
         */
        public boolean isForgotten() {
            return forgotten;
        }

        /** When its age counts from: its first send, or its start if never sent. */
        private synchronized Instant since() {
            return firstSent != null ? firstSent : started;
        }

        /**
         * {@code currentOp} showed the copy running.
         *
         * @param opid the operation id as the server shows it: a number on mongod, {@code "<shard>:<opid>"} through
         *             mongos
         * @param secs {@code secs_running}, or -1 when not shown (the server has not started the operation's clock)
         */
        public synchronized void seenRunning(String opid, long secs) {
            serverOpId = opid;
            secsRunning = secs;
        }

        /** The copy is done with: dropped from the ledger unless it may still be running. */
        public void close() {
            synchronized (LiveCopyLedger.this) {
                if (!possiblyRunning) {
                    untrackLocked(this);
                }
            }
        }

        /** {@return whether the server may still be running this copy} */
        public boolean isPossiblyRunning() {
            return possiblyRunning;
        }

        /** {@return how often this copy was sent} */
        public synchronized int sends() {
            return sends;
        }

        /** {@return this copy as it is now} */
        public synchronized CopyRecord snapshot() {
            return new CopyRecord(
                    namespace,
                    lsid,
                    txnNumber,
                    comment,
                    attempts,
                    sends,
                    firstSent == null ? clock.instant() : firstSent,
                    possiblyRunning,
                    serverOpId,
                    secsRunning);
        }
    }
}
