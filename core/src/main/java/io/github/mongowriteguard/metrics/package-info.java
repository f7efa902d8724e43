/**
 * What guarded writes did, as events ({@link io.github.mongowriteguard.metrics.GuardEventListener}), as an Observation
 * ({@link io.github.mongowriteguard.metrics.GuardObservationConvention}) and as Micrometer meters, which the guard
 * registers itself from {@code WriteGuard.builder().meterRegistry(..)}; Micrometer is optional.
 */
@NullMarked
package io.github.mongowriteguard.metrics;

import org.jspecify.annotations.NullMarked;
