package io.github.mongowriteguard.metrics;

import io.micrometer.observation.Observation;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link GuardObservationConvention} sees of one guarded call: the namespace, the caller's method and, once
 * the call ends, its {@link CallOutcome}. It carries no document contents, ids or connection strings.
 */
public final class GuardObservationContext extends Observation.Context {
    private final String namespace;
    private final String operation;
    private @Nullable CallOutcome outcome;
    private io.github.mongowriteguard.bulk.@Nullable PlanMode planMode;

    /**
     * @param namespace {@code db.collection}
     * @param operation the caller's method: {@code bulkWrite}, {@code insertOne}, {@code findOneAndUpdate}, ...
     */
    public GuardObservationContext(String namespace, String operation) {
        this.namespace = Objects.requireNonNull(namespace, "namespace");
        this.operation = Objects.requireNonNull(operation, "operation");
    }

    /**
     * The namespace written to.
     *
     * @return {@code db.collection}; {@code admin} for the client-level {@code bulkWrite}, where the driver runs it
     */
    public String getNamespace() {
        return namespace;
    }

    /**
     * The caller's method.
     *
     * @return {@code bulkWrite}, {@code insertOne}, {@code clientBulkWrite} (one observation for the call, on
     *         namespace {@code admin}, and inside it one per namespace written), ...
     */
    public String getOperation() {
        return operation;
    }

    /**
     * How the call ended; null while it runs, and when it threw before anything was sent (bad input).
     *
     * @return the outcome, or null
     */
    public @Nullable CallOutcome getOutcome() {
        return outcome;
    }

    /**
     * Set by the guard when the call ends.
     *
     * @param outcome how the call ended
     */
    public void setOutcome(CallOutcome outcome) {
        this.outcome = Objects.requireNonNull(outcome, "outcome");
    }

    /**
     * How the call's writes were planned: in rounds, or the caller's ORDERED bulk as given; null while the call is
     * being planned, and for a call that sent no bulk.
     *
     * @return the plan's mode, or null
     */
    public io.github.mongowriteguard.bulk.@Nullable PlanMode getPlanMode() {
        return planMode;
    }

    /**
     * Set by the guard once the call is planned.
     *
     * @param planMode how the call's writes run
     */
    public void setPlanMode(io.github.mongowriteguard.bulk.PlanMode planMode) {
        this.planMode = Objects.requireNonNull(planMode, "planMode");
    }
}
