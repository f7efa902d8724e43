package io.github.mongowriteguard.testkit.node;

/** An operation stopped at an interrupt point: its deadline passed, or it was killed. */
public final class OperationInterruptedException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    /** The server error code, e.g. 50 ({@code MaxTimeMSExpired}) or 11601 ({@code Interrupted}). */
    private final int code;
    /** The server error code name. */
    private final String codeName;

    OperationInterruptedException(int code, String codeName, String message) {
        super(message, null, false, false);
        this.code = code;
        this.codeName = codeName;
    }

    /** {@return the server error code, e.g. 50 ({@code MaxTimeMSExpired})} */
    public int code() {
        return code;
    }

    /** {@return the server error code name} */
    public String codeName() {
        return codeName;
    }

    static OperationInterruptedException maxTimeExpired() {
        return new OperationInterruptedException(50, "MaxTimeMSExpired", "operation exceeded time limit");
    }

    static OperationInterruptedException killed() {
        return new OperationInterruptedException(11601, "Interrupted", "operation was interrupted");
    }
}
