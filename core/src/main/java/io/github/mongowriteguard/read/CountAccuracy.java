package io.github.mongowriteguard.read;

import io.github.mongowriteguard.exception.ExactReadUnavailableException;

/** What a count may be. Counts that must add up (payments, settlement) stay {@link #EXACT}. */
public enum CountAccuracy {
    /** Only an exact count; when the normal read fails, {@link ExactReadUnavailableException} is thrown. */
    EXACT,
    /**
     * The caller accepts an approximate count when the normal read fails or is expected to fail, and the guard's
     * degraded reads are on: documents read with {@code readConcern: "available"}, orphan duplicates removed.
     */
    APPROXIMATE_ALLOWED
}
