package io.github.mongowriteguard.internal.server;

import java.util.Set;

/** The server error codes the guard acts on, named once (values from the server's {@code error_codes.yml}). */
public final class ErrorCodes {
    public static final int UNAUTHORIZED = 13;
    public static final int MAX_TIME_MS_EXPIRED = 50;
    public static final int DUPLICATE_KEY = 11000;
    public static final int STALE_CONFIG = 13388;
    public static final int EXCEEDED_TIME_LIMIT = 262;
    /** A retry of a statement whose session has moved on to a higher {@code txnNumber}. */
    public static final int TRANSACTION_TOO_OLD = 225;
    /** A retry of a statement the server's history no longer covers (a migration without it, a truncated oplog). */
    public static final int INCOMPLETE_TRANSACTION_HISTORY = 217;

    /**
     * Codes of an operation interrupted while it ran (the server's {@code isInterruption} category, plus
     * {@code LockTimeout}): a write command interrupted part-way may have applied the statements before the interrupt
     * point (mongod's {@code write_ops_exec.cpp} fails the whole batch on them: "These have always failed the whole
     * batch"), and mongos reports a child batch's failure on statements it may have applied.
     */
    private static final Set<Integer> INTERRUPTIONS =
            Set.of(24, MAX_TIME_MS_EXPIRED, EXCEEDED_TIME_LIMIT, 279, 11600, 11601, 11602);

    /**
     * Codes with which mongos reports that it lost a shard's answer (a child batch's connection failed or timed out):
     * {@code HostUnreachable}, {@code HostNotFound}, {@code NetworkTimeout}, {@code NetworkInterfaceExceededTimeLimit},
     * {@code SocketException}. mongos turns such a child batch failure into one write error per statement
     * ({@code BatchWriteOp::noteBatchError}); the shard may have applied them.
     */
    private static final Set<Integer> LOST_ANSWERS = Set.of(6, 7, 89, 202, 9001);

    private ErrorCodes() {}

    /** Whether a statement error with {@code code} means the answer was lost, not that the write did not apply. */
    public static boolean isLostAnswer(int code) {
        return LOST_ANSWERS.contains(code);
    }

    /** Whether {@code code} means the operation was interrupted while it ran. */
    public static boolean isInterruption(int code) {
        return INTERRUPTIONS.contains(code);
    }
}
