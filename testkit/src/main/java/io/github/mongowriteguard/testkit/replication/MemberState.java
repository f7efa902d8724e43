package io.github.mongowriteguard.testkit.replication;

/** A member's state, as {@code replSetGetStatus} names it. */
public enum MemberState {
    /**
     * The primary: it accepts writes.
     */
    PRIMARY(1),
    /**
     * A secondary: it replicates from the primary.
     */
    SECONDARY(2),
    /** Stopped (crashed or shut down); its oplog is kept for the restart. */
    DOWN(8);

    private final int code;

    MemberState(int code) {
        this.code = code;
    }

    /**
     * The numeric {@code state} of {@code replSetGetStatus}.
     *
     * @return the code
     */
    public int code() {
        return code;
    }
}
