package io.github.mongowriteguard.copies;

import io.github.mongowriteguard.WriteGuardException;
import io.github.mongowriteguard.outcome.WriteOutcome;

/**
 * A retry was refused because an earlier copy of the same write is still running on the server (work that ignores
 * its deadline and kills, like a storage-engine loop): starting another copy could apply the write twice or run two
 * side by side. Dead-letter the record; the running copy may still apply it. {@link #copy()} names it.
 */
public final class CopyStillRunningException extends WriteGuardException {
    private static final long serialVersionUID = 1L;
    private final CopyRecord copy;

    public CopyStillRunningException(String message, CopyRecord copy, WriteOutcome<?> outcome) {
        super(message, outcome);
        this.copy = copy;
    }

    public CopyRecord copy() {
        return copy;
    }
}
