package io.github.mongowriteguard.metrics;

import java.time.Duration;

/**
 * Callbacks for what guarded writes do, one immutable event each, every method a no-op by default.
 * {@link MicrometerGuardMetrics} turns them into meters; register your own with
 * {@code WriteGuard.builder().addListener(...)}. A listener that throws never breaks a write: the guard logs the
 * exception and goes on. Events carry no document contents, ids or connection strings.
 */
public interface GuardEventListener {

    /**
     * A guarded call (a bulk or a single-document method) ended.
     *
     * @param event the call: namespace, operation, outcome, duration
     */
    default void writeCompleted(WriteCompleted event) {
    }

    /**
     * An attempt of a write command starts: the first one, or a retry after backoff and the gate.
     *
     * @param event the attempt
     */
    default void attemptStarted(AttemptStarted event) {
    }

    /**
     * The server stopped a write at its deadline ({@code MaxTimeMSExpired}).
     *
     * @param event the write the server stopped
     */
    default void deadlineHit(DeadlineHit event) {
    }

    /**
     * The overlap gate decided about a retry.
     *
     * @param event the gate's verdict and how long it waited
     */
    default void gateDecided(GateDecided event) {
    }

    /**
     * @param namespace   {@code db.collection}
     * @param operation   {@code bulkWrite}, {@code insertOne}, ...
     * @param outcome     {@code success}, {@code failure}, {@code unknown} or {@code partial}
     * @param duration    wall time of the call
     * @param rounds      rounds run
     * @param commands    write commands (copies) started
     * @param sends       sends in all
     * @param planMode    how the bulk was planned ({@code UNORDERED_ROUNDS}, {@code PRESERVE_ORDER}, {@code STRICT_ORDERED})
     */
    record WriteCompleted(String namespace, String operation, String outcome, Duration duration, int rounds, int commands,
                          int sends, String planMode) {
    }

    /**
     * @param namespace {@code db.collection}
     * @param attempt   1 for the first send of a copy, 2 and up for retries
     * @param sameCopy  true when the attempt resends a copy the server may already have (same lsid and txnNumber)
     */
    record AttemptStarted(String namespace, int attempt, boolean sameCopy) {
    }

    /**
     * @param namespace {@code db.collection}
     * @param maxTimeMs the deadline the write carried
     */
    record DeadlineHit(String namespace, long maxTimeMs) {
    }

    /**
     * @param namespace {@code db.collection}
     * @param verdict   {@code proceed}, {@code refused} (a copy still runs), {@code killed} (a running copy was
     *                  stopped first) or {@code blind} (the gate could not see: {@code currentOp} not permitted or failed)
     * @param waited    how long the gate waited
     */
    record GateDecided(String namespace, String verdict, Duration waited) {
    }
}
