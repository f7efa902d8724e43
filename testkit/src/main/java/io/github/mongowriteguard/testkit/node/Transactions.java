package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.engine.StorageEngine;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.UnaryOperator;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Multi-document transactions of one mongod (a replica-set primary), as mongodb/mongo's transaction participant runs
 * them ({@code src/mongo/db/transaction/transaction_participant.cpp}, {@code src/mongo/db/commands/txn_cmds.cpp},
 * {@code src/mongo/db/transaction_validation.cpp}).
 *
 * <p>Design on mongo-java-server's engine: the first statement ({@code startTransaction: true}) takes a private copy of
 * the node's data (the snapshot); every statement of the transaction, reads included, runs on that copy, so the
 * transaction sees its own writes and nobody else sees them. Each document a statement changes is locked for the
 * transaction; a statement that changes a document another transaction holds, or one that a committed write changed
 * since the snapshot, fails with {@code WriteConflict} (112) and aborts the transaction (the server's
 * {@code TransientTransactionError}; an ABA change back to the snapshot's content is not seen). A write outside any
 * transaction that targets a locked document waits until the transaction ends (or its own {@code maxTimeMS}), as
 * mongod's {@code writeConflictRetry} does. {@code commitTransaction} applies the transaction's documents to the
 * node's data in one step (one oplog entry on a replicating primary); abort, a newer transaction number on the
 * session, or the lifetime limit ({@code transactionLifetimeLimitSeconds}, 60 by default) discard the copy.
 */
final class Transactions {
    /**
     * The read concern a transaction may start with, as mongod's {@code _extractReadConcern} checks it before the
     * transaction starts (mongodb/mongo {@code src/mongo/db/service_entry_point_common.cpp},
     * {@code isReadConcernLevelAllowedInTransaction}): level {@code local} (the default), {@code majority} or
     * {@code snapshot}, and no {@code afterOpTime}; otherwise {@code InvalidOptions} (72).
     *
     * @return the refusal, or null
     */
    private static BsonDocument refusedReadConcern(BsonDocument command) {
        BsonValue readConcern = command.get("readConcern");
        if (readConcern == null || !readConcern.isDocument()) {
            return null;
        }
        BsonValue level = readConcern.asDocument().get("level");
        if (level != null
                && !(level.isString()
                        && java.util.Set.of("local", "majority", "snapshot")
                                .contains(level.asString().getValue()))) {
            return StorageEngine.error(
                    72,
                    "InvalidOptions",
                    "The readConcern level must be either 'local' (default), 'majority' or 'snapshot' in order to run"
                            + " in a transaction");
        }
        if (readConcern.asDocument().containsKey("afterOpTime")) {
            return StorageEngine.error(
                    72, "InvalidOptions", "The readConcern cannot specify 'afterOpTime' in a transaction");
        }
        return null;
    }

    private static final Set<String> WRITES = Set.of("insert", "update", "delete", "findAndModify", "findandmodify");
    private static final Set<String> COMMIT_OR_ABORT = Set.of("commitTransaction", "abortTransaction");

    /** Applies a committed transaction's documents to the node's data (through the oplog on a replicating primary). */
    interface Committer {
        /**
         * @param writes the per-document writes ({@code update} upserting the document by {@code _id}, or {@code delete})
         * @return null when applied, else the error reply
         */
        BsonDocument apply(List<Write> writes);
    }

    /** One write of a commit: a command on a database. */
    record Write(String database, BsonDocument command) {}

    private enum State {
        IN_PROGRESS,
        COMMITTED,
        ABORTED
    }

    private record DocKey(String namespace, BsonValue id) {}

    private static final class Txn {
        final String sessionId;
        final long txnNumber;
        final long startedNanos = System.nanoTime();
        final Set<DocKey> written = new LinkedHashSet<>();
        State state = State.IN_PROGRESS;
        StorageEngine snapshot;
        Map<String, Map<BsonValue, BsonDocument>> base;

        Txn(String sessionId, long txnNumber) {
            this.sessionId = sessionId;
            this.txnNumber = txnNumber;
        }
    }

    /** A statement failed in a way that aborts the transaction. */
    private static final class Aborting extends RuntimeException {
        final BsonDocument reply;

        Aborting(BsonDocument reply) {
            super(null, null, false, false);
            this.reply = reply;
        }
    }

    private final ReentrantLock nodeLock;
    private final Condition changed;
    /**
     * Writes outside transactions hold it shared while they run; a transaction's check-and-lock of documents holds it
     * exclusively, so a write that was already running when a transaction locked its document is seen as a conflict.
     */
    private final java.util.concurrent.locks.ReentrantReadWriteLock gate =
            new java.util.concurrent.locks.ReentrantReadWriteLock();

    private final Map<String, Txn> bySession = new ConcurrentHashMap<>();
    private final Map<DocKey, Txn> locks = new ConcurrentHashMap<>();
    private final io.github.mongowriteguard.testkit.server.ServerVersion version;
    private volatile long lifetimeLimitNanos = TimeUnit.SECONDS.toNanos(60);

    Transactions(
            io.github.mongowriteguard.testkit.server.ServerVersion version, ReentrantLock nodeLock, Condition changed) {
        this.version = version;
        this.nodeLock = nodeLock;
        this.changed = changed;
    }

    /** {@code transactionLifetimeLimitSeconds}: a transaction still open after it is aborted. */
    void lifetimeLimitSeconds(long seconds) {
        if (seconds < 1) {
            throw new IllegalArgumentException("transactionLifetimeLimitSeconds must be at least 1, was " + seconds);
        }
        lifetimeLimitNanos = TimeUnit.SECONDS.toNanos(seconds);
    }

    long lifetimeLimitSeconds() {
        return TimeUnit.NANOSECONDS.toSeconds(lifetimeLimitNanos);
    }

    /**
     * The answer to a command of a transaction that carries no session ({@code initializeOperationSessionInfo}: a
     * transaction number needs a session id; commit and abort must run within a transaction).
     */
    static BsonDocument withoutSession(BsonDocument command) {
        if (COMMIT_OR_ABORT.contains(command.getFirstKey())) {
            return StorageEngine.error(
                    125, "CommandFailed", command.getFirstKey() + " must be run within a transaction");
        }
        return StorageEngine.error(
                72,
                "InvalidOptions",
                command.containsKey("txnNumber")
                        ? "Transaction number requires a session ID to also be specified"
                        : "'autocommit' field requires a transaction number to also be specified");
    }

    /** A command that belongs to a multi-document transaction ({@code autocommit} present, or commit/abort). */
    static boolean isTransactionCommand(BsonDocument command) {
        return command.containsKey("autocommit") || COMMIT_OR_ABORT.contains(command.getFirstKey());
    }

    /** The transactions still open, for tests and {@code serverStatus}-like checks. */
    int open() {
        reap();
        return (int) bySession.values().stream()
                .filter(txn -> txn.state == State.IN_PROGRESS)
                .count();
    }

    /** Whether the session's transaction {@code txnNumber} is open (not committed, not aborted, not expired). */
    boolean inProgress(String sessionId, long txnNumber) {
        reap();
        Txn txn = bySession.get(sessionId);
        return txn != null && txn.txnNumber == txnNumber && txn.state == State.IN_PROGRESS;
    }

    /**
     * A retryable write (or a newer transaction) with {@code txnNumber} started on the session: an open transaction
     * with a lower number is aborted ({@code _setNewTxnNumber}: "Aborts any in-progress txns").
     */
    void newerTxnNumber(String sessionId, long txnNumber) {
        Txn txn = bySession.get(sessionId);
        if (txn != null && txn.txnNumber < txnNumber) {
            end(txn, State.ABORTED);
            bySession.remove(sessionId, txn);
        }
    }

    /**
     * Runs one command of a transaction with the session checked out.
     *
     * @param operation     the command
     * @param sessionId     the session
     * @param sessionNumber the session's highest transaction number so far (retryable writes included), -1 for none
     * @param main          the node's data
     * @param strip         removes the session and routing fields the engine does not know
     * @param committer     applies a commit
     * @return the reply
     */
    BsonDocument run(
            OperationContext operation,
            String sessionId,
            long sessionNumber,
            StorageEngine main,
            UnaryOperator<BsonDocument> strip,
            Committer committer) {
        BsonDocument command = operation.command();
        String name = operation.commandName();
        reap();
        if (COMMIT_OR_ABORT.contains(name) && !command.containsKey("txnNumber")) {
            return StorageEngine.error(125, "CommandFailed", name + " must be run within a transaction");
        }
        if (!command.containsKey("txnNumber")) {
            return StorageEngine.error(
                    72, "InvalidOptions", "'autocommit' field requires a transaction number to also be specified");
        }
        long txnNumber = command.getNumber("txnNumber").longValue();
        BsonValue autocommit = command.get("autocommit");
        if (autocommit == null
                || !autocommit.isBoolean()
                || autocommit.asBoolean().getValue()) {
            // transaction_validation.cpp / OperationSessionInfo parsing: only autocommit:false is accepted.
            return StorageEngine.error(72, "InvalidOptions", "Specifying autocommit=true is not allowed.");
        }
        boolean start =
                command.getBoolean("startTransaction", BsonBoolean.FALSE).getValue();
        if (command.containsKey("writeConcern") && !COMMIT_OR_ABORT.contains(name)) {
            // transaction_validation.cpp validateWriteConcernForTransaction
            return StorageEngine.error(
                    72, "InvalidOptions", "writeConcern is not allowed within a multi-statement transaction");
        }
        if (txnNumber < sessionNumber) {
            return StorageEngine.error(
                    225,
                    "TransactionTooOld",
                    "Cannot start transaction " + txnNumber + " on session " + sessionId
                            + " because a newer transaction " + sessionNumber + " has already started.");
        }
        Txn txn = bySession.get(sessionId);
        if (start) {
            BsonDocument refusedReadConcern = refusedReadConcern(command);
            if (refusedReadConcern != null) {
                return refusedReadConcern;
            }
            if (COMMIT_OR_ABORT.contains(name)) {
                return StorageEngine.error(
                        263,
                        "OperationNotSupportedInTransaction",
                        "Cannot start a transaction with a " + (name.equals("commitTransaction") ? "commit" : "abort"));
            }
            if (txn != null && txn.txnNumber == txnNumber && txn.state != State.ABORTED) {
                return StorageEngine.error(
                        50911,
                        "Location50911",
                        "Cannot start a transaction at given transaction number "
                                + txnNumber + " a transaction with the same number is in state "
                                + (txn.state == State.COMMITTED ? "TxnState::Committed" : "TxnState::InProgress"));
            }
            if (txn != null) {
                end(txn, State.ABORTED);
            }
            txn = new Txn(sessionId, txnNumber);
            Map<String, Map<BsonValue, BsonDocument>> snapshotDocuments = main.documents();
            txn.snapshot = copyOf(snapshotDocuments);
            main.copyValidatorsTo(txn.snapshot); // its writes are validated as the collection's are
            txn.base = snapshotDocuments;
            bySession.put(sessionId, txn);
        } else if (txn == null || txn.txnNumber != txnNumber) {
            return noSuchTransaction(txnNumber, txn == null ? sessionNumber : txn.txnNumber);
        } else if (!start && command.containsKey("readConcern")) {
            return StorageEngine.error(
                    72, "InvalidOptions", "Only the first command in a transaction may specify a readConcern");
        }
        switch (name) {
            case "commitTransaction":
                return commit(txn, committer);
            case "abortTransaction":
                if (txn.state == State.COMMITTED) {
                    return StorageEngine.error(
                            256,
                            "TransactionCommitted",
                            "Transaction with { txnNumber: " + txnNumber + " } has been committed.");
                }
                if (txn.state == State.ABORTED) {
                    return noSuchTransaction(txnNumber, txn.txnNumber);
                }
                end(txn, State.ABORTED);
                return ok();
            default:
                break;
        }
        if (txn.state == State.COMMITTED) {
            return StorageEngine.error(
                    256,
                    "TransactionCommitted",
                    "Transaction with { txnNumber: " + txnNumber + " } has been committed.");
        }
        if (txn.state == State.ABORTED) {
            return noSuchTransaction(txnNumber, txn.txnNumber);
        }
        return statement(operation, txn, main, strip);
    }

    private BsonDocument statement(
            OperationContext operation, Txn txn, StorageEngine main, UnaryOperator<BsonDocument> strip) {
        BsonDocument command = operation.command();
        try {
            BsonDocument reply;
            if (BulkWriteCommand.isBulkWrite(command)) {
                // 8.0's bulk_write.cpp answers a failed op with addErrorReply and then write_ops_exec::handleError:
                // a transient transaction error fails the whole command (ok: 0), any other is the op's error item
                // in an ok: 1 reply, the batch stops and the transaction is aborted.
                boolean[] writeError = {false};
                reply = BulkWriteCommand.run(version, operation.database(), command, (database, op) -> {
                    try {
                        return write(txn, main, database, strip.apply(op), true);
                    } catch (Aborting aborting) {
                        if (aborting.reply
                                        .get("ok", new BsonInt32(0))
                                        .asNumber()
                                        .doubleValue()
                                != 1) {
                            throw aborting;
                        }
                        writeError[0] = true;
                        return aborting.reply;
                    }
                });
                if (writeError[0]) {
                    end(txn, State.ABORTED);
                }
            } else if (WRITES.contains(operation.commandName())) {
                reply = write(txn, main, operation.database(), strip.apply(command), true);
            } else {
                reply = txn.snapshot.run(operation.database(), strip.apply(command));
            }
            if (reply.get("ok", new BsonInt32(0)).asNumber().doubleValue() != 1) {
                // Any failed statement aborts the transaction (service_entry_point_common.cpp, the session's error
                // path).
                end(txn, State.ABORTED);
            }
            return reply;
        } catch (Aborting aborting) {
            end(txn, State.ABORTED);
            return aborting.reply;
        }
    }

    /**
     * One write statement on the transaction's copy: the documents it changed are checked against other transactions'
     * locks and against committed writes since the snapshot, then locked. A write error stops the batch and aborts the
     * transaction ({@link TransactionWriteErrors}).
     */
    private BsonDocument write(
            Txn txn, StorageEngine main, String database, BsonDocument command, boolean writeErrorsInReply) {
        String collection = command.get(command.getFirstKey()).asString().getValue();
        String namespace = database + "." + collection;
        Map<BsonValue, BsonDocument> before = txn.snapshot.documents(database, collection);
        BsonDocument reply = txn.snapshot.run(database, command);
        if (reply.get("ok", new BsonInt32(0)).asNumber().doubleValue() != 1) {
            throw new Aborting(reply);
        }
        if (reply.containsKey("writeErrors") && !reply.getArray("writeErrors").isEmpty()) {
            throw new Aborting(
                    writeErrorsInReply
                            ? TransactionWriteErrors.reply(command, reply, version)
                            : TransactionWriteErrors.commandError(reply));
        }
        Map<BsonValue, BsonDocument> after = txn.snapshot.documents(database, collection);
        Set<BsonValue> changed = new LinkedHashSet<>();
        after.forEach((id, document) -> {
            if (!document.equals(before.get(id))) {
                changed.add(id);
            }
        });
        before.keySet().stream().filter(id -> !after.containsKey(id)).forEach(changed::add);
        gate.writeLock().lock();
        try {
            if (txn.state != State.IN_PROGRESS) {
                throw new Aborting(noSuchTransaction(txn.txnNumber, txn.txnNumber));
            }
            Map<BsonValue, BsonDocument> committed =
                    changed.isEmpty() ? Map.of() : main.documents(database, collection);
            Map<BsonValue, BsonDocument> snapshot = txn.base.getOrDefault(namespace, Map.of());
            for (BsonValue id : changed) {
                DocKey key = new DocKey(namespace, id);
                Txn holder = locks.get(key);
                boolean heldByOther = holder != null && holder != txn && holder.state == State.IN_PROGRESS;
                if (heldByOther || !Objects.equals(committed.get(id), snapshot.get(id))) {
                    throw new Aborting(writeConflict());
                }
            }
            for (BsonValue id : changed) {
                DocKey key = new DocKey(namespace, id);
                locks.put(key, txn);
                txn.written.add(key);
            }
        } finally {
            gate.writeLock().unlock();
        }
        return reply;
    }

    private BsonDocument commit(Txn txn, Committer committer) {
        if (txn.state == State.COMMITTED) {
            // txn_cmds.cpp: "commitTransaction is retryable": a committed transaction answers ok again.
            return ok();
        }
        if (txn.state == State.ABORTED) {
            return noSuchTransaction(txn.txnNumber, txn.txnNumber);
        }
        List<Write> writes = new ArrayList<>();
        for (DocKey key : txn.written) {
            int dot = key.namespace().indexOf('.');
            String database = key.namespace().substring(0, dot);
            String collection = key.namespace().substring(dot + 1);
            BsonDocument document = txn.snapshot.documents(database, collection).get(key.id());
            BsonDocument filter = new BsonDocument("_id", key.id());
            writes.add(new Write(
                    database,
                    document != null
                            ? new BsonDocument("update", new BsonString(collection))
                                    .append(
                                            "updates",
                                            new BsonArray(List.of(new BsonDocument("q", filter)
                                                    .append("u", document)
                                                    .append("upsert", BsonBoolean.TRUE))))
                            : new BsonDocument("delete", new BsonString(collection))
                                    .append(
                                            "deletes",
                                            new BsonArray(List.of(new BsonDocument("q", filter)
                                                    .append("limit", new BsonInt32(1)))))));
        }
        BsonDocument refused = writes.isEmpty() ? null : committer.apply(writes);
        if (refused != null) {
            return refused;
        }
        end(txn, State.COMMITTED);
        return ok();
    }

    /**
     * Runs a write outside any transaction: it waits while a document it targets is locked by an open transaction
     * (mongod retries the write conflict until the transaction ends; its own {@code maxTimeMS} still counts).
     *
     * @param operation the write
     * @param main      the node's data
     * @param write     runs the write
     * @return the write's reply
     */
    BsonDocument outside(
            OperationContext operation, StorageEngine main, java.util.function.Supplier<BsonDocument> write) {
        if (!WRITES.contains(operation.commandName())) {
            return write.get();
        }
        while (true) {
            reap();
            gate.readLock().lock();
            try {
                if (locks.isEmpty() || !targetsLocked(operation, main)) {
                    return write.get();
                }
            } finally {
                gate.readLock().unlock();
            }
            nodeLock.lock();
            try {
                operation.awaitInterruptibly(
                        () -> !targetsLocked(operation, main), System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw OperationInterruptedException.killed();
            } finally {
                nodeLock.unlock();
            }
        }
    }

    private boolean targetsLocked(OperationContext operation, StorageEngine main) {
        BsonDocument command = operation.command();
        String collection = command.get(command.getFirstKey()).asString().getValue();
        String namespace = operation.database() + "." + collection;
        List<BsonValue> ids = new ArrayList<>();
        switch (operation.commandName()) {
            case "insert":
                command.getArray("documents", new BsonArray()).forEach(document -> {
                    if (document.asDocument().containsKey("_id")) {
                        ids.add(document.asDocument().get("_id"));
                    }
                });
                break;
            case "update":
            case "delete":
                command.getArray(operation.commandName().equals("update") ? "updates" : "deletes", new BsonArray())
                        .forEach(statement -> ids.addAll(main.matchingIds(
                                operation.database(),
                                collection,
                                statement.asDocument().getDocument("q", new BsonDocument()))));
                break;
            default:
                ids.addAll(main.matchingIds(
                        operation.database(), collection, command.getDocument("query", new BsonDocument())));
                break;
        }
        for (BsonValue id : ids) {
            Txn holder = locks.get(new DocKey(namespace, id));
            if (holder != null && holder.state == State.IN_PROGRESS) {
                return true;
            }
        }
        return false;
    }

    /**
     * Aborts the session's transaction if it is in progress: {@code killSessions} aborts an unprepared transaction of
     * every session it names, idle or running (mongodb/mongo {@code src/mongo/db/kill_sessions_local.cpp}
     * {@code killSessionsAbortUnpreparedTransactions}); its later statements and its commit answer
     * {@code NoSuchTransaction}.
     */
    void abortInProgress(String sessionId) {
        Txn txn = bySession.get(sessionId);
        if (txn != null) {
            end(txn, State.ABORTED);
        }
    }

    /** Aborts the transactions older than the lifetime limit (the server's periodic transaction reaper). */
    private void reap() {
        long now = System.nanoTime();
        for (Txn txn : bySession.values()) {
            if (txn.state == State.IN_PROGRESS && now - txn.startedNanos > lifetimeLimitNanos) {
                end(txn, State.ABORTED);
            }
        }
    }

    private void end(Txn txn, State state) {
        synchronized (txn) {
            if (txn.state != State.IN_PROGRESS) {
                return;
            }
            txn.state = state;
            txn.written.forEach(key -> locks.remove(key, txn));
            // The copy is left to the garbage collector: a statement of the session may still be running on it when the
            // reaper ends the transaction; it then finds the transaction ended before it locks anything.
        }
        nodeLock.lock();
        try {
            changed.signalAll();
        } finally {
            nodeLock.unlock();
        }
    }

    private static StorageEngine copyOf(Map<String, Map<BsonValue, BsonDocument>> documents) {
        StorageEngine copy = new StorageEngine();
        documents.forEach((namespace, byId) -> {
            int dot = namespace.indexOf('.');
            String database = namespace.substring(0, dot);
            String collection = namespace.substring(dot + 1);
            copy.run(database, new BsonDocument("create", new BsonString(collection)));
            if (!byId.isEmpty()) {
                copy.run(
                        database,
                        new BsonDocument("insert", new BsonString(collection))
                                .append("documents", new BsonArray(new ArrayList<>(byId.values()))));
            }
        });
        return copy;
    }

    private static BsonDocument noSuchTransaction(long txnNumber, long active) {
        return StorageEngine.error(
                251,
                "NoSuchTransaction",
                "Given transaction number " + txnNumber
                        + " does not match any in-progress transactions. The active transaction number is " + active);
    }

    private static BsonDocument writeConflict() {
        return StorageEngine.error(
                112,
                "WriteConflict",
                "WriteConflict error: this operation conflicted with another"
                        + " operation. Please retry your operation or multi-document transaction.");
    }

    private static BsonDocument ok() {
        return new BsonDocument("ok", new BsonDouble(1));
    }
}
