package io.github.mongowriteguard.internal.execution;

/** A result the guard's resilience4j retry predicate can judge. */
public interface Retryable {
    boolean worthRetrying();
}
