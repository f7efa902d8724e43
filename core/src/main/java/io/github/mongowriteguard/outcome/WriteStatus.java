package io.github.mongowriteguard.outcome;

/** What became of one write of a guarded bulk. Every index of the caller's bulk has exactly one. */
public enum WriteStatus {
    /** The server ran it and confirmed it (an update that matched nothing ran too). */
    APPLIED,
    /**
     * Not sent: in an ordered request an earlier write on the same key did not apply, or the call stopped (a whole
     * command failed, an outcome became unknown, or the caller's ORDERED bulk stopped at an error). Safe to send again.
     */
    SKIPPED,
    /** The server said it did not apply it (or it was never sent); see the error code and whether a retry is safe. */
    FAILED,
    /**
     * Nothing proves whether it was applied: the client stopped waiting (the server may still be applying it), a
     * resend could not show what the first send did, or the server interrupted a command part-way through. Whether
     * sending it again is safe depends on the write: see {@link IndexOutcome#retrySafe()}.
     */
    UNKNOWN,
    /**
     * Not sent, by the caller's choice ({@code WriteGuardSettings.lastWriteWins}): a later full replacement or delete
     * of the same {@code _id} in the bulk, at {@link IndexOutcome#relatedIndex()}, decides the document. Never applied;
     * its own error, had it been sent, is never seen. Do not send it again after that later write.
     */
    SUPERSEDED
}
