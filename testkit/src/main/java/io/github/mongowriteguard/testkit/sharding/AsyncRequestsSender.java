package io.github.mongowriteguard.testkit.sharding;

import io.github.mongowriteguard.testkit.node.OperationContext;
import io.github.mongowriteguard.testkit.node.OperationInterruptedException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * How mongos waits for its shards, after mongodb/mongo {@code src/mongo/s/async_requests_sender.cpp}: every request
 * of a round is started at once, then mongos waits for the responses as an interrupt point of its own operation
 * ({@code AsyncRequestsSender::next}: {@code _responseQueue.waitForNonEmptyNoThrow(_opCtx)}). A response already in is
 * taken even past the deadline; otherwise, when the operation's deadline passes or it is killed, every outstanding
 * remote gets that status ({@code makeFailedResponse(_interruptStatus)}: {@code MaxTimeMSExpired} (50) or
 * {@code Interrupted} (11601)), no remote is retried any more ({@code _subBaton.shutdown()}), and mongos stops
 * waiting. What the shard does with a request already delivered goes on: it runs to its own end, bounded by the
 * remaining time mongos sent with it, and its answer is dropped.
 *
 * <p>Each send carries the operation's remaining time, taken when it is sent ({@code RemoteCommandRequestBase}
 * {@code _updateTimeoutFromOpCtxDeadline}, {@code src/mongo/executor/remote_command_request.cpp}; the network
 * interface appends it as {@code maxTimeMSOpOnly}): a retry gets what is left then, not the first send's time. A
 * request whose time ran out before it left is failed without being sent.
 */
final class AsyncRequestsSender {
    /** How often a waiting mongos looks at its kill flag; the deadline itself wakes it exactly. */
    private static final long KILL_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    /** One remote while its request runs: the host it went to, how many sends, and whether it may still retry. */
    static final class Remote {
        private volatile String host;
        private volatile int attempts;
        private volatile boolean stopRetrying;

        /** A send to {@code host} starts. */
        void sentTo(String host) {
            this.host = host;
            attempts++;
        }

        /** {@return whether mongos stopped waiting, so the remote must not be sent again} */
        boolean stopRetrying() {
            return stopRetrying;
        }

        /** {@return the host last sent to, or null if none was targeted yet} */
        String host() {
            return host;
        }

        /** {@return the sends started, at least 1} */
        int attempts() {
            return Math.max(1, attempts);
        }
    }

    /** A request: sends to its shard, retrying as its policy allows while {@link Remote#stopRetrying()} is false. */
    interface Request<T> {
        T run(Remote remote);
    }

    /** The response of a remote mongos stopped waiting for. */
    interface Interrupted<T> {
        T response(Remote remote, OperationInterruptedException status);
    }

    /** The response of a remote whose request failed inside the emulator. */
    interface Failed<T> {
        T response(Remote remote, Throwable cause);
    }

    private final ExecutorService executor;

    AsyncRequestsSender(ExecutorService executor) {
        this.executor = executor;
    }

    /**
     * Starts every request, then collects the responses in order, waiting as an interrupt point of
     * {@code operation}.
     */
    <T> List<T> sendAll(
            OperationContext operation, List<Request<T>> requests, Interrupted<T> interrupted, Failed<T> failed) {
        List<Remote> remotes = new ArrayList<>();
        requests.forEach(r -> remotes.add(new Remote()));
        OperationInterruptedException status = interruptStatus(operation);
        List<Future<T>> futures = new ArrayList<>();
        if (status == null) {
            for (int i = 0; i < requests.size(); i++) {
                Request<T> request = requests.get(i);
                Remote remote = remotes.get(i);
                futures.add(executor.submit(() -> request.run(remote)));
            }
        }
        List<T> responses = new ArrayList<>();
        for (int i = 0; i < requests.size(); i++) {
            if (status == null) {
                status = await(operation, futures.get(i));
            }
            if (status != null) {
                remotes.forEach(remote -> remote.stopRetrying = true);
                responses.add(interrupted.response(remotes.get(i), status));
                continue;
            }
            try {
                responses.add(futures.get(i).get());
            } catch (ExecutionException e) {
                responses.add(failed.response(remotes.get(i), e.getCause()));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                status = OperationInterruptedException.of(OperationInterruptedException.KillReason.KILLED);
                responses.add(interrupted.response(remotes.get(i), status));
            }
        }
        return responses;
    }

    /** Waits until {@code future} is done (null) or the operation is interrupted (its status). */
    private static OperationInterruptedException await(OperationContext operation, Future<?> future) {
        while (!future.isDone()) {
            OperationInterruptedException status = interruptStatus(operation);
            if (status != null) {
                return status;
            }
            try {
                future.get(Math.min(operation.remainingNanos(), KILL_POLL_NANOS), TimeUnit.NANOSECONDS);
            } catch (TimeoutException | ExecutionException e) {
                // not done yet, or done with a failure the caller reports
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return OperationInterruptedException.of(OperationInterruptedException.KillReason.KILLED);
            }
        }
        return null;
    }

    private static OperationInterruptedException interruptStatus(OperationContext operation) {
        try {
            operation.checkForInterrupt();
            return null;
        } catch (OperationInterruptedException e) {
            return e;
        }
    }
}
