package io.github.mongowriteguard.spring.data;

import io.github.mongowriteguard.exception.WriteGuardException;
import io.github.mongowriteguard.outcome.WriteOutcome;
import org.springframework.dao.TransientDataAccessException;

/**
 * The guard's final answer for a call that may be sent again as a whole: no write of it was applied except, perhaps,
 * writes that a new copy cannot apply twice ({@code retrySafe()} of each), and no copy of it is or may still be
 * running. E.g. a single-document write the server stopped at its deadline before it ran. The cause is the guard's exception; {@link #outcome()} the outcome.
 */
public final class GuardedWriteRetryableException extends TransientDataAccessException
        implements GuardedDataAccessException {
    private static final long serialVersionUID = 1L;
    private final transient WriteOutcome<?> outcome;

    /**
     * The translation of a guard exception whose outcome is safe to send again.
     *
     * @param cause   the guard's exception
     * @param outcome its outcome
     */
    GuardedWriteRetryableException(WriteGuardException cause, WriteOutcome<?> outcome) {
        super(
                cause.getMessage() + " (sending the call again is safe: " + GuardedWriteOutcomes.summary(outcome) + ")",
                cause);
        this.outcome = outcome;
    }

    @Override
    public WriteOutcome<?> outcome() {
        return outcome;
    }
}
