package io.github.mongowriteguard.testkit.truth;

import org.bson.BsonValue;

/**
 * What the server saw of one command: who sent it, its session and transaction number, how long it ran and
 * how it ended. A snapshot: take a new one to see later progress.
 *
 * @param opid             the server's operation id (as in {@code currentOp})
 * @param node             the node that ran it (e.g. {@code "rs0/127.0.0.1:27017"} or {@code "shard01/..."})
 * @param connectionId     the client connection it arrived on
 * @param appName          the driver's {@code appName}, or null
 * @param database         the database
 * @param commandName      e.g. {@code "insert"}
 * @param namespace        {@code db.collection} for collection commands, else {@code db.$cmd}
 * @param txnId            the copy it belongs to
 * @param comment          the command's {@code comment}, or null
 * @param maxTimeMs        the command's {@code maxTimeMS}, or null
 * @param documents        the number of write statements it carried (inserts, updates, deletes)
 * @param startNanos       {@link System#nanoTime()} when it arrived
 * @param endNanos         when it ended, or -1 while it runs
 * @param outcome          how it ended
 * @param errorCode        the error code for {@link Outcome#ERROR}, else 0
 * @param executed         true if it ran in the storage engine (false: failed before, or answered from the
 *                         session's stored result of an earlier execution)
 * @param applied          documents it wrote (inserted, modified, upserted, deleted)
 * @param statements       the write statements it carried, with their statement ids (empty for other commands, and
 *                         when its node's truth dropped them; read them through {@link #statements()})
 * @param statementsDropped true when its node's truth was full when it arrived (it holds at most 250,000 write
 *                         statements between resets) and kept the command without its statements
 */
public record ReceivedCommand(
        long opid,
        String node,
        long connectionId,
        String appName,
        String database,
        String commandName,
        String namespace,
        TxnId txnId,
        BsonValue comment,
        Long maxTimeMs,
        int documents,
        long startNanos,
        long endNanos,
        Outcome outcome,
        int errorCode,
        boolean executed,
        long applied,
        java.util.List<WriteStatement> statements,
        boolean statementsDropped) {

    /**
     * The write statements it carried, with their statement ids (empty for other commands): what copies per key are
     * counted from.
     *
     * @return the statements
     * @throws IllegalStateException when its node's truth dropped them ({@link #statementsDropped()}): keys taken from
     *     them would count too few copies, so reset the truth ({@code truth().reset()}) between measurements
     */
    @Override
    public java.util.List<WriteStatement> statements() {
        if (statementsDropped) {
            throw new IllegalStateException("the emulator's truth of " + node + " dropped the write statements of this "
                    + commandName + " (opid " + opid + "): a node's truth holds at most 250,000 write statements "
                    + "between resets and was full when it arrived, so keys or copies counted from statements would "
                    + "be too few; reset the truth between measurements (truth().reset(), e.g. before each round or "
                    + "test) so that each measurement stays under the bound");
        }
        return statements;
    }

    /** How a command ended. */
    public enum Outcome {
        /** Still running. */
        RUNNING,
        /** Answered {@code ok: 1} (write errors may be in the reply). */
        OK,
        /** Answered with an error ({@code ok: 0}). */
        ERROR,
        /** The connection was closed without a reply (a fail point). */
        CONNECTION_CLOSED,
        /** Answered from the session's stored result of an earlier execution; not run again. */
        RETRIED_RESULT
    }

    /** {@return whether the command was still running when the snapshot was taken} */
    public boolean running() {
        return endNanos < 0;
    }

    /**
     * True when the command carried a {@code txnNumber} (a retryable write or a transaction).
     *
     * @return whether it carried a {@code txnNumber}
     */
    public boolean hasTxnNumber() {
        return txnId.txnNumber() != null;
    }
}
