package io.github.mongowriteguard.outcome;

/** What became of one write of a guarded bulk. Every index of the caller's bulk has exactly one. */
public enum WriteStatus {
    /** The server ran it and confirmed it (an update that matched nothing ran too). */
    APPLIED,
    /**
     * Not sent: in an ordered request an earlier write on the same key did not apply, an earlier write on the same
     * key is UNKNOWN (held back until it is settled: {@link IndexOutcome#relatedIndex()}), or the call stopped (a whole
     * command failed, an outcome became unknown, or the caller's ORDERED bulk stopped at an error). Safe to send again,
     * after the write at {@link IndexOutcome#relatedIndex()} is settled.
     */
    SKIPPED,
    /** The server said it did not apply it (or it was never sent); see the error code and whether a retry is safe. */
    FAILED,
    /**
     * Nothing proves whether it was applied: the client stopped waiting (the server may still be applying it), a
     * resend could not show what the first send did, or the server interrupted a command part-way through. Settle it
     * ({@code WriteGuard.settle}, when {@link IndexOutcome#settleable()}): the guard sends the same server copy again,
     * which the server answers from its record of what the copy did, so the write becomes APPLIED or FAILED without a
     * second copy. Never send it again as a new write before that: it could apply twice, or after later writes on the
     * same document. A write that cannot be settled says why in {@link IndexOutcome#message()}.
     */
    UNKNOWN,
    /**
     * Not sent, by the caller's choice ({@code WriteGuardSettings.lastWriteWins}): a later full replacement or delete
     * of the same {@code _id} in the bulk, at {@link IndexOutcome#relatedIndex()}, decides the document. Never applied;
     * its own error, had it been sent, is never seen. Do not send it again after that later write.
     */
    SUPERSEDED
}
