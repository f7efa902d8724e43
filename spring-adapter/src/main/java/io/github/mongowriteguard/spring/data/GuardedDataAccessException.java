package io.github.mongowriteguard.spring.data;

import io.github.mongowriteguard.outcome.WriteOutcome;

/**
 * A guarded write's final answer as Spring's {@code DataAccessException}, with the guard's {@link WriteOutcome}: what
 * each write of the call came to. Two classes implement it, one per answer to "may the caller send the whole call
 * again?": {@link GuardedWriteRetryableException} (a {@code TransientDataAccessException}: the guard says a resend
 * cannot apply a write twice) and {@link GuardedWriteNotRetryableException} (a {@code NonTransientDataAccessException}:
 * a resend could start a second server copy beside one that may still run, or apply a write twice). Retry frameworks
 * that retry only transient data-access exceptions (Spring Retry's and resilience4j's usual configuration, the
 * README's loop) therefore never resend what the guard refused to. {@link GuardedWriteOutcomes#find(Throwable)} finds
 * the outcome in any exception.
 *
 * <p>Implemented by the library only (callers catch the exceptions that carry it).
 */
public interface GuardedDataAccessException {
    /**
     * What the call did, index by index.
     *
     * @return the guard's outcome of the call
     */
    WriteOutcome<?> outcome();
}
