package io.github.mongowriteguard.internal.execution;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The guard's threads for sending one call's per-shard commands side by side (see {@link SideBySideKeyRuns}): at most
 * {@code parallel - 1} daemon threads named {@code mongo-write-guard-shard-sender-N}, for the whole guard, started when
 * first needed and ended after 30 s idle, so nothing is left to close. The calling thread sends the first command
 * itself; a command for which no thread is free is sent by the calling thread too, after the first: never queued
 * behind another call's, so a busy guard degrades to today's one-after-another sending, never to a wait.
 *
 * <p>Only the network send runs on these threads: the caller records every outcome itself, in a fixed order.
 */
final class SideBySideSends {
    private static final AtomicInteger THREADS = new AtomicInteger();

    private final int parallel;
    private final @Nullable ThreadPoolExecutor pool;

    /** @param parallel the most commands of one call in flight at once; 1 for none side by side */
    public SideBySideSends(int parallel) {
        this.parallel = parallel;
        this.pool = parallel <= 1
                ? null
                : new ThreadPoolExecutor(0, parallel - 1, 30, TimeUnit.SECONDS, new SynchronousQueue<>(), task -> {
                    Thread thread = new Thread(task, "mongo-write-guard-shard-sender-" + THREADS.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                });
    }

    /** Whether commands are sent side by side at all (a parallelism above 1). */
    boolean enabled() {
        return pool != null;
    }

    /**
     * How one task ended.
     *
     * @param value        what it returned, or null
     * @param failure      what it threw, or null
     * @param stillRunning set when the calling thread was interrupted before the task ended: it may still be running
     */
    record Ended<R>(
            @Nullable R value,
            @Nullable Throwable failure,
            @Nullable CompletableFuture<R> stillRunning) {}

    /**
     * Runs the tasks at once: the first on the calling thread, up to {@code parallel - 1} others on the guard's
     * threads, the rest (and any for which no thread is free) on the calling thread after the first; then waits for
     * all. An interrupt of the calling thread stops the waiting: the tasks not ended then come back with
     * {@link Ended#stillRunning()}, and the thread's interrupt flag is set again.
     *
     * @return how each task ended, in the order given
     */
    <R> List<Ended<R>> run(List<Supplier<R>> tasks) {
        List<CompletableFuture<R>> futures = new ArrayList<>(tasks.size());
        List<Integer> onCaller = new ArrayList<>();
        for (int i = 0; i < tasks.size(); i++) {
            CompletableFuture<R> future = null;
            if (i > 0 && i < parallel && pool != null) {
                try {
                    future = CompletableFuture.supplyAsync(tasks.get(i), pool);
                } catch (RejectedExecutionException busy) {
                    // every thread is sending another call's command: this one goes on the calling thread
                }
            }
            if (future == null) {
                future = new CompletableFuture<>();
                onCaller.add(i);
            }
            futures.add(future);
        }
        for (int i : onCaller) {
            try {
                futures.get(i).complete(tasks.get(i).get());
            } catch (RuntimeException | Error e) {
                futures.get(i).completeExceptionally(e);
            }
        }
        List<Ended<R>> ended = new ArrayList<>(tasks.size());
        boolean interrupted = false;
        for (CompletableFuture<R> future : futures) {
            if (!interrupted) {
                try {
                    future.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException | CancellationException e) {
                    // read below
                }
            }
            ended.add(ended(future));
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return ended;
    }

    private static <R> Ended<R> ended(CompletableFuture<R> future) {
        if (!future.isDone()) {
            return new Ended<>(null, null, future);
        }
        try {
            return new Ended<>(future.join(), null, null);
        } catch (CompletionException e) {
            return new Ended<>(null, e.getCause() == null ? e : e.getCause(), null);
        } catch (CancellationException e) {
            return new Ended<>(null, e, null);
        }
    }

    @Override
    public String toString() {
        return "SideBySideSends{parallel=" + parallel + '}';
    }
}
