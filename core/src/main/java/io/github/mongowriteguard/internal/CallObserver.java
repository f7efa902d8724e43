package io.github.mongowriteguard.internal;

import io.github.mongowriteguard.metrics.CallOutcome;
import java.util.function.Function;

/**
 * Runs one guarded call inside an observation (see {@link MicrometerCallObserver}), or as it is ({@link #NONE}).
 * This interface names no Micrometer type, so the core runs without Micrometer on the class path.
 */
public interface CallObserver {

    /** Observes nothing. */
    CallObserver NONE = new CallObserver() {
        @Override
        public <R> R observe(String namespace, String operation, Function<OutcomeSink, R> call) {
            return call.apply(outcome -> {});
        }
    };

    /**
     * Runs {@code call}, which reports its outcome to the sink before it returns (or throws, when it knows it).
     *
     * @param namespace {@code db.collection}
     * @param operation the caller's method
     * @param call      the guarded call
     * @param <R>       what the call returns
     * @return what the call returned
     */
    <R> R observe(String namespace, String operation, Function<OutcomeSink, R> call);

    /**
     * As {@link #observe}, for a call that completes later ({@code call} returns when its first part ran; what it
     * completes with or fails with ends the observation). Bad input {@code call} throws is thrown, observed.
     *
     * @param namespace {@code db.collection}
     * @param operation the caller's method
     * @param call      the guarded call
     * @param <R>       what the call completes with
     * @return what the call returned
     */
    default <R> java.util.concurrent.CompletableFuture<R> observeAsync(
            String namespace,
            String operation,
            Function<OutcomeSink, ? extends java.util.concurrent.CompletionStage<R>> call) {
        return observe(namespace, operation, call).toCompletableFuture();
    }

    /**
     * Carries the calling thread's current observation to a task that another thread runs for this call (a command
     * sent side by side with others), so that what that thread observes nests under the call as on the calling thread.
     * Call it on the calling thread.
     *
     * @param task the task
     * @param <R>  what the task returns
     * @return the task, run in the calling thread's observation scope
     */
    default <R> java.util.function.Supplier<R> propagate(java.util.function.Supplier<R> task) {
        return task;
    }

    /** Where a call reports how it ended. */
    interface OutcomeSink {
        /**
         * @param outcome how the call ended
         */
        void outcome(CallOutcome outcome);

        /**
         * How the call's bulk was planned; not called for a call that planned nothing.
         *
         * @param mode the plan's mode
         */
        default void planMode(io.github.mongowriteguard.bulk.PlanMode mode) {}
    }
}
