package io.github.mongowriteguard.internal.copies;

import io.github.mongowriteguard.copies.CopyLedger;
import io.github.mongowriteguard.copies.CopyRecord;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * The {@link CopyLedger} of a guard, and where its executors report each copy's attempts and sends ({@link #start}).
 * Not API.
 */
public final class LiveCopyLedger implements CopyLedger {

    private static final long EXPIRY_INTERVAL_NANOS = 1_000_000_000L;

    private final Map<Key, Copy> open = new ConcurrentHashMap<>();
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

    /** A ledger whose settle hold has the default bounds. */
    public LiveCopyLedger() {
        this(new SettleHold(
                io.github.mongowriteguard.WriteGuardSettings.DEFAULT_SETTLE_HOLD_MAX_COPIES,
                io.github.mongowriteguard.WriteGuardSettings.DEFAULT_SETTLE_HOLD_MAX_AGE));
    }

    /** @param settleHold where the guard holds the commands it may settle */
    public LiveCopyLedger(SettleHold settleHold) {
        this.settleHold = settleHold;
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
        Copy tracked = open.get(new Key(lsid, txnNumber, false));
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
        open.put(copy.key, copy);
        return copy;
    }

    /**
     * Copies the server may still be running now.
     *
     * @return a snapshot of each such copy
     */
    @Override
    public List<CopyRecord> possiblyRunning() {
        expire();
        List<CopyRecord> result = new ArrayList<>();
        for (Copy copy : open.values()) {
            if (copy.possiblyRunning) {
                result.add(copy.snapshot());
            }
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
    public int trackedCount() {
        return open.size();
    }

    /** The counts and up to 10 copies possibly running, e.g. for a log line: never the object's identity. */
    @Override
    public String toString() {
        List<CopyRecord> running = possiblyRunning();
        return "CopyLedger{possiblyRunning=" + running.size() + ", maxPossiblyRunning=" + maxPossiblyRunning()
                + ", tracked=" + trackedCount()
                + ", heldForSettle=" + heldCount()
                + (running.isEmpty() ? "" : ", copies=" + running.subList(0, Math.min(10, running.size())))
                + "}";
    }

    private void expire() {
        Instant oldest = Instant.now().minus(RETENTION);
        open.values().removeIf(copy -> {
            if (copy.firstSent != null && copy.firstSent.isBefore(oldest)) {
                copy.markEnded();
                return true;
            }
            return false;
        });
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
        private @Nullable Instant firstSent;
        private int attempts;
        private int sends;
        private boolean possiblyRunning;
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
                firstSent = Instant.now();
            }
        }

        /** The client stopped waiting: the server may still be running this copy. */
        public synchronized void clientGaveUp() {
            if (!possiblyRunning) {
                possiblyRunning = true;
                int now = running.incrementAndGet();
                maxRunning.accumulateAndGet(now, Math::max);
            }
        }

        /** A server answer or {@code currentOp} showed this copy is no longer running. */
        public synchronized void markEnded() {
            if (possiblyRunning) {
                possiblyRunning = false;
                running.decrementAndGet();
            }
            serverOpId = null;
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

        /** The copy is done with: forgotten unless it may still be running. */
        public void close() {
            if (!isPossiblyRunning()) {
                open.remove(key);
            }
        }

        /** {@return whether the server may still be running this copy} */
        public synchronized boolean isPossiblyRunning() {
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
                    firstSent == null ? Instant.now() : firstSent,
                    possiblyRunning,
                    serverOpId,
                    secsRunning);
        }
    }
}
