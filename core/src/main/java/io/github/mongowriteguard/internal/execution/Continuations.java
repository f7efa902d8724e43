package io.github.mongowriteguard.internal.execution;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.function.Supplier;

/**
 * The two ways the guard's loops are driven: with completed futures on the calling thread (the synchronous driver,
 * and the parts of a reactive call that still wait on a guard thread), or in the completions of the reactive driver's
 * replies and of timers, which hold no thread while they are pending. One loop is written once, as steps that return a
 * {@link CompletionStage}; {@link #repeat} runs its steps, continuing in the same frame when a step completed at once,
 * so that a synchronously driven loop runs as a plain {@code while} loop (no stack growth, no thread hop).
 */
final class Continuations {
    private Continuations() {}

    /**
     * Runs {@code step} again while it completes with true.
     *
     * @return completed when a step completed with false, or failed with what a step threw or failed with
     */
    static CompletableFuture<Void> repeat(Supplier<? extends CompletionStage<Boolean>> step) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        new Runnable() {
            @Override
            public void run() {
                try {
                    while (true) {
                        CompletableFuture<Boolean> next = step.get().toCompletableFuture();
                        if (!next.isDone()) {
                            next.whenComplete((more, error) -> {
                                if (error != null) {
                                    done.completeExceptionally(cause(error));
                                } else if (Boolean.TRUE.equals(more)) {
                                    run();
                                } else {
                                    done.complete(null);
                                }
                            });
                            return;
                        }
                        if (!Boolean.TRUE.equals(next.join())) {
                            done.complete(null);
                            return;
                        }
                    }
                } catch (RuntimeException | Error e) {
                    done.completeExceptionally(cause(e));
                }
            }
        }.run();
        return done;
    }

    /**
     * What {@code future} completed with, waited for on the calling thread when it is not complete yet (a part that
     * still waits on a guard thread); what it failed with is thrown as it was raised (not wrapped).
     */
    static <R> R now(CompletableFuture<R> future) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new com.mongodb.MongoInterruptedException("interrupted while waiting for a guarded call", e);
        } catch (ExecutionException e) {
            throw rethrow(e.getCause());
        } catch (CancellationException e) {
            throw e;
        }
    }

    /** {@code error} without the {@link CompletionException} / {@link ExecutionException} a stage wrapped it in. */
    static Throwable cause(Throwable error) {
        Throwable cause = error;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException)
                && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }

    /** Throws {@code error}'s cause as it was raised: unchecked as it is, a checked one wrapped. */
    static RuntimeException rethrow(Throwable error) {
        Throwable cause = cause(error);
        if (cause instanceof RuntimeException runtime) {
            throw runtime;
        }
        if (cause instanceof Error fatal) {
            throw fatal;
        }
        throw new CompletionException(cause);
    }

    /** {@code call}'s value as a completed future, or its exception as a failed one. */
    static <R> CompletableFuture<R> completed(Supplier<R> call) {
        try {
            return CompletableFuture.completedFuture(call.get());
        } catch (RuntimeException | Error e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
