package io.github.mongowriteguard.bulk;

/**
 * How a {@link BulkPlan} runs the caller's bulk.
 *
 * <pre>{@code
 * if (plan.mode() == PlanMode.PRESERVE_ORDER) log.info("bulk kept ORDERED: {}", plan.reason());
 * }</pre>
 */
public enum PlanMode {

    /**
     * One UNORDERED bulk per round: round k holds the k-th remaining write of every key. One mongos round per round,
     * whatever the number of shards.
     */
    UNORDERED_ROUNDS,

    /**
     * The caller asked for ORDERED and the bulk has unkeyed writes, whose effect on other writes the guard cannot
     * bound: the bulk runs as given, as one ORDERED round.
     */
    PRESERVE_ORDER,

    /** The caller asked for the driver's strict ORDERED semantics: the bulk runs as given, as one ORDERED round. */
    STRICT_ORDERED
}
