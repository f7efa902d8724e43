package io.github.mongowriteguard.copies;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The guard's live view of server copies: every write command it sends is one copy, named by its
 * {@code (lsid, txnNumber)}; a retry of a single-document write resends the same copy. A copy is <em>possibly
 * running</em> from the moment the client stops waiting for it (socket timeout, closed connection) until a later
 * send of it gets a server answer or {@code currentOp} shows it gone.
 *
 * <pre>{@code
 * guard.getCopies().possiblyRunning().forEach(copy -> log.warn("still on the server: {}", copy));
 * }</pre>
 *
 * <p>Copies that ended are dropped; possibly-running ones are kept for {@link #RETENTION} at most, and at most
 * {@link #MAX_TRACKED} copies are tracked at once (past it the oldest copy not known to run goes first, then the oldest
 * possibly-running one); a copy dropped while it may still run is <em>forgotten</em>: counted in
 * {@link #forgottenCount()} and logged, and the overlap gate answers BLIND for it, never "gone". A copy whose client
 * stopped waiting counts as possibly running (and in the {@code mongodb.guard.copies.running} gauge) until a later
 * send of it gets an answer or the overlap gate's {@code currentOp} shows it gone, even if it ended on the server
 * before. {@code toString()} prints the counts and the copies possibly running.
 *
 * <p>Implemented by the library only (callers read it; it may gain methods).
 */
public interface CopyLedger {
    /** How long a copy that may still be running is remembered. */
    Duration RETENTION = Duration.ofMinutes(10);

    /**
     * The most copies a guard tracks at once: {@value}. Copies being sent are bounded by the application's concurrency
     * (threads times {@code parallelShardCommands}); the rest are copies the client gave up on, kept for
     * {@link #RETENTION}. 10,000 covers 16 copies given up on per second for the whole retention, far more than a
     * stalled shard costs an instance whose writes carry a server deadline, at about 0.5 KB each (5 MB).
     */
    int MAX_TRACKED = 10_000;

    /**
     * Copies the server may still be running now.
     *
     * @return a snapshot of each such copy
     */
    List<CopyRecord> possiblyRunning();

    /**
     * The number of copies the server may be running now, across every write of this guard.
     *
     * @return the count, 0 when no client gave up on a copy that may still run
     */
    int possiblyRunningCount();

    /**
     * The largest number of copies that may have been running at once, across every write of this guard.
     *
     * @return the highest count seen since the guard was built
     */
    int maxPossiblyRunning();

    /**
     * The number of copies the guard tracks now: copies being sent and copies that may still run. Flat under a steady
     * load (the lab's {@code soak} checks it over millions of writes).
     *
     * @return the count, 0 when no write is in flight and none may still run
     */
    int trackedCount();

    /**
     * The number of copies the guard stopped tracking while the server may still run them: past {@link #MAX_TRACKED}
     * copies at once, or past {@link #RETENTION}; the {@code mongodb.guard.copies.forgotten} counter. The overlap gate
     * answers BLIND for such a copy.
     *
     * @return the count since the guard was built, 0 when none was forgotten
     */
    long forgottenCount();

    /**
     * When the guard last forgot a copy that may still run (see {@link #forgottenCount()}); Actuator's guard health
     * is {@code UNKNOWN} for {@link #RETENTION} after it.
     *
     * @return the time of the last such forget, or null when none was forgotten
     */
    @Nullable
    Instant lastForgotten();

    /**
     * The number of commands whose outcome is UNKNOWN that the guard holds for {@code settle} now (each keeps its
     * session open), bounded by {@code WriteGuardSettings.getSettleHoldMaxCopies()} and
     * {@code getSettleHoldMaxAge()}; the {@code mongodb.guard.copies.held} gauge.
     *
     * @return the count, 0 when nothing waits to be settled
     */
    int heldCount();
}
