package io.github.mongowriteguard.copies;

import java.time.Duration;
import java.util.List;

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
 * <p>Copies that ended are forgotten; possibly-running ones are kept for {@link #RETENTION} at most: a copy whose client
 * stopped waiting counts as possibly running (and in the {@code mongodb.guard.copies.running} gauge) until a later
 * send of it gets an answer or the overlap gate's {@code currentOp} shows it gone, even if it ended on the server
 * before. {@code toString()} prints the counts and the copies possibly running.
 */
public interface CopyLedger {
    /** How long a copy that may still be running is remembered. */
    Duration RETENTION = Duration.ofMinutes(10);

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
     * The number of commands whose outcome is UNKNOWN that the guard holds for {@code settle} now (each keeps its
     * session open), bounded by {@code WriteGuardSettings.getSettleHoldMaxCopies()} and
     * {@code getSettleHoldMaxAge()}; the {@code mongodb.guard.copies.held} gauge.
     *
     * @return the count, 0 when nothing waits to be settled
     */
    int heldCount();
}
