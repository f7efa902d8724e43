package io.github.mongowriteguard.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The guard's time: the monotonic clock its deadlines and gate waits are measured on, and the one place a guard thread
 * waits (the retry backoff, the overlap gate's wait for a deadline), or, for a loop driven by completions, the timer
 * that ends a backoff without holding a thread ({@link #delayNanos}). {@link #SYSTEM} in a guard; tests give a clock
 * that moves only when slept on, so that a table of send results runs without waiting. Not API.
 */
public interface GuardTime {
    /** {@link System#nanoTime()} and {@link TimeUnit#sleep}. */
    GuardTime SYSTEM = new GuardTime() {
        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        @Override
        public boolean sleepNanos(long nanos) {
            try {
                TimeUnit.NANOSECONDS.sleep(nanos);
                return true;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
    };

    /** {@return the monotonic time in nanoseconds, as {@link System#nanoTime()}} */
    long nanoTime();

    /**
     * Waits {@code nanos} on the calling thread.
     *
     * @param nanos how long, more than 0
     * @return false when the thread was interrupted (its interrupt flag kept): the caller stops waiting and gives up
     */
    boolean sleepNanos(long nanos);

    /**
     * A wait that holds no thread: completes with true on {@code then} once {@code nanos} have passed (the JDK's
     * {@link CompletableFuture#delayedExecutor} timer, whose one daemon thread only hands the completion to
     * {@code then}).
     *
     * @param nanos how long, more than 0
     * @param then  where the completion runs
     * @return completed with true after the wait (a timer is not interrupted)
     */
    default CompletableFuture<Boolean> delayNanos(long nanos, Executor then) {
        return CompletableFuture.supplyAsync(
                () -> true, CompletableFuture.delayedExecutor(nanos, TimeUnit.NANOSECONDS, then));
    }

    /**
     * Waits until {@link #nanoTime()} reaches {@code deadline}.
     *
     * @param deadline a {@link #nanoTime()} value
     * @return false when interrupted (the interrupt flag kept)
     */
    default boolean sleepUntil(long deadline) {
        long left;
        while ((left = deadline - nanoTime()) > 0) {
            if (!sleepNanos(left)) {
                return false;
            }
        }
        return true;
    }
}
