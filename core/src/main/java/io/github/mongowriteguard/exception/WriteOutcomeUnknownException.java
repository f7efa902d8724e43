package io.github.mongowriteguard.exception;

import io.github.mongowriteguard.outcome.WriteOutcome;
import org.jspecify.annotations.Nullable;

/**
 * The client stopped waiting (socket timeout, closed connection) before the server answered: the outcome is
 * unknown and the server may still be applying the write. A socket timeout is not a cancellation. For
 * multi-document writes an unknown number of documents may have been changed.
 *
 * <p>Settle it, never send the write again as a new one: {@code WriteGuard.settle(e.outcome())} sends the same server
 * copies again, which the server answers from its record of what they did; each
 * {@link io.github.mongowriteguard.outcome.IndexOutcome#settleable() settleable} write becomes APPLIED or FAILED.
 */
public final class WriteOutcomeUnknownException extends WriteGuardException {
    private static final long serialVersionUID = 1L;

    /**
     * The client stopped waiting before the server answered.
     *
     * @param message what is unknown
     * @param outcome what became of every write of the call
     * @param cause   the driver's exception, if any
     */
    public WriteOutcomeUnknownException(String message, WriteOutcome<?> outcome, @Nullable Throwable cause) {
        super(message, outcome);
        if (cause != null) {
            initCause(cause);
        }
    }
}
