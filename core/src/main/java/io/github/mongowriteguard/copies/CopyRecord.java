package io.github.mongowriteguard.copies;

import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * One server copy of a guarded write, as the guard knows it: the {@code (lsid, txnNumber)} it runs under, how often
 * it was sent, and whether it may still be running (the client stopped waiting and nothing showed that it ended).
 * Never contains document contents.
 *
 * @param namespace        {@code db.collection}
 * @param lsid             the session id (a UUID)
 * @param txnNumber        the transaction number, or null for a multi-document write (no retryable-write identity)
 * @param comment          the {@code comment} it was sent with (servers 4.4+), or null
 * @param attempts         attempts that sent this copy
 * @param sends            sends of this copy (all attempts)
 * @param firstSent        when it was first sent
 * @param possiblyRunning  true while the server may still be running it
 * @param serverOpId       the server's operation id, if {@code currentOp} showed it running, else null: a number
 *                         on mongod ({@code "1234"}), {@code "<shard>:<opid>"} through mongos ({@code "shard01:1234"})
 * @param secsRunning      how long the server said it had been running, or -1 (not shown before the server started
 *                         the operation's clock, e.g. while a fail point holds it; a write queued at its session's
 *                         check-out already shows it)
 */
public record CopyRecord(
        String namespace,
        String lsid,
        @Nullable Long txnNumber,
        @Nullable String comment,
        int attempts,
        int sends,
        Instant firstSent,
        boolean possiblyRunning,
        @Nullable String serverOpId,
        long secsRunning) {

    @Override
    public String toString() {
        return "copy " + lsid + (txnNumber == null ? "" : "#" + txnNumber) + " on " + namespace + " (" + attempts
                + " attempts, " + sends + " sends" + (possiblyRunning ? ", possibly still running" : ", ended")
                + (serverOpId == null ? "" : ", server opid " + serverOpId + " running " + secsRunning + " s") + ")";
    }
}
