package io.github.mongowriteguard.read;

import io.github.mongowriteguard.outcome.StaleReadDiagnosis;
import java.util.Objects;

/**
 * Why and how a result is approximate: it was read with {@code readConcern: "available"}, which skips the shard
 * version check, so it may miss writes not yet replicated, include documents a migration already moved, and
 * (before de-duplication) show a moved document twice.
 *
 * @param reason                why the degraded read ran
 * @param diagnosis             what the signals say about the cluster
 * @param duplicatesRemoved     copies dropped because another copy with the same {@code _id} was kept
 * @param conflictingDuplicates of those, copies whose content differed from the kept one (which copy is current
 *                              cannot be known through mongos; the first one seen is kept)
 */
public record Approximation(
        ApproximationReason reason, StaleReadDiagnosis diagnosis, int duplicatesRemoved, int conflictingDuplicates) {
    /**
     * Checks that the reason and the diagnosis are given.
     *
     * @param reason                why the degraded read ran
     * @param diagnosis             what the signals say about the cluster
     * @param duplicatesRemoved     copies dropped because another copy with the same {@code _id} was kept
     * @param conflictingDuplicates of those, copies whose content differed from the kept one
     */
    public Approximation {
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(diagnosis, "diagnosis");
    }

    @Override
    public String toString() {
        return "approximate (" + reason + ", " + duplicatesRemoved + " duplicate(s) removed"
                + (conflictingDuplicates > 0 ? ", " + conflictingDuplicates + " with differing content" : "") + "): "
                + diagnosis.message();
    }
}
