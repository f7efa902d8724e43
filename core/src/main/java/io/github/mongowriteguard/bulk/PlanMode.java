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
     * One UNORDERED bulk per round: round k holds the k-th run of writes of every key (a run travels in one command; in
     * an ordered request a run of several writes travels as ORDERED key runs, {@code Round.keyRuns()}). One mongos
     * round per round,
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
