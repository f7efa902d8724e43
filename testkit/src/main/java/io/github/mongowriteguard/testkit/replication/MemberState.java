package io.github.mongowriteguard.testkit.replication;

/** A member's state, as {@code replSetGetStatus} names it. */
public enum MemberState {
    PRIMARY(1),
    SECONDARY(2),
    /** Stopped (crashed or shut down); its oplog is kept for the restart. */
    DOWN(8);

    private final int code;

    MemberState(int code) {
        this.code = code;
    }

    /** The numeric {@code state} of {@code replSetGetStatus}. */
    public int code() {
        return code;
    }
}
