package io.github.mongowriteguard.exception;

import io.github.mongowriteguard.copies.CopyRecord;
import io.github.mongowriteguard.outcome.WriteOutcome;

/**
 * A retry was refused because an earlier copy of the same write is still running on the server (work that ignores
 * its deadline and kills, like a storage-engine loop): starting another copy could apply the write twice or run two
 * side by side. Dead-letter the record; the running copy may still apply it. {@link #copy()} names it.
 */
public final class CopyStillRunningException extends WriteGuardException {
    private static final long serialVersionUID = 1L;
    /** The copy that still runs. */
    private final CopyRecord copy;

    /**
     * A retry refused because {@code copy} still runs.
     *
     * @param message what runs and what the caller can do
     * @param copy    the copy the gate found running
     * @param outcome what became of every write of the call
     */
    public CopyStillRunningException(String message, CopyRecord copy, WriteOutcome<?> outcome) {
        super(message, outcome);
        this.copy = copy;
    }

    /** {@return the copy that still runs (server opid, seconds running)} */
    public CopyRecord copy() {
        return copy;
    }
}
