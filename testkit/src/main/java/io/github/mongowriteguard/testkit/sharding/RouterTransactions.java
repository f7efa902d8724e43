package io.github.mongowriteguard.testkit.sharding;

import io.github.mongowriteguard.testkit.engine.StorageEngine;
import io.github.mongowriteguard.testkit.node.OperationContext;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * The emulated mongos' side of multi-document transactions, after mongodb/mongo {@code src/mongo/s/transaction_router.cpp}
 * ({@code TransactionRouter}), {@code src/mongo/s/commands/cluster_commit_transaction_cmd.cpp} and
 * {@code cluster_abort_transaction_cmd.cpp}. Shards are {@link io.github.mongowriteguard.testkit.node.EmulatedNode}s
 * that run transactions themselves; the router tracks, per session and {@code txnNumber}, the shards a transaction has
 * reached (its participants) and decorates every command it sends them:
 * <ul>
 *   <li>the first command to a shard carries {@code startTransaction: true}, {@code autocommit: false}, the
 *       {@code txnNumber} and the client's {@code readConcern} ({@code attachTxnFieldsIfNeeded}); later ones
 *       {@code autocommit: false} and the {@code txnNumber} only;</li>
 *   <li>a statement that fails on a shard aborts the transaction on every participant
 *       ({@code implicitlyAbortTransaction}); a write's child error that carries {@code TransientTransactionError}
 *       becomes the command's top-level error ({@code batch_write_exec.cpp}: "Encountered error from ... during a
 *       transaction"), another stays a write error;</li>
 *   <li>{@code commitTransaction} takes the server's paths ({@code TransactionRouter::Router::commitTransaction}):
 *       no participant, one participant, read-only participants (commit sent to all), one write participant (the
 *       read-only ones first, then the writer), several write participants (two-phase commit, simplified: see
 *       {@link #commit});</li>
 *   <li>{@code abortTransaction} goes to every participant.</li>
 * </ul>
 * A participant is a writer once the router sent it a write command ({@code insert}, {@code update}, {@code delete},
 * {@code findAndModify}); a real shard says so itself in its reply's {@code readOnly} field.
 */
final class RouterTransactions {
    /** How the router reaches a shard's primary. */
    interface Shards {
        BsonDocument send(OperationContext operation, String shard, String database, BsonDocument command);

        boolean inProgress(String shard, BsonDocument lsid, long txnNumber);
    }

    private static final java.util.Set<String> WRITES =
            java.util.Set.of("insert", "update", "delete", "findAndModify", "findandmodify");

    /** One transaction as the router knows it. */
    private static final class Txn {
        final BsonDocument lsid;
        final long txnNumber;
        final BsonValue readConcern;
        /** Participants in the order reached, and whether each was sent a write. */
        final Map<String, Boolean> participants = new LinkedHashMap<>();

        boolean committed;

        Txn(BsonDocument lsid, long txnNumber, BsonValue readConcern) {
            this.lsid = lsid;
            this.txnNumber = txnNumber;
            this.readConcern = readConcern;
        }
    }

    /** One client statement in flight: its transaction and the first shard error it met. */
    private static final class Statement {
        final Txn txn;
        volatile BsonDocument failure;
        volatile String failedShard;

        Statement(Txn txn) {
            this.txn = txn;
        }
    }

    private final Shards shards;
    private final Map<BsonDocument, Txn> bySession = new ConcurrentHashMap<>();
    private final Map<OperationContext, Statement> running = new ConcurrentHashMap<>();
    /**
     * Held exclusively while a two-phase commit applies its participants' commits, shared by reads outside
     * transactions that gather from several shards: such a read sees all of a multi-shard commit or none of it.
     */
    private final ReentrantReadWriteLock commitGate = new ReentrantReadWriteLock();

    RouterTransactions(Shards shards) {
        this.shards = shards;
    }

    /** Whether the client's command belongs to a transaction ({@code autocommit} present, or commit/abort). */
    static boolean isTransactionCommand(BsonDocument client) {
        String name = client.getFirstKey();
        return client.containsKey("autocommit") || name.equals("commitTransaction") || name.equals("abortTransaction");
    }

    /** Whether {@code operation} is a statement of a transaction this router runs. */
    boolean inTransaction(OperationContext operation) {
        return running.containsKey(operation);
    }

    /** Runs a read outside transactions so that it does not see half of a two-phase commit. */
    BsonDocument outsideRead(Supplier<BsonDocument> read) {
        commitGate.readLock().lock();
        try {
            return read.get();
        } finally {
            commitGate.readLock().unlock();
        }
    }

    /**
     * Runs one client command of a transaction.
     *
     * @param operation the client's command (with its session fields)
     * @param route     routes a statement as outside transactions; every child command it sends goes through
     *                  {@link #decorate} and {@link #observe}
     * @return the reply to the client
     */
    BsonDocument run(OperationContext operation, Supplier<BsonDocument> route) {
        BsonDocument client = operation.command();
        String name = client.getFirstKey();
        if (!client.containsKey("txnNumber")) {
            return StorageEngine.error(
                    72,
                    "InvalidOptions",
                    name.equals("commitTransaction") || name.equals("abortTransaction")
                            ? name + " must be run within a transaction"
                            : "'autocommit' field requires a transaction number to also be specified");
        }
        BsonValue autocommit = client.get("autocommit");
        if (autocommit == null
                || !autocommit.isBoolean()
                || autocommit.asBoolean().getValue()) {
            return StorageEngine.error(72, "InvalidOptions", "Specifying autocommit=true is not allowed.");
        }
        BsonDocument lsid = client.getDocument("lsid");
        long txnNumber = client.getNumber("txnNumber").longValue();
        boolean start = client.getBoolean("startTransaction", BsonBoolean.FALSE).getValue();
        Txn txn = bySession.get(lsid);
        if (txn != null && txnNumber < txn.txnNumber) {
            return StorageEngine.error(
                    225,
                    "TransactionTooOld",
                    "txnNumber " + txnNumber + " is less than last txnNumber " + txn.txnNumber + " seen in session");
        }
        if (start) {
            if (name.equals("commitTransaction") || name.equals("abortTransaction")) {
                return StorageEngine.error(
                        263,
                        "OperationNotSupportedInTransaction",
                        "Cannot start a transaction with a " + (name.equals("commitTransaction") ? "commit" : "abort"));
            }
            if (txn != null && txn.txnNumber == txnNumber) {
                // TransactionRouter::Router::beginOrContinueTxn, kStart on the active txnNumber.
                return StorageEngine.error(
                        117,
                        "ConflictingOperationInProgress",
                        "txnNumber " + txnNumber + " for session has already started");
            }
            txn = new Txn(lsid, txnNumber, client.get("readConcern"));
            bySession.put(lsid, txn);
        } else if (txn == null || txn.txnNumber != txnNumber) {
            return StorageEngine.error(
                    251,
                    "NoSuchTransaction",
                    "cannot continue txnId " + txnNumber
                            + " for a transaction that has not been started on this router");
        }
        if (name.equals("commitTransaction")) {
            return commit(operation, txn);
        }
        if (name.equals("abortTransaction")) {
            return abort(operation, txn);
        }
        Statement statement = new Statement(txn);
        running.put(operation, statement);
        BsonDocument reply;
        try {
            reply = route.get();
        } finally {
            running.remove(operation);
        }
        boolean failed = reply.get("ok", new BsonInt32(0)).asNumber().doubleValue() != 1;
        if (statement.failure == null && !failed) {
            return reply;
        }
        implicitlyAbort(operation, txn);
        BsonDocument failure = statement.failure;
        if (!failed && failure != null && WRITES.contains(name) && labelled(failure, "TransientTransactionError")) {
            BsonDocument error = StorageEngine.error(
                    failure.getNumber("code").intValue(),
                    failure.getString("codeName", new BsonString("UnknownError"))
                            .getValue(),
                    "Encountered error from " + statement.failedShard + " during a transaction :: caused by :: "
                            + failure.getString("errmsg", new BsonString("")).getValue());
            error.put("errorLabels", failure.getArray("errorLabels"));
            return error;
        }
        return reply;
    }

    /**
     * A child command for {@code shard} on behalf of a statement of a transaction: the session, {@code txnNumber}
     * and {@code autocommit: false}; for a shard the transaction has not reached yet, {@code startTransaction} and
     * the transaction's {@code readConcern} as well. Returns null when the statement already failed on a shard (the
     * router sends nothing more for it), else the child to send.
     */
    BsonDocument decorate(OperationContext operation, String shard, BsonDocument child) {
        Statement statement = running.get(operation);
        if (statement == null) {
            return child;
        }
        if (statement.failure != null) {
            return null;
        }
        Txn txn = statement.txn;
        BsonDocument decorated = new BsonDocument();
        for (Map.Entry<String, BsonValue> field : child.entrySet()) {
            switch (field.getKey()) {
                case "startTransaction", "autocommit", "readConcern", "lsid", "txnNumber", "stmtIds", "stmtId" -> {}
                default -> decorated.put(field.getKey(), field.getValue());
            }
        }
        decorated.put("lsid", txn.lsid);
        decorated.put("txnNumber", new BsonInt64(txn.txnNumber));
        boolean write = WRITES.contains(child.getFirstKey());
        synchronized (txn) {
            Boolean wrote = txn.participants.get(shard);
            if (wrote == null) {
                txn.participants.put(shard, write);
                decorated.put("startTransaction", BsonBoolean.TRUE);
                if (txn.readConcern != null) {
                    decorated.put("readConcern", txn.readConcern);
                }
            } else if (write && !wrote) {
                txn.participants.put(shard, true);
            }
        }
        decorated.put("autocommit", BsonBoolean.FALSE);
        return decorated;
    }

    /** The reply {@code shard} gave to a child of a transaction's statement: its first error fails the statement. */
    void observe(OperationContext operation, String shard, BsonDocument reply) {
        Statement statement = running.get(operation);
        if (statement == null || statement.failure != null) {
            return;
        }
        if (reply.get("ok", new BsonInt32(0)).asNumber().doubleValue() != 1) {
            statement.failedShard = shard;
            statement.failure = reply;
        } else if (reply.containsKey("writeErrors")
                && !reply.getArray("writeErrors").isEmpty()) {
            BsonDocument first = reply.getArray("writeErrors").get(0).asDocument();
            statement.failedShard = shard;
            statement.failure = StorageEngine.error(
                    first.getNumber("code").intValue(),
                    first.getString("codeName", new BsonString("UnknownError")).getValue(),
                    first.getString("errmsg", new BsonString("")).getValue());
        }
    }

    /** The reply a statement gets for a child the router did not send because the statement had already failed. */
    BsonDocument failure(OperationContext operation) {
        Statement statement = running.get(operation);
        return statement == null || statement.failure == null
                ? StorageEngine.error(251, "NoSuchTransaction", "the transaction was aborted")
                : statement.failure.clone();
    }

    /** {@code implicitlyAbortTransaction}: {@code abortTransaction} to every participant, replies ignored. */
    private void implicitlyAbort(OperationContext operation, Txn txn) {
        for (String shard : participants(txn).keySet()) {
            shards.send(operation, shard, "admin", txnCommand("abortTransaction", txn, null));
        }
    }

    /**
     * {@code commitTransaction} on the paths of {@code TransactionRouter::Router::commitTransaction}: no participant
     * (ok), a single participant (commit forwarded), read-only participants (commit sent to every one), a single write
     * participant (commit to the read-only ones, then to the writer). With several write participants the server
     * runs two-phase commit through a coordinator on one participant ({@code src/mongo/db/s/transaction_coordinator.cpp}:
     * prepare on all, a durable decision, then commit or abort on all). The emulator simplifies it: "prepare" asks each
     * write participant whether the transaction is still open there (no prepared state: a participant could still
     * abort between this vote and its commit, which the server forbids, and nothing survives a restart), an abort
     * vote aborts every participant and answers {@code NoSuchTransaction}; otherwise the commits are sent one after
     * another while the router's commit gate keeps its multi-shard reads outside transactions out, so a reader
     * through this mongos sees all of the commit or none of it. A commit that fails on a later participant after an
     * earlier one committed is returned as is (the server cannot get there after a successful prepare). A retried
     * commit of a committed transaction is sent to the participants again; each answers ok, as the coordinator
     * answers its decision again.
     */
    private BsonDocument commit(OperationContext operation, Txn txn) {
        BsonValue writeConcern = operation.command().get("writeConcern");
        Map<String, Boolean> participants = participants(txn);
        if (participants.isEmpty()) {
            return ok();
        }
        List<String> writers = new ArrayList<>();
        List<String> readers = new ArrayList<>();
        participants.forEach((shard, wrote) -> (wrote ? writers : readers).add(shard));
        if (participants.size() == 1 || writers.isEmpty()) {
            return commitOn(operation, txn, new ArrayList<>(participants.keySet()), writeConcern);
        }
        if (writers.size() == 1) {
            BsonDocument readOnly = commitOn(operation, txn, readers, writeConcern);
            if (!isOk(readOnly)) {
                return readOnly;
            }
            if (readOnly.containsKey("writeConcernError")) {
                // The read-only shards' write-concern error is the command's error: the writer has not committed yet.
                BsonDocument wce = readOnly.getDocument("writeConcernError");
                return StorageEngine.error(
                        wce.getNumber("code", new BsonInt32(64)).intValue(),
                        wce.getString("codeName", new BsonString("WriteConcernFailed"))
                                .getValue(),
                        wce.getString("errmsg", new BsonString("write concern error"))
                                .getValue());
            }
            return commitOn(operation, txn, writers, writeConcern);
        }
        commitGate.writeLock().lock();
        try {
            boolean committed;
            synchronized (txn) {
                committed = txn.committed;
            }
            if (!committed) {
                for (String shard : writers) {
                    if (!shards.inProgress(shard, txn.lsid, txn.txnNumber)) {
                        implicitlyAbort(operation, txn);
                        return StorageEngine.error(
                                251,
                                "NoSuchTransaction",
                                "Transaction was aborted: participant " + shard + " voted to abort");
                    }
                }
            }
            BsonDocument reply = commitOn(operation, txn, new ArrayList<>(participants.keySet()), writeConcern);
            if (isOk(reply)) {
                synchronized (txn) {
                    txn.committed = true;
                }
            }
            return reply;
        } finally {
            commitGate.writeLock().unlock();
        }
    }

    /** Commit sent to each of {@code targets} in order: the first error (or write-concern error) is the answer. */
    private BsonDocument commitOn(OperationContext operation, Txn txn, List<String> targets, BsonValue writeConcern) {
        BsonDocument answer = ok();
        for (String shard : targets) {
            BsonDocument reply =
                    shards.send(operation, shard, "admin", txnCommand("commitTransaction", txn, writeConcern));
            if (!isOk(reply)) {
                return reply;
            }
            if (reply.containsKey("writeConcernError") && !answer.containsKey("writeConcernError")) {
                answer.put("writeConcernError", reply.get("writeConcernError"));
            }
        }
        return answer;
    }

    /**
     * {@code abortTransaction} to every participant ({@code TransactionRouter::Router::abortTransaction}); with no
     * participant the router has nothing to abort ({@code NoSuchTransaction}). The first error is the answer.
     */
    private BsonDocument abort(OperationContext operation, Txn txn) {
        Map<String, Boolean> participants = participants(txn);
        if (participants.isEmpty()) {
            return StorageEngine.error(
                    251,
                    "NoSuchTransaction",
                    "no known command has been sent by this router for" + " this transaction");
        }
        BsonDocument answer = ok();
        BsonValue writeConcern = operation.command().get("writeConcern");
        for (String shard : participants.keySet()) {
            BsonDocument reply =
                    shards.send(operation, shard, "admin", txnCommand("abortTransaction", txn, writeConcern));
            if (!isOk(reply) && isOk(answer)) {
                answer = reply;
            }
        }
        return answer;
    }

    private static Map<String, Boolean> participants(Txn txn) {
        synchronized (txn) {
            return new LinkedHashMap<>(txn.participants);
        }
    }

    private static BsonDocument txnCommand(String name, Txn txn, BsonValue writeConcern) {
        BsonDocument command = new BsonDocument(name, new BsonInt32(1))
                .append("lsid", txn.lsid)
                .append("txnNumber", new BsonInt64(txn.txnNumber))
                .append("autocommit", BsonBoolean.FALSE);
        if (writeConcern != null) {
            command.append("writeConcern", writeConcern);
        }
        return command;
    }

    private static boolean labelled(BsonDocument reply, String label) {
        return reply.containsKey("errorLabels") && reply.getArray("errorLabels").contains(new BsonString(label));
    }

    private static boolean isOk(BsonDocument reply) {
        return reply.get("ok", new BsonInt32(0)).asNumber().doubleValue() == 1;
    }

    private static BsonDocument ok() {
        return new BsonDocument("ok", new BsonDouble(1));
    }
}
