package io.github.mongowriteguard.internal;

import io.github.mongowriteguard.metrics.DefaultGuardObservationConvention;
import io.github.mongowriteguard.metrics.GuardObservationContext;
import io.github.mongowriteguard.metrics.GuardObservationConvention;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * One Micrometer {@link Observation} per guarded call: started before anything is sent, in scope while the call runs
 * (the registry's current observation, so command observations that take it as parent nest under it), stopped when
 * it ends, with {@link Observation#error} for what the call throws.
 */
public final class MicrometerCallObserver implements CallObserver {
    private final ObservationRegistry registry;
    private final @Nullable GuardObservationConvention convention;

    private MicrometerCallObserver(ObservationRegistry registry, @Nullable GuardObservationConvention convention) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.convention = convention;
    }

    /**
     * Takes {@code Object}s so that callers without Micrometer on the class path never load its types.
     *
     * @param registry   an {@link ObservationRegistry}
     * @param convention a {@link GuardObservationConvention}, or null for {@link DefaultGuardObservationConvention}
     * @return the observer
     */
    public static CallObserver create(Object registry, @Nullable Object convention) {
        return new MicrometerCallObserver((ObservationRegistry) registry, (GuardObservationConvention) convention);
    }

    @Override
    public <R> java.util.function.Supplier<R> propagate(java.util.function.Supplier<R> task) {
        Observation current = registry.getCurrentObservation();
        if (current == null) {
            return task;
        }
        return () -> {
            try (Observation.Scope scope = current.openScope()) {
                return task.get();
            }
        };
    }

    @Override
    public <R> R observe(String namespace, String operation, Function<OutcomeSink, R> call) {
        GuardObservationContext context = new GuardObservationContext(namespace, operation);
        Observation observation = start(context);
        try {
            OutcomeSink sink = sink(context);
            return observation.scoped(() -> call.apply(sink));
        } catch (RuntimeException | Error e) {
            observation.error(e);
            throw e;
        } finally {
            observation.stop();
        }
    }

    /**
     * The call's observation is in scope while its first part runs on the calling thread (over the synchronous driver,
     * the whole call), and stopped when the call completes, with {@link Observation#error} for what it fails with.
     */
    @Override
    public <R> java.util.concurrent.CompletableFuture<R> observeAsync(
            String namespace,
            String operation,
            Function<OutcomeSink, ? extends java.util.concurrent.CompletionStage<R>> call) {
        GuardObservationContext context = new GuardObservationContext(namespace, operation);
        Observation observation = start(context);
        java.util.concurrent.CompletableFuture<R> started;
        try {
            OutcomeSink sink = sink(context);
            started = observation.scoped(() -> call.apply(sink)).toCompletableFuture();
        } catch (RuntimeException | Error e) {
            observation.error(e);
            observation.stop();
            throw e;
        }
        return started.whenComplete((result, error) -> {
            if (error != null) {
                Throwable cause = error;
                while (cause instanceof java.util.concurrent.CompletionException && cause.getCause() != null) {
                    cause = cause.getCause();
                }
                observation.error(cause);
            }
            observation.stop();
        });
    }

    private Observation start(GuardObservationContext context) {
        return Observation.createNotStarted(
                        convention, DefaultGuardObservationConvention.INSTANCE, () -> context, registry)
                .start();
    }

    private static OutcomeSink sink(GuardObservationContext context) {
        return new OutcomeSink() {
            @Override
            public void outcome(io.github.mongowriteguard.metrics.CallOutcome outcome) {
                context.setOutcome(outcome);
            }

            @Override
            public void planMode(io.github.mongowriteguard.bulk.PlanMode mode) {
                context.setPlanMode(mode);
            }
        };
    }
}
