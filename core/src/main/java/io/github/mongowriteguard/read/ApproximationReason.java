package io.github.mongowriteguard.read;

/** Why a read answered approximately instead of exactly. */
public enum ApproximationReason {
    /** The normal read was tried and failed with {@code StaleConfig} or a timeout. */
    NORMAL_READ_FAILED,
    /**
     * A normal read of the same collection failed recently (within
     * {@link ReadGuardOptions#getExpectFailureFor()}), so the normal read was not tried again yet.
     */
    NORMAL_READ_EXPECTED_TO_FAIL
}
