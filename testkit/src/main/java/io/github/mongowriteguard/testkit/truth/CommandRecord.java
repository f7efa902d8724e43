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
    private volatile long endNanos = -1;
    private volatile ReceivedCommand.Outcome outcome = ReceivedCommand.Outcome.RUNNING;
    private volatile int errorCode;
    private volatile boolean executed;
    private volatile long applied;

    public CommandRecord(long opid, String node, long connectionId, String appName, String database,
                         String commandName, String namespace, TxnId txnId, BsonValue comment, Long maxTimeMs,
                         int documents, long startNanos) {
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
    }

    public void executed(long appliedDocuments) {
        this.executed = true;
        this.applied = appliedDocuments;
    }

    public void end(ReceivedCommand.Outcome outcome, int errorCode) {
        this.outcome = outcome;
        this.errorCode = errorCode;
        this.endNanos = System.nanoTime();
    }

    public boolean running() {
        return endNanos < 0;
    }

    public TxnId txnId() {
        return txnId;
    }

    public String commandName() {
        return commandName;
    }

    public ReceivedCommand snapshot() {
        return new ReceivedCommand(opid, node, connectionId, appName, database, commandName, namespace, txnId,
            comment, maxTimeMs, documents, startNanos, endNanos, outcome, errorCode, executed, applied);
    }
}
