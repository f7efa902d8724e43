package io.github.mongowriteguard.deadline;

import org.jspecify.annotations.Nullable;
import io.github.mongowriteguard.WriteGuardException;
import io.github.mongowriteguard.outcome.WriteOutcome;

/**
 * The client stopped waiting (socket timeout, closed connection) before the server answered: the outcome is
 * unknown and the server may still be applying the write. A socket timeout is not a cancellation. For
 * multi-document writes an unknown number of documents may have been changed.
 */
public final class WriteOutcomeUnknownException extends WriteGuardException {
    private static final long serialVersionUID = 1L;

    public WriteOutcomeUnknownException(String message, WriteOutcome<?> outcome, @Nullable Throwable cause) {
        super(message, outcome);
        if (cause != null) {
            initCause(cause);
        }
    }
}
