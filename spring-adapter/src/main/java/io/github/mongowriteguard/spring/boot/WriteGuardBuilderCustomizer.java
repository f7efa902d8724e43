package io.github.mongowriteguard.spring.boot;

import io.github.mongowriteguard.WriteGuard;

/**
 * Customizes the auto-configured {@link WriteGuard} before it is built, e.g. to add a
 * {@link io.github.mongowriteguard.metrics.GuardEventListener}. Declare one or more as beans.
 *
 * <p>Implemented by applications (as beans).
 */
@FunctionalInterface
public interface WriteGuardBuilderCustomizer {
    /**
     * Changes the builder before the guard is built.
     *
     * @param builder the auto-configured guard's builder, its settings already taken from the properties
     */
    void customize(WriteGuard.Builder builder);
}
