package io.github.mongowriteguard.metrics;

import java.util.Locale;

/** How a guarded call ended, as the {@code outcome} tag of {@code mongodb.guard.writes} says it. */
public enum CallOutcome {
    /** Every write applied. */
    SUCCESS,
    /** Some writes applied, others failed or were skipped; none unknown. */
    PARTIAL,
    /** No write applied; none unknown. */
    FAILURE,
    /** Nothing proves whether some write was applied. */
    UNKNOWN;

    /**
     * The tag value: the name in lower case ({@code success}, {@code partial}, ...).
     *
     * @return the tag value
     */
    public String tag() {
        return name().toLowerCase(Locale.ROOT);
    }
}
