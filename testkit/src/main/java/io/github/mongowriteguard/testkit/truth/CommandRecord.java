package io.github.mongowriteguard.testkit.truth;

import org.bson.BsonValue;

/** The emulator's mutable record behind a {@link ReceivedCommand}; only the emulator writes to it. */
public final class CommandRecord {
    private final long opid;
    private final String node;
    private final long connectionId;
    private final String appName;
    private final String database;
    private final String commandName;
    private final String namespace;
    private final TxnId txnId;
    private final BsonValue comment;
    private final Long maxTimeMs;
    private final int documents;
    private final long startNanos;
    /** Its statements, until its node's store drops them ({@link RecordStore}: the store was full on arrival). */
    private volatile java.util.List<WriteStatement> statements;

    private volatile boolean statementsDropped;
    private volatile long endNanos = -1;
    private volatile ReceivedCommand.Outcome outcome = ReceivedCommand.Outcome.RUNNING;
    private volatile int errorCode;
    private volatile boolean executed;
    private volatile long applied;

    /**
     * A command that just arrived.
     *
     * @param opid         the operation id
     * @param node         the node's label
     * @param connectionId the connection it came on
     * @param appName      the connection's application name, or null
     * @param database     the command's database
     * @param commandName  the command's name
     * @param namespace    {@code db.collection} it writes to or reads, or null
     * @param txnId        the session and transaction number it carried
     * @param comment      its {@code comment}, or null
     * @param maxTimeMs    its {@code maxTimeMS}, or null
     * @param documents    how many statements or documents it carried
     * @param startNanos   {@link System#nanoTime()} at its arrival
     * @param statements   the write statements it carried, with their statement ids
     */
    public CommandRecord(
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
            java.util.List<WriteStatement> statements) {
        this.opid = opid;
        this.node = node;
        this.connectionId = connectionId;
        this.appName = appName;
        this.database = database;
        this.commandName = commandName;
        this.namespace = namespace;
        this.txnId = txnId;
        this.comment = comment;
        this.maxTimeMs = maxTimeMs;
        this.documents = documents;
        this.startNanos = startNanos;
        this.statements = java.util.List.copyOf(statements);
    }

    /**
     * The engine ran the command (a resend answered from the session's stored result did not).
     *
     * @param appliedDocuments documents it wrote
     */
    public void executed(long appliedDocuments) {
        this.executed = true;
        this.applied = appliedDocuments;
    }

    /**
     * The command ended.
     *
     * @param outcome   how
     * @param errorCode the server error code, 0 for none
     */
    public void end(ReceivedCommand.Outcome outcome, int errorCode) {
        this.outcome = outcome;
        this.errorCode = errorCode;
        this.endNanos = System.nanoTime();
    }

    /** Drops the statements: its node's store was full when it arrived. */
    void dropStatements() {
        this.statements = java.util.List.of();
        this.statementsDropped = true;
    }

    /** {@return how many write statements the record holds} */
    int statementCount() {
        return statements.size();
    }

    /** {@return whether the command is still running} */
    public boolean running() {
        return endNanos < 0;
    }

    /** {@return the session and transaction number it carried} */
    public TxnId txnId() {
        return txnId;
    }

    /** {@return the command's name} */
    public String commandName() {
        return commandName;
    }

    /** {@return the command as it is now} */
    public ReceivedCommand snapshot() {
        return new ReceivedCommand(
                opid,
                node,
                connectionId,
                appName,
                database,
                commandName,
                namespace,
                txnId,
                comment,
                maxTimeMs,
                documents,
                startNanos,
                endNanos,
                outcome,
                errorCode,
                executed,
                applied,
                statements,
                statementsDropped);
    }
}
