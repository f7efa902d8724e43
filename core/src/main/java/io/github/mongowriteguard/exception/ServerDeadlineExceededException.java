package io.github.mongowriteguard.exception;

import io.github.mongowriteguard.outcome.WriteOutcome;

/**
 * The server stopped the write at its deadline ({@code maxTimeMS}, error 50 {@code MaxTimeMSExpired}) and said so:
 * the write did not run past the deadline, no copy of it is left running, and sending it again is safe for a
 * single-document write.
 */
public final class ServerDeadlineExceededException extends WriteGuardException {
    private static final long serialVersionUID = 1L;

    /**
     * The server stopped the write at its deadline.
     *
     * @param message what was stopped
     * @param outcome what became of every write of the call
     */
    public ServerDeadlineExceededException(String message, WriteOutcome<?> outcome) {
        super(message, outcome);
    }
}
