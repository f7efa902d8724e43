package io.github.mongowriteguard.copies;

/**
 * What the overlap gate decided before a retry of a copy that got no answer: whether the next attempt may start, and
 * why. Carried by {@code GuardEventListener.GateDecided} and the {@code verdict} tag of the gate's meter.
 */
public enum GateVerdict {
    /** {@code currentOp} shows no running copy: go on. */
    PROCEED,
    /** A running copy was killed and {@code currentOp} shows it gone: go on. */
    KILLED,
    /** A copy still runs after the kill: do not start another attempt. */
    REFUSED,
    /**
     * The gate could not tell whether the copy still runs: its own {@code currentOp} (or the one after a kill)
     * failed, was refused even with {@code $ownOps} (no {@code inprog} privilege, or a mongos, which requires it
     * for every {@code currentOp}), or its connection was closed or timed out. Only the server deadline has
     * passed. (Replaces the former {@code DEADLINE_ONLY}.)
     */
    BLIND;

    /**
     * The metric tag value: the name in lower case with dashes ({@code proceed}, {@code refused}, ...).
     *
     * @return the tag value
     */
    public String tag() {
        return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
    }
}
