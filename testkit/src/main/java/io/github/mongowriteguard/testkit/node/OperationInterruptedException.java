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

    /** Why an operation was killed, as mongod reports it at the operation's next interrupt point. */
    public enum KillReason {
        /** {@code killOp}, {@code killSessions}: {@code Interrupted} (11601). */
        KILLED,
        /** A stepdown (or step-up) killed the write: {@code InterruptedDueToReplStateChange} (11602). */
        REPL_STATE_CHANGE,
        /** The node is shutting down: {@code InterruptedAtShutdown} (11600). */
        SHUTDOWN;

        OperationInterruptedException exception() {
            return switch (this) {
                case KILLED -> killed();
                case REPL_STATE_CHANGE ->
                    new OperationInterruptedException(
                            11602, "InterruptedDueToReplStateChange", "operation was interrupted");
                case SHUTDOWN ->
                    new OperationInterruptedException(11600, "InterruptedAtShutdown", "interrupted at shutdown");
            };
        }
    }

    /**
     * The exception an operation killed for {@code reason} ends with.
     *
     * @param reason why the operation was killed
     * @return the exception
     */
    public static OperationInterruptedException of(KillReason reason) {
        return reason.exception();
    }

    /**
     * {@code MaxTimeMSExpired} (50): the operation's deadline passed while it waited.
     *
     * @return the exception
     */
    public static OperationInterruptedException deadline() {
        return maxTimeExpired();
    }
}
