package io.github.mongowriteguard.metrics;

import io.micrometer.common.KeyValues;

/**
 * The default observation of a guarded call: named {@value #NAME}, contextual name
 * {@code guarded <operation> <namespace>}, and only low-cardinality key values: {@value #NAMESPACE},
 * {@value #OPERATION}, {@value #PLAN} and {@value #OUTCOME} ({@link CallOutcome#tag()}; {@code failure} when the call threw before
 * anything was sent; {@value #OUTCOME_RUNNING} while the call runs, which is the tag of the {@code .active} long-task
 * timer that Micrometer's meter handler starts with the observation). No high-cardinality key values.
 */
public class DefaultGuardObservationConvention implements GuardObservationConvention {
    /** The observation's name: {@value}. */
    public static final String NAME = "mongodb.guard.write";
    /** The namespace key ({@code db.collection}), as OpenTelemetry's database conventions name it: {@value}. */
    public static final String NAMESPACE = "db.namespace";
    /** The caller's method key: {@value}. */
    public static final String OPERATION = "mongodb.guard.operation";
    /** The outcome key: {@value}. */
    public static final String OUTCOME = "mongodb.guard.outcome";

    /**
     * The plan key: how the call's writes ran, {@code unordered-rounds}, {@code preserve-order} or
     * {@code strict-ordered} (the caller's ORDERED bulk as given), {@value #PLAN_NONE} for a call without a bulk plan
     * of its own (a {@code findOneAndX}; the client-level {@code bulkWrite}, whose namespaces' observations carry
     * theirs): {@value}.
     */
    public static final String PLAN = "mongodb.guard.plan";

    /** The plan key's value for a call that planned no bulk (or has not yet): {@value}. */
    public static final String PLAN_NONE = "none";

    /** The outcome while the call runs, before the guard knows how it ended: {@value}. */
    public static final String OUTCOME_RUNNING = "none";

    /** The shared instance. */
    public static final DefaultGuardObservationConvention INSTANCE = new DefaultGuardObservationConvention();

    /** For subclasses that change some of the names; otherwise use {@link #INSTANCE}. */
    public DefaultGuardObservationConvention() {}

    @Override
    public String getName() {
        return NAME;
    }

    @Override
    public String getContextualName(GuardObservationContext context) {
        return "guarded " + context.getOperation() + " " + context.getNamespace();
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(GuardObservationContext context) {
        return KeyValues.of(
                NAMESPACE,
                context.getNamespace(),
                OPERATION,
                context.getOperation(),
                OUTCOME,
                outcome(context),
                PLAN,
                plan(context));
    }

    /**
     * The plan mode as a tag value: {@code UNORDERED_ROUNDS} is {@code unordered-rounds}.
     *
     * @param mode a plan mode
     * @return its tag value
     */
    public static String planTag(io.github.mongowriteguard.bulk.PlanMode mode) {
        return mode.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
    }

    private static String plan(GuardObservationContext context) {
        return context.getPlanMode() == null ? PLAN_NONE : planTag(context.getPlanMode());
    }

    private static String outcome(GuardObservationContext context) {
        CallOutcome outcome = context.getOutcome();
        if (outcome != null) {
            return outcome.tag();
        }
        // No outcome: still running (the observation's start), or the call threw before it had one.
        return context.getError() == null ? OUTCOME_RUNNING : CallOutcome.FAILURE.tag();
    }
}
