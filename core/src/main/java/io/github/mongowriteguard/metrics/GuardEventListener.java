package io.github.mongowriteguard.metrics;

import io.github.mongowriteguard.bulk.PlanMode;
import io.github.mongowriteguard.copies.GateVerdict;
import java.time.Duration;

/**
 * Callbacks for what guarded writes do, one immutable event each, every method a no-op by default.
 * The guard's meters ({@code WriteGuard.builder().meterRegistry(..)}) are built from them; register your own with
 * {@code WriteGuard.builder().addListener(...)}. A listener that throws never breaks a write: the guard logs the
 * exception and goes on. Events carry no document contents, ids or connection strings.
 *
 * <p>Implemented by applications (a listener of the guard's events; a new event method comes with a default).
 */
public interface GuardEventListener {

    /**
     * A guarded call (a bulk or a single-document method) ended.
     *
     * @param event the call: namespace, operation, outcome, duration
     */
    default void writeCompleted(WriteCompleted event) {}

    /**
     * An attempt of a write command starts: the first one, or a retry after backoff and the gate.
     *
     * @param event the attempt
     */
    default void attemptStarted(AttemptStarted event) {}

    /**
     * The server stopped a write at its deadline ({@code MaxTimeMSExpired}).
     *
     * @param event the write the server stopped
     */
    default void deadlineHit(DeadlineHit event) {}

    /**
     * The overlap gate decided about a retry.
     *
     * @param event the gate's verdict and how long it waited
     */
    default void gateDecided(GateDecided event) {}

    /**
     * A guarded bulk was planned: how it runs, and why it does not run in rounds with same-copy retries when it does
     * not.
     *
     * @param event the plan's mode and bounded reason
     */
    default void planChosen(PlanChosen event) {}

    /**
     * A caller's ORDERED bulk runs in unordered rounds (the guard's default for writes on distinct keys): the event
     * carries the plan, whose {@link io.github.mongowriteguard.bulk.BulkPlan#expectedRoundTripsAvoided(int)} estimates
     * the round trips saved against the driver's ORDERED bulk. Not sent for the caller's UNORDERED bulks, nor for
     * bulks run as given.
     *
     * @param event the namespace, the operation and the plan
     */
    default void orderedBulkRegrouped(OrderedBulkRegrouped event) {}

    /**
     * @param namespace {@code db.collection}
     * @param operation {@code bulkWrite}, {@code insertMany}, ...
     * @param plan      the plan the bulk runs by (read-only)
     */
    record OrderedBulkRegrouped(String namespace, String operation, io.github.mongowriteguard.bulk.BulkPlan plan) {}

    /**
     * @param namespace      {@code db.collection}
     * @param operation      {@code bulkWrite}, {@code updateMany}, ...
     * @param planMode       how the bulk runs: {@link PlanMode#UNORDERED_ROUNDS}, or the caller's ORDERED bulk as
     *                       given ({@link PlanMode#PRESERVE_ORDER}, {@link PlanMode#STRICT_ORDERED})
     * @param reason         a bounded tag: {@code none}, {@code strict-ordered}, {@code multi-document},
     *                       {@code multi-document-kept}, {@code filter-not-id}, {@code collation}
     *                       ({@code BulkPlan.reasonTag()})
     * @param writes         writes in the bulk
     * @param firstUnkeyed   the index of the write the reason is about, -1 for none
     */
    record PlanChosen(
            String namespace, String operation, PlanMode planMode, String reason, int writes, int firstUnkeyed) {}

    /**
     * @param namespace   {@code db.collection}
     * @param operation   {@code bulkWrite}, {@code insertOne}, ...
     * @param outcome     how the call ended
     * @param duration    wall time of the call
     * @param rounds      rounds run
     * @param commands    write commands (copies) started
     * @param sends       sends in all
     * @param planMode    how the bulk was planned
     */
    record WriteCompleted(
            String namespace,
            String operation,
            CallOutcome outcome,
            Duration duration,
            int rounds,
            int commands,
            int sends,
            PlanMode planMode) {}

    /**
     * @param namespace {@code db.collection}
     * @param attempt   1 for the first send of a copy, 2 and up for retries
     * @param sameCopy  true when the attempt resends a copy the server may already have (same lsid and txnNumber)
     */
    record AttemptStarted(String namespace, int attempt, boolean sameCopy) {}

    /**
     * @param namespace {@code db.collection}
     * @param maxTimeMs the deadline the write carried
     */
    record DeadlineHit(String namespace, long maxTimeMs) {}

    /**
     * @param namespace {@code db.collection}
     * @param verdict   what the gate decided; the {@code verdict} tag is {@link GateVerdict#tag()}
     * @param waited    how long the gate waited
     */
    record GateDecided(String namespace, GateVerdict verdict, Duration waited) {}
}
