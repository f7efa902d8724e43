package io.github.mongowriteguard.internal.execution;

import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;

/**
 * The guard's own threads of a transport whose answers come on the driver's threads (the reactive guard's scheduler):
 * where a call goes on when a step may block. A step that may block runs at once when the calling thread is already
 * one of them ({@link #isCurrentThread()}), else it is handed to them. Which thread completes a future is a race, so
 * the guard never relies on having been handed over earlier: every step that may block asks again
 * ({@code CopySender.Driving.mayBlock}). Not API.
 */
public interface Resume extends Executor {

    /** {@return whether the calling thread is one of these threads} */
    boolean isCurrentThread();

    /**
     * The threads of {@code executor}, told apart by {@code current}.
     *
     * @param executor runs the steps handed to it
     * @param current  whether the calling thread is one of the executor's
     * @return the guard's threads
     */
    static Resume of(Executor executor, BooleanSupplier current) {
        Objects.requireNonNull(executor, "executor");
        Objects.requireNonNull(current, "current");
        return new Resume() {
            @Override
            public void execute(Runnable task) {
                executor.execute(task);
            }

            @Override
            public boolean isCurrentThread() {
                return current.getAsBoolean();
            }
        };
    }
}
