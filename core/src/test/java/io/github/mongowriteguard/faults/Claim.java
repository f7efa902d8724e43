package io.github.mongowriteguard.faults;

/** What the writer told its caller about one write. */
public enum Claim {
    /** Applied (the guard's APPLIED; the raw driver's success). */
    APPLIED,
    /** Not applied: FAILED (sent or not), SKIPPED; for the raw driver, the exception of the last attempt. */
    NOT_APPLIED,
    /** FAILED, but a multi-document write that may have changed documents before its error. */
    PARTIAL,
    /** Nothing proves whether it was applied. */
    UNKNOWN
}
