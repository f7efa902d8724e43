package io.github.mongowriteguard.metrics;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names and key values of the observation of a guarded call. {@link DefaultGuardObservationConvention} is the
 * default; give your own with {@code WriteGuard.builder().observationConvention(...)}. Keep key values bounded:
 * never document contents, ids or connection strings.
 *
 * <p>Implemented by applications (a convention of the application's own; new methods come with defaults).
 */
public interface GuardObservationConvention extends ObservationConvention<GuardObservationContext> {

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof GuardObservationContext;
    }
}
