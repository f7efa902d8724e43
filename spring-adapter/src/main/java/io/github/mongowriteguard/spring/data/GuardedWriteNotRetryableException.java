package io.github.mongowriteguard.spring.data;

import io.github.mongowriteguard.exception.WriteGuardException;
import io.github.mongowriteguard.outcome.WriteOutcome;
import org.springframework.dao.NonTransientDataAccessException;

/**
 * The guard's final answer for a call that must not be sent again as a whole: a copy of it is still running on the
 * server ({@code CopyStillRunningException}) or may be (the client stopped waiting for it), a write may have been
 * applied and a new copy could apply it again (an
 * UNKNOWN {@code $inc}, a multi-document write), or some writes were applied. The guard has already retried what was
 * safe, as the same server copy. Read {@link #outcome()} (per index: status, {@code retrySafe()}) to decide what to
 * send again, later, or to dead-letter. The cause is the guard's exception.
 */
public final class GuardedWriteNotRetryableException extends NonTransientDataAccessException
        implements GuardedDataAccessException {
    private static final long serialVersionUID = 1L;
    private final transient WriteOutcome<?> outcome;

    /**
     * The translation of a guard exception that must not be resent.
     *
     * @param cause   the guard's exception
     * @param outcome its outcome
     */
    GuardedWriteNotRetryableException(WriteGuardException cause, WriteOutcome<?> outcome) {
        super(
                cause.getMessage() + " (do not send the call again: " + GuardedWriteOutcomes.summary(outcome) + ")",
                cause);
        this.outcome = outcome;
    }

    @Override
    public WriteOutcome<?> outcome() {
        return outcome;
    }
}
