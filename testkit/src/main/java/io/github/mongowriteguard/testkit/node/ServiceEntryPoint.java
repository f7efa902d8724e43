package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.engine.StorageEngine;
import io.github.mongowriteguard.testkit.failpoint.FailCommand;
import io.github.mongowriteguard.testkit.failpoint.OnPrimaryTransactionalWrite;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.truth.CommandRecord;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import io.github.mongowriteguard.testkit.truth.TxnId;
import io.github.mongowriteguard.testkit.truth.WriteStatement;
import io.github.mongowriteguard.testkit.wire.ClientConnection;
import io.github.mongowriteguard.testkit.wire.CommandHandler.CloseConnectionSignal;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's command dispatch, in the order of mongodb/mongo {@code src/mongo/db/service_entry_point_common.cpp}
 * (4.4 {@code execCommandDatabase}; 5.0+ {@code ExecCommandDatabase}, on 8.0+ in
 * {@code service_entry_point_shard_role.cpp}) for the steps that matter for writes: authorization, the
 * {@code failCommand} fail point (close, block, error) before the session check-out, the deadline from
 * {@code maxTimeMS}, the not-primary check, the session check-out (a second command on the same session waits for
 * the first, as a driver resend does), the retryable-write history (statements that already ran under the session's
 * {@code txnNumber} report their recorded result; a lower {@code txnNumber} is {@code TransactionTooOld}), stalls,
 * then the node's own answer or the executor, the write-concern wait after the check-in, and the error labels
 * ({@code src/mongo/db/error_labels.cpp}). A client that stops waiting does not stop the command.
 */
final class ServiceEntryPoint {
    /** The node's logger, as before the dispatch had its own class. */
    private static final Logger log = LoggerFactory.getLogger(EmulatedNode.class);

    private static final AtomicLong OPIDS = new AtomicLong(1000);
    /** The emulator's op times (one clock for all nodes): a write that applied takes the next one. */
    private static final AtomicLong OPTIMES = new AtomicLong();

    static final Set<String> NOT_RECORDED = Set.of("hello", "ismaster", "isMaster");
    private static final Set<String> STRIPPED = Set.of(
            "lsid",
            "txnNumber",
            "$clusterTime",
            "$readPreference",
            "maxTimeMS",
            "comment",
            "writeConcern",
            "readConcern",
            "$db",
            "apiVersion",
            "apiStrict",
            "apiDeprecationErrors",
            "autocommit",
            "startTransaction",
            "stmtId",
            "stmtIds",
            "$audit",
            "$client",
            "shardVersion",
            "databaseVersion",
            "allowImplicitCollectionCreation");

    private final EmulatedNode node;
    private final String name;
    private final NodeIdentity identity;
    private final CommandExecutor executor;
    private final ReentrantLock lock;
    private final Condition changed;
    private final InterruptPoints interruptPoints;
    private final SessionCatalog sessionCatalog;
    private final Map<Long, OperationContext> active;
    /** The node's truth, which bounds the write statements it holds between resets ({@code ServerTruth.newStore()}). */
    private final Collection<CommandRecord> records;

    private final FailCommand failCommand;
    private final OnPrimaryTransactionalWrite onPrimaryTransactionalWrite;
    private final Stalls stalls;
    private final Transactions transactions;
    private final ReplicationInfo replicationInfo;
    private final AuthorizationSession authorizationSession;
    private final SaslCommands saslCommands;
    private final FailPointCommand failPointCommand;
    private final GenericCommands genericCommands;

    /** The dispatch of {@code node}, over the node's parts (built before it). */
    ServiceEntryPoint(EmulatedNode node) {
        this.node = node;
        this.name = node.name();
        this.identity = node.identity();
        this.executor = node.executor;
        this.lock = node.lock;
        this.changed = node.changed;
        this.interruptPoints = node.interruptPoints;
        this.sessionCatalog = node.sessionCatalog;
        this.active = node.active;
        this.records = node.records;
        this.failCommand = node.failCommand();
        this.onPrimaryTransactionalWrite = node.onPrimaryTransactionalWrite();
        this.stalls = node.stalls;
        this.transactions = node.transactions;
        this.replicationInfo = node.replicationInfo;
        this.authorizationSession = node.authorizationSession;
        this.saslCommands = node.saslCommands;
        this.failPointCommand = node.failPointCommand;
        this.genericCommands = node.genericCommands;
    }

    BsonDocument handle(ClientConnection connection, String database, BsonDocument command) {
        String commandName = command.getFirstKey();
        Membership member = node.membership();
        long incarnation = member == null ? 0 : member.incarnation();
        if (node.reach() != Membership.Reach.SERVING) {
            throw node.unreachable(connection);
        }
        genericCommands.count(commandName, false);
        if (commandName.equals("hello") || commandName.equalsIgnoreCase("isMaster")) {
            return replicationInfo.hello(connection, command);
        }
        if (commandName.equals("configureFailPoint")) {
            return failPointCommand.configureFailPoint(database, command);
        }
        if (commandName.equals("saslStart") || commandName.equals("saslContinue")) {
            return saslCommands.sasl(connection, database, command);
        }
        BsonDocument badMaxTime = MaxTimeMs.refusal(command);
        if (badMaxTime != null) {
            return badMaxTime;
        }
        BsonDocument badBatch = WriteBatchSize.refusal(command);
        if (badBatch != null) {
            return badBatch;
        }
        long opid = OPIDS.incrementAndGet();
        long start = System.nanoTime();
        CommandRecord record =
                NOT_RECORDED.contains(commandName) ? null : newRecord(opid, connection, database, command, start);
        long maxTimeMs = command.containsKey("maxTimeMS")
                ? command.get("maxTimeMS").asNumber().longValue()
                : 0;
        OperationContext operation =
                new OperationContext(opid, connection, database, command, start, maxTimeMs, lock, changed, record);
        if (identity.kind() != NodeIdentity.Kind.MONGOS) {
            operation.deferDeadline();
        }
        active.put(opid, operation);
        try {
            BsonDocument reply = run(operation);
            endRecord(record, reply);
            if (reply.get("ok", new BsonInt32(1)).asNumber().doubleValue() != 1) {
                genericCommands.count(commandName, true);
            }
            if (node.reach() != Membership.Reach.SERVING || (member != null && member.incarnation() != incarnation)) {
                // Partitioned or restarted while the command ran: its answer never reaches the client.
                closedAfterRun(record);
                throw node.unreachable(connection);
            }
            if (node.loseReply(commandName)) {
                closedAfterRun(record);
                throw new CloseConnectionSignal();
            }
            return reply;
        } catch (CloseConnectionSignal signal) {
            if (record != null && record.running()) {
                record.end(ReceivedCommand.Outcome.CONNECTION_CLOSED, 0);
            }
            connection.close();
            throw signal;
        } catch (RuntimeException e) {
            log.warn("{}: {} failed in the emulator", name, commandName, e);
            if (record != null) {
                record.end(ReceivedCommand.Outcome.ERROR, 1);
            }
            return StorageEngine.error(1, "InternalError", "emulator failure: " + e);
        } finally {
            active.remove(opid);
        }
    }

    private BsonDocument run(OperationContext operation) {
        BsonDocument command = operation.command();
        CommandDeadline deadline = CommandDeadline.before(identity);
        Optional<FailCommand.Action> failure = failCommand.evaluate(
                operation.commandName(),
                operation.connection().appName(),
                operation.connection().isInternal());
        if (failure.isPresent()) {
            FailCommand.Action action = failure.get();
            if (action.closeConnection()) {
                throw new CloseConnectionSignal();
            }
            if (action.blockTimeMs() > 0) {
                BsonDocument interrupted = block(operation, action.blockTimeMs());
                if (interrupted != null) {
                    return interrupted;
                }
            }
            if (action.errorCode() != null) {
                BsonDocument reply = StorageEngine.error(
                        action.errorCode(),
                        codeName(action.errorCode()),
                        "Failing command via 'failCommand' failpoint");
                return labelled(operation, reply, action);
            }
        }
        // Authorization after the fail point, as mongod's execCommandDatabase and mongos' runCommand evaluate
        // failCommand before the command's checkAuthorization (service_entry_point_common.cpp, strategy.cpp).
        BsonDocument refused = authorizationSession.authorize(operation);
        if (refused != null) {
            return refused;
        }
        if (identity.kind() != NodeIdentity.Kind.MONGOS) {
            deadline.arm(operation);
        }
        Membership member = node.membership();
        if (member != null && !member.isWritablePrimary()) {
            BsonDocument notPrimary = notPrimary(operation);
            if (notPrimary != null) {
                return labelled(operation, notPrimary, null);
            }
        }
        if (!identity.version().atLeast(io.github.mongowriteguard.testkit.server.ServerVersion.V4_4)
                && command.containsKey("comment")
                && Stall.WRITE_COMMANDS.contains(operation.commandName())) {
            return StorageEngine.error(
                    40415,
                    "Location40415",
                    "BSON field '" + operation.commandName() + ".comment' is an unknown field.");
        }
        if (identity.kind() == NodeIdentity.Kind.MONGOS
                && Transactions.isTransactionCommand(command)
                && !command.containsKey("lsid")) {
            return labelled(operation, Transactions.withoutSession(command), null);
        }
        // The command body starts here: the fail point and the not-primary check above ran before it, and their errors
        // carry no NoWritesPerformed (mongod takes lastOpBeforeRun in runCommandImpl, service_entry_point_common.cpp).
        operation.lastOpBeforeRun(operation.connection().lastOp());
        // CurOp's clock starts here, before the session check-out: a command queued behind another on its session
        // already shows secs_running (see OperationContext#startExecution).
        operation.startExecution();
        SessionState session = null;
        BsonDocument reply = null;
        if (identity.kind() == NodeIdentity.Kind.STANDALONE
                && node.membership() == null
                && command.containsKey("txnNumber")) {
            // A standalone mongod refuses a txnNumber before the command runs: mongodb/mongo
            // src/mongo/db/initialize_operation_session_info.cpp, initializeOperationSessionInfo
            // (isReplSetMemberOrMongos
            // false). So it has no retryable writes and no transactions.
            return labelled(
                    operation,
                    StorageEngine.error(
                            20,
                            "IllegalOperation",
                            "Transaction numbers are only allowed on a replica set member or mongos"),
                    null);
        }
        try {
            if (command.containsKey("lsid") && identity.kind() != NodeIdentity.Kind.MONGOS) {
                session = sessionCatalog.checkOut(operation);
            }
            reply = runInSession(operation, session);
        } catch (OperationInterruptedException e) {
            reply = StorageEngine.error(e.code(), e.codeName(), e.getMessage());
            return labelled(operation, reply, null);
        } finally {
            if (session != null) {
                // End the record before the session is free, so a waiting resend always ends after its original.
                if (reply != null) {
                    endRecord(operation.record(), reply);
                }
                sessionCatalog.checkIn(session);
            }
        }
        if (failure.isPresent() && failure.get().writeConcernError() != null) {
            // The fail point's writeConcernError replaces the wait (service_entry_point_common.cpp,
            // _waitForWriteConcern).
            reply.put("writeConcernError", failure.get().writeConcernError());
            return labelled(operation, reply, failure.get());
        }
        if (member != null
                && (Membership.WRITE_COMMANDS.contains(operation.commandName())
                        || operation.commandName().equals("commitTransaction")
                        || operation.commandName().equals("abortTransaction"))
                && reply.get("ok", new BsonInt32(0)).asNumber().doubleValue() == 1) {
            // After the session is checked in, as mongod waits for write concern once the command has run.
            BsonDocument writeConcernError = member.awaitWriteConcern(operation);
            if (writeConcernError != null) {
                reply.put("writeConcernError", writeConcernError);
            }
        }
        return labelled(operation, reply, null);
    }

    /**
     * The dispatch check of a member that is not the primary ({@code service_entry_point_common.cpp}, after the
     * {@code failCommand} fail point): writes fail with {@code NotWritablePrimary} (10107), reads without a
     * {@code $readPreference} that allows secondaries with {@code NotPrimaryNoSecondaryOk} (13435).
     */
    private BsonDocument notPrimary(OperationContext operation) {
        String commandName = operation.commandName();
        boolean modern = identity.version().atLeast(io.github.mongowriteguard.testkit.server.ServerVersion.V5_0);
        if (Membership.WRITE_COMMANDS.contains(commandName)) {
            return StorageEngine.error(10107, "NotWritablePrimary", modern ? "not primary" : "not master");
        }
        boolean aggregateRead = commandName.equals("aggregate")
                && !Introspection.isCurrentOpPipeline(operation.command())
                && !Introspection.isListLocalSessionsPipeline(operation.command());
        if ((Membership.SECONDARY_OK_COMMANDS.contains(commandName) || aggregateRead)
                && !secondaryOk(operation.command())) {
            return StorageEngine.error(
                    13435,
                    "NotPrimaryNoSecondaryOk",
                    modern ? "not primary and secondaryOk=false" : "not master and slaveOk=false");
        }
        return null;
    }

    private static boolean secondaryOk(BsonDocument command) {
        BsonValue preference = command.get("$readPreference");
        return preference != null
                && preference.isDocument()
                && !preference
                        .asDocument()
                        .getString("mode", new BsonString("primary"))
                        .getValue()
                        .equals("primary");
    }

    /** The command ran (its record says whether it wrote), then the connection closed instead of answering. */
    private static void closedAfterRun(CommandRecord record) {
        if (record != null) {
            record.end(ReceivedCommand.Outcome.CONNECTION_CLOSED, 0);
        }
    }

    /**
     * The fail point's {@code blockConnection} wait: {@code opCtx->sleepFor(blockTimeMS)} in mongodb/mongo
     * {@code src/mongo/db/commands.cpp} {@code evaluateFailCommandFailPoint}, an interruptible sleep, so {@code killOp}
     * or {@code killSessions} ends it ({@code Interrupted}, 11601). It runs before the deadline is set, so
     * {@code maxTimeMS} does not end it and counts only after it. Returns the error reply when killed, else null.
     */
    private BsonDocument block(OperationContext operation, long blockTimeMs) {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(blockTimeMs);
        lock.lock();
        try {
            operation.awaitInterruptibly(() -> false, until);
            return null;
        } catch (OperationInterruptedException e) {
            return labelled(operation, StorageEngine.error(e.code(), e.codeName(), e.getMessage()), null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return StorageEngine.error(11601, "Interrupted", "operation was interrupted");
        } finally {
            lock.unlock();
        }
    }

    private static void endRecord(CommandRecord record, BsonDocument reply) {
        if (record != null && record.running()) {
            boolean ok = reply.get("ok", new BsonInt32(1)).asNumber().doubleValue() == 1;
            record.end(
                    ok ? ReceivedCommand.Outcome.OK : ReceivedCommand.Outcome.ERROR,
                    ok ? 0 : reply.get("code", new BsonInt32(0)).asNumber().intValue());
        }
    }

    private BsonDocument runInSession(OperationContext operation, SessionState session) {
        BsonDocument command = operation.command();
        if (Transactions.isTransactionCommand(command) && identity.kind() != NodeIdentity.Kind.MONGOS) {
            return session != null ? inTransaction(operation, session) : Transactions.withoutSession(command);
        }
        boolean retryableWrite = session != null && ErrorLabels.isRetryableWrite(command);
        if (retryableWrite) {
            long txnNumber = command.getNumber("txnNumber").longValue();
            transactions.newerTxnNumber(session.id, txnNumber);
            if (txnNumber < session.txnNumber) {
                return StorageEngine.error(
                        225,
                        "TransactionTooOld",
                        "Retryable write with txnNumber " + txnNumber
                                + " is prohibited on session " + session.id
                                + " because a newer retryable write with txnNumber "
                                + session.txnNumber + " has already started on this session.");
            }
            if (txnNumber > session.txnNumber) {
                session.txnNumber = txnNumber;
                session.statements.clear();
                session.statementTargets.clear();
                session.incompleteHistory = false;
            }
            RetryableStatements statements = RetryableStatements.of(command);
            if (session.incompleteHistory && !statements.allExecuted(session.statements)) {
                // TransactionParticipant::checkStatementExecuted: a statement not in the history of a transaction whose
                // history is incomplete cannot be told apart from one that ran.
                return StorageEngine.error(
                        217,
                        "IncompleteTransactionHistory",
                        "Incomplete history detected for" + " transaction " + txnNumber + " on session " + session.id);
            }
            for (int i = 0; i < statements.stmtIds().size(); i++) {
                session.statementTargets.putIfAbsent(
                        statements.stmtIds().get(i),
                        new BsonDocument("ns", new BsonString(EmulatedNode.namespace(operation.database(), command)))
                                .append("op", new BsonString(operation.commandName()))
                                .append("item", statements.items().get(i)));
            }
            if (statements.allExecuted(session.statements)) {
                CommandRecord record = operation.record();
                if (record != null) {
                    record.end(ReceivedCommand.Outcome.RETRIED_RESULT, 0);
                }
                // A retry's recorded result sets the client's last op to the system's (setLastOpToSystemLastOpTime).
                operation.connection().lastOp(OPTIMES.get());
                return RetryableStatements.of(command)
                        .run(session.statements, null)
                        .reply();
            }
        }
        operation.checkForInterrupt();
        Membership member = node.membership();
        if (member != null && Membership.WRITE_COMMANDS.contains(operation.commandName())) {
            BsonDocument refused = member.beginWrite(operation);
            if (refused != null) {
                member.endWrite(operation);
                return refused;
            }
            try {
                return transactions.outside(
                        operation, node.engine(), () -> execute(operation, session, retryableWrite, member));
            } finally {
                member.endWrite(operation);
            }
        }
        if (identity.kind() != NodeIdentity.Kind.MONGOS) {
            return transactions.outside(
                    operation, node.engine(), () -> execute(operation, session, retryableWrite, null));
        }
        return execute(operation, session, retryableWrite, null);
    }

    /**
     * A command of a multi-document transaction (see {@link Transactions}): refused on a secondary; a new transaction
     * number on the session ends the retryable-write history of the previous one; a commit applies the transaction's
     * documents as one write (one oplog entry on a replicating primary) and then waits for its write concern.
     */
    private BsonDocument inTransaction(OperationContext operation, SessionState session) {
        BsonDocument command = operation.command();
        Membership member = node.membership();
        if (member != null && !member.isWritablePrimary()) {
            return StorageEngine.error(10107, "NotWritablePrimary", "not primary");
        }
        operation.checkForInterrupt();
        long sessionNumber = session.txnNumber;
        if (command.getBoolean("startTransaction", BsonBoolean.FALSE).getValue()
                && command.containsKey("txnNumber")
                && command.getNumber("txnNumber").longValue() > session.txnNumber) {
            session.txnNumber = command.getNumber("txnNumber").longValue();
            session.statements.clear();
            session.statementTargets.clear();
            session.incompleteHistory = false;
        }
        BsonDocument refused = executor.beforeTransactionStatement(operation, strip(command));
        if (refused != null) {
            return refused;
        }
        return transactions.run(
                operation,
                session.id,
                sessionNumber,
                node.engine(),
                this::strip,
                writes -> commitWrites(operation, writes));
    }

    private BsonDocument commitWrites(OperationContext operation, List<Transactions.Write> writes) {
        Membership member = node.membership();
        if (member != null) {
            BsonDocument refused = member.beginWrite(operation);
            if (refused != null) {
                member.endWrite(operation);
                return refused;
            }
        }
        try {
            java.util.function.Supplier<BsonDocument> applyAll = () -> {
                for (Transactions.Write write : writes) {
                    OperationContext statement = operation.forStatement(write.database(), write.command());
                    statement.replicationState(operation.replicationState());
                    executor.execute(statement, write.command());
                }
                return null;
            };
            // A replicating primary's apply lock keeps the writes together (one oplog entry); a single node's engine
            // lock.
            BsonDocument refused =
                    member != null ? applyAll.get() : node.engine().atomically(applyAll);
            operation.connection().lastOp(OPTIMES.incrementAndGet());
            return refused;
        } finally {
            if (member != null) {
                member.endWrite(operation);
            }
        }
    }

    /** Runs the command once the session is checked out: stalls, then the node's own answer or the executor. */
    private BsonDocument execute(
            OperationContext operation, SessionState session, boolean retryableWrite, Membership member) {
        BsonDocument command = operation.command();
        stalls.stallIfAsked(operation);
        BsonDocument reply = BulkWriteCommand.isBulkWrite(command)
                ? BulkWriteCommand.run(
                        identity.version(),
                        operation.database(),
                        command,
                        (database, op) -> runInSession(operation.forStatement(database, op), session))
                : genericCommands.answerNodeCommand(operation, command);
        long applied;
        boolean closeAfterwards = false;
        if (reply == null && retryableWrite) {
            // Statement by statement, so a resend (or mongos' next round on this shard) skips what already ran.
            BsonDocument stripped = strip(command);
            TransactionalWriteGate gate =
                    onPrimaryTransactionalWrite.isOn() ? new TransactionalWriteGate(session) : null;
            long txnNumber = session.txnNumber;
            RetryableStatements statements = RetryableStatements.of(command);
            // mongos' writes may be carried by a chunk migration: each statement's target gets the document it wrote.
            WrittenDocuments written = operation.connection().isInternal() && command.isString(operation.commandName())
                    ? new WrittenDocuments(
                            node.engine(),
                            operation.database(),
                            command.getString(operation.commandName()).getValue())
                    : null;
            if (member != null || written != null) {
                statements.recordingTo((stmtId, outcome) -> {
                    if (written != null) {
                        written.recorded(session, stmtId, outcome);
                    }
                    if (member != null) {
                        member.statementRecorded(operation, session.id, session.lsid, txnNumber, stmtId, outcome);
                    }
                });
            }
            // The statements run so far, and how many the last engine call ran (an insert runs them in groups).
            int[] ran = {0, 0};
            RetryableStatements.Result result = statements.run(
                    session.statements,
                    single -> {
                        if (member != null) {
                            // The previous statement, its effects and its record, is one oplog entry.
                            member.flush(operation);
                        }
                        BsonDocument part = single.apply(stripped);
                        if (written != null) {
                            written.before(part);
                        }
                        interruptPoints.beforeStatement(
                                operation, EmulatedNode.namespace(operation.database(), command), ran[0], ran[1]);
                        ran[1] = statementCount(part);
                        ran[0] += ran[1];
                        return executor.execute(operation, part);
                    },
                    gate);
            reply = result.reply();
            applied = result.applied();
            closeAfterwards = gate != null && gate.closeConnection;
        } else if (reply == null && identity.kind() != NodeIdentity.Kind.MONGOS && isOrderedUpdateOrDelete(command)) {
            // The engine runs every statement of an update or delete command whatever "ordered" says; mongod stops an
            // ordered command at its first write error. Statement by statement, as for retryable writes, it stops.
            BsonDocument stripped = strip(command);
            int[] ran = {0};
            RetryableStatements.Result result = RetryableStatements.of(command)
                    .run(new java.util.HashMap<>(), single -> {
                        interruptPoints.beforeStatement(
                                operation, EmulatedNode.namespace(operation.database(), command), ran[0]++);
                        return executor.execute(operation, single.apply(stripped));
                    });
            reply = result.reply();
            applied = result.applied();
        } else {
            if (reply == null) {
                reply = executor.execute(operation, strip(command));
                if (identity.kind() != NodeIdentity.Kind.MONGOS) {
                    correctInsertCount(command, reply);
                }
            }
            applied = EmulatedNode.applied(operation.commandName(), reply);
        }
        if (operation.record() != null
                && reply.get("ok", new BsonInt32(0)).asNumber().doubleValue() == 1) {
            operation.record().executed(applied);
        }
        if (applied > 0) {
            operation.connection().lastOp(OPTIMES.incrementAndGet());
        }
        if (closeAfterwards) {
            throw new CloseConnectionSignal();
        }
        return reply;
    }

    /**
     * mongod's {@code onPrimaryTransactionalWrite} fail point, asked before each statement of a retryable write
     * that has not run yet: a {@code failBeforeCommitExceptionCode} fails that statement and stops the command
     * (the statements before it stay applied, so the driver's retry runs only the rest), and the connection is
     * closed after the command unless {@code closeConnection: false}.
     */
    private final class TransactionalWriteGate implements RetryableStatements.Gate {
        private final SessionState session;
        boolean closeConnection;

        TransactionalWriteGate(SessionState session) {
            this.session = session;
        }

        @Override
        public BsonDocument beforeStatement() {
            Optional<OnPrimaryTransactionalWrite.Action> action = onPrimaryTransactionalWrite.evaluate();
            if (action.isEmpty()) {
                return null;
            }
            closeConnection |= action.get().closeConnection();
            Integer code = action.get().failBeforeCommitExceptionCode();
            if (code == null) {
                return null;
            }
            return StorageEngine.error(
                    code,
                    codeName(code),
                    "Failing write for " + session.id + ":" + session.txnNumber
                            + " due to failpoint. The write must not be reflected.");
        }
    }

    private static boolean isOrderedUpdateOrDelete(BsonDocument command) {
        String name = command.getFirstKey();
        String field = name.equals("update") ? "updates" : name.equals("delete") ? "deletes" : null;
        return field != null
                && command.getBoolean("ordered", BsonBoolean.TRUE).getValue()
                && command.isArray(field)
                && command.getArray(field).size() > 1;
    }

    /**
     * The engine counts documents that failed with a write error in an insert's {@code n}; mongod counts only
     * the inserted ones (ordered: those before the first error).
     */
    private static void correctInsertCount(BsonDocument command, BsonDocument reply) {
        if (!command.getFirstKey().equals("insert")
                || !reply.containsKey("writeErrors")
                || !command.isArray("documents")) {
            return;
        }
        int documents = command.getArray("documents").size();
        BsonArray errors = reply.getArray("writeErrors");
        boolean ordered = command.getBoolean("ordered", BsonBoolean.TRUE).getValue();
        int n = ordered
                ? errors.stream()
                        .mapToInt(e -> e.asDocument().getNumber("index").intValue())
                        .min()
                        .orElse(documents)
                : documents - errors.size();
        reply.put("n", new BsonInt32(n));
    }

    /**
     * The reply's error labels ({@code getErrorLabels}, mongodb/mongo {@code src/mongo/db/error_labels.cpp}): a
     * fail point's {@code errorLabels} replace the server's own; otherwise from 4.4 {@code RetryableWriteError} for a
     * retryable code of a retryable write, never for an internal client (mongos), and from 6.0 not by mongos ("mongos
     * should not attach RetryableWriteError label to retryable errors thrown by the config server or targeted
     * shards"); from 6.0 mongod adds {@code NoWritesPerformed} with it when the connection had written before and this
     * command wrote nothing ({@code isErrorWithNoWritesPerformed}: last op time before == after, both set).
     */
    private BsonDocument labelled(OperationContext operation, BsonDocument reply, FailCommand.Action action) {
        BsonDocument command = operation.command();
        ServerVersion version = identity.version();
        boolean mongos = identity.kind() == NodeIdentity.Kind.MONGOS;
        if (action != null && action.hasErrorLabels()) {
            BsonArray labels = new BsonArray();
            action.errorLabels().forEach(label -> labels.add(new BsonString(label)));
            reply.put("errorLabels", labels);
        } else if (version.atLeast(ServerVersion.V4_4)
                && !operation.connection().isInternal()
                && !(mongos && version.atLeast(ServerVersion.V6_0))) {
            long before = operation.lastOpBeforeRun();
            boolean noWritesPerformed = !mongos
                    && version.atLeast(ServerVersion.V6_0)
                    && before != 0
                    && before == operation.connection().lastOp();
            ErrorLabels.addServerLabels(command, reply, version, noWritesPerformed);
        }
        if (action == null || !action.hasErrorLabels()) {
            ErrorLabels.addTransactionLabels(
                    command, reply, version, operation.connection().isInternal());
        }
        return reply;
    }

    BsonDocument strip(BsonDocument command) {
        BsonDocument stripped = new BsonDocument();
        for (Map.Entry<String, BsonValue> entry : command.entrySet()) {
            if (!STRIPPED.contains(entry.getKey())) {
                stripped.put(entry.getKey(), entry.getValue());
            }
        }
        return stripped;
    }

    private CommandRecord newRecord(
            long opid, ClientConnection connection, String database, BsonDocument command, long start) {
        String lsid = SessionCatalog.sessionId(command.get("lsid"));
        Long txnNumber = command.containsKey("txnNumber")
                ? command.getNumber("txnNumber").longValue()
                : null;
        // Without a txnNumber a command is a copy of its own, even when its session is reused for the next one.
        TxnId txnId = lsid != null && txnNumber != null ? new TxnId(lsid, txnNumber) : new TxnId("op:" + opid, null);
        Long maxTimeMs = command.containsKey("maxTimeMS")
                ? command.get("maxTimeMS").asNumber().longValue()
                : null;
        CommandRecord record = new CommandRecord(
                opid,
                name + "/" + node.address(),
                connection.id(),
                connection.appName(),
                database,
                command.getFirstKey(),
                EmulatedNode.namespace(database, command),
                txnId,
                command.get("comment"),
                maxTimeMs,
                statementCount(command),
                start,
                statements(command));
        records.add(record);
        return record;
    }

    /**
     * The write statements with the ids the session catalog gives them: {@code stmtIds[i]}, else {@code stmtId + i},
     * else {@code i} (as {@link BulkWriteCommand} and the write commands' retry checks number them).
     */
    private static List<WriteStatement> statements(BsonDocument command) {
        for (String field : List.of("documents", "updates", "deletes")) {
            if (command.containsKey(field) && command.get(field).isArray()) {
                BsonArray array = command.getArray(field);
                BsonArray stmtIds = command.isArray("stmtIds") ? command.getArray("stmtIds") : null;
                int base =
                        command.isNumber("stmtId") ? command.getNumber("stmtId").intValue() : 0;
                List<WriteStatement> statements = new ArrayList<>(array.size());
                for (int i = 0; i < array.size(); i++) {
                    int stmtId = stmtIds != null && i < stmtIds.size()
                            ? stmtIds.get(i).asNumber().intValue()
                            : base + i;
                    BsonValue body = array.get(i);
                    statements.add(new WriteStatement(
                            stmtId, body.isDocument() ? identity(body.asDocument()) : new BsonDocument()));
                }
                return statements;
            }
        }
        return List.of();
    }

    /**
     * What the truth keeps of a statement: its identity, never its contents, because the truth keeps every command
     * until it is reset, for the deployment's life if never (a document's values would make the emulator's memory grow with every write). An
     * inserted document's {@code _id}; a filter's {@code _id}; an update's operators with the names of the fields they
     * change (values as null); nothing of a replacement's fields.
     */
    private static BsonDocument identity(BsonDocument body) {
        BsonDocument identity = new BsonDocument();
        BsonValue id = body.get("_id");
        if (id != null) {
            identity.put("_id", id);
        }
        BsonValue filter = body.get("q");
        if (filter != null && filter.isDocument() && filter.asDocument().containsKey("_id")) {
            identity.put("q", new BsonDocument("_id", filter.asDocument().get("_id")));
        }
        BsonValue update = body.get("u");
        if (update != null && update.isDocument()) {
            BsonDocument operators = new BsonDocument();
            for (Map.Entry<String, BsonValue> operator : update.asDocument().entrySet()) {
                if (operator.getKey().startsWith("$") && operator.getValue().isDocument()) {
                    BsonDocument fields = new BsonDocument();
                    for (String field : operator.getValue().asDocument().keySet()) {
                        fields.put(field, BsonNull.VALUE);
                    }
                    operators.put(operator.getKey(), fields);
                }
            }
            if (!operators.isEmpty()) {
                identity.put("u", operators);
            }
        }
        return identity;
    }

    private static int statementCount(BsonDocument command) {
        for (String field : List.of("documents", "updates", "deletes")) {
            if (command.containsKey(field) && command.get(field).isArray()) {
                return command.getArray(field).size();
            }
        }
        return command.getFirstKey().equalsIgnoreCase("findAndModify") ? 1 : 0;
    }

    private static String codeName(int code) {
        return ErrorCodeNames.of(code);
    }
}
