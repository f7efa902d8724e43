package io.github.mongowriteguard.internal;

/** A result the guard's resilience4j retry predicate can judge: the runtime's {@code Retry} asks every result this. */
public interface Retryable {
    boolean worthRetrying();
}
