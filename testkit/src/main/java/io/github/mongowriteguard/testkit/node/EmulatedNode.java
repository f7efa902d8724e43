package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.ServerVersion;
import io.github.mongowriteguard.testkit.auth.Principal;
import io.github.mongowriteguard.testkit.auth.Users;
import io.github.mongowriteguard.testkit.engine.StorageEngine;
import io.github.mongowriteguard.testkit.failpoint.FailCommand;
import io.github.mongowriteguard.testkit.failpoint.OnPrimaryTransactionalWrite;
import io.github.mongowriteguard.testkit.internal.Sleeps;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.mongowriteguard.testkit.stall.StallMode;
import io.github.mongowriteguard.testkit.truth.CommandRecord;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import io.github.mongowriteguard.testkit.truth.ServerTruth;
import io.github.mongowriteguard.testkit.truth.TxnId;
import io.github.mongowriteguard.testkit.wire.ClientConnection;
import io.github.mongowriteguard.testkit.wire.CommandHandler;
import io.github.mongowriteguard.testkit.wire.WireServer;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One emulated server process (a replica-set primary or secondary, or a mongos) on its own loopback port.
 *
 * <p>Every command goes through the steps of mongod's {@code service_entry_point_common.cpp} that matter for
 * writes, in its order: the {@code failCommand} fail point (close, block, error) acts first, before the
 * session check-out; then the deadline from {@code maxTimeMS}; then the session is checked out (a second
 * command on the same session waits for the first, as a driver resend does); statements of a retryable write
 * that already ran under the session's {@code txnNumber} (identified by {@code stmtIds}, else by position) are
 * not run again but report their recorded result, so mongos may send several child batches of one client
 * command to the same shard; a lower {@code txnNumber} is rejected ({@code TransactionTooOld}); stalls
 * hold the command; then the engine runs it. A client that stops waiting does not stop the command.
 */
public final class EmulatedNode implements CommandHandler, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(EmulatedNode.class);
    private static final AtomicLong OPIDS = new AtomicLong(1000);
    /** The emulator's op times (one clock for all nodes): a write that applied takes the next one. */
    private static final AtomicLong OPTIMES = new AtomicLong();

    private static final Set<String> NOT_RECORDED = Set.of("hello", "ismaster", "isMaster");
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

    private final String name;
    private final NodeIdentity identity;
    private volatile StorageEngine engine = new StorageEngine();
    private final CommandExecutor executor;
    private final Introspection introspection = new Introspection();
    private final ChangeStreams changeStreams = new ChangeStreams();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final InterruptPoints interruptPoints = new InterruptPoints(lock, changed);
    private final SessionCatalog sessionCatalog = new SessionCatalog(lock, changed);
    private final Map<Long, OperationContext> active = new ConcurrentHashMap<>();
    private final Collection<CommandRecord> records = ServerTruth.newStore();
    private final ServerTruth truth = new ServerTruth(records);
    private final FailCommand failCommand = new FailCommand();
    private final OnPrimaryTransactionalWrite onPrimaryTransactionalWrite = new OnPrimaryTransactionalWrite();
    private final List<ActiveStall> stalls = new CopyOnWriteArrayList<>();
    private final WireServer server;
    private final ReplicationInfo replicationInfo;
    private final AuthorizationSession authorizationSession;
    private final SaslCommands saslCommands;
    private final FailPointCommand failPointCommand;
    private final CurrentOpCommand currentOpCommand;
    private final KillCommands killCommands;
    private final GenericCommands genericCommands;
    private volatile Users users = new Users();
    private volatile Membership membership;
    private volatile Membership.Reach cutOff = Membership.Reach.SERVING;
    private final java.util.concurrent.atomic.AtomicReference<LostReplies> lostReplies =
            new java.util.concurrent.atomic.AtomicReference<>();
    private final Transactions transactions;

    /** Replies to lose: the next {@code left} replies to one of {@code commands} (empty: any command). */
    private record LostReplies(Set<String> commands, java.util.concurrent.atomic.AtomicInteger left) {}

    /**
     * Starts a node with the storage engine as its executor.
     *
     * @param name     a label for logs and truth, e.g. {@code "rs0"}
     * @param port     the loopback port, 0 for any free one
     * @param identity what it answers {@code hello} as
     */
    public EmulatedNode(String name, NodeIdentity identity, int port) {
        this(name, identity, port, io.github.mongowriteguard.testkit.Storage.MEMORY);
    }

    /**
     * Starts a node whose commands run in {@code executor} (null: the node's own storage engine).
     *
     * @param name     a label for logs and truth
     * @param identity what it answers {@code hello} as
     * @param port     the loopback port, 0 for any free one
     * @param executor where its commands run, or null
     */
    public EmulatedNode(String name, NodeIdentity identity, int port, CommandExecutor executor) {
        this(name, identity, port, executor, io.github.mongowriteguard.testkit.Storage.MEMORY);
    }

    /**
     * Starts a node that runs its commands on its own storage: the in-memory engine, or with
     * {@link io.github.mongowriteguard.testkit.Storage#NONE} no storage at all (writes answered by count, see
     * {@link io.github.mongowriteguard.testkit.Storage}); everything in front of the storage is the same.
     *
     * @param name     a label for logs and truth
     * @param identity what it answers {@code hello} as
     * @param port     the loopback port, 0 for any free one
     * @param storage  where writes go
     */
    public EmulatedNode(
            String name, NodeIdentity identity, int port, io.github.mongowriteguard.testkit.Storage storage) {
        this(name, identity, port, null, java.util.Objects.requireNonNull(storage, "storage"));
    }

    private EmulatedNode(
            String name,
            NodeIdentity identity,
            int port,
            CommandExecutor executor,
            io.github.mongowriteguard.testkit.Storage storage) {
        this.name = name;
        this.identity = identity;
        CommandExecutor own = storage == io.github.mongowriteguard.testkit.Storage.NONE
                ? (operation, command) -> {
                    BsonDocument answered = NullStorage.answer(command);
                    return answered != null ? answered : engine.run(operation.database(), command);
                }
                : (operation, command) -> engine.run(operation.database(), command);
        this.executor = executor != null ? executor : own;
        this.transactions = new Transactions(identity.version(), lock, changed);
        this.replicationInfo = new ReplicationInfo(this, identity);
        this.authorizationSession = new AuthorizationSession(this, identity);
        this.saslCommands = new SaslCommands(this);
        this.failPointCommand = new FailPointCommand(this, failCommand, onPrimaryTransactionalWrite);
        this.currentOpCommand = new CurrentOpCommand(this, active, this.executor, introspection);
        this.killCommands = new KillCommands(this, active, sessionCatalog, transactions, this.executor);
        this.genericCommands = new GenericCommands(
                this,
                identity,
                transactions,
                currentOpCommand,
                killCommands,
                this.executor,
                introspection,
                sessionCatalog,
                changeStreams);
        // The node's parts exist before its port opens: a client may connect at once (a restarted member's monitor).
        this.server = new WireServer(name, port, this);
        replicationInfo.hosts(List.of(server.address()));
    }

    /**
     * {@code 127.0.0.1:port}.
     *
     * @return the address
     */
    public String address() {
        return server.address();
    }

    /**
     * The wire messages this node received so far and their bytes, headers included (handshakes and heartbeats too):
     * what a benchmark compares between two clients sending the same writes.
     *
     * @return {@code {messages, bytes}}
     */
    public long[] received() {
        return new long[] {server.messagesReceived(), server.bytesReceived()};
    }

    /** {@return the node's label, e.g. {@code shard00-1}} */
    public String name() {
        return name;
    }

    /** {@return who the node says it is in {@code hello}} */
    public NodeIdentity identity() {
        return identity;
    }

    /**
     * The members a replica-set member announces in {@code hello} (itself by default).
     *
     * @param members the members' addresses
     */
    public void hosts(List<String> members) {
        replicationInfo.hosts(members);
    }

    /**
     * The replica-set member tags announced in {@code hello} (e.g. {@code {node: "a1"}}), as a reconfig sets them.
     *
     * @param memberTags the tags
     */
    public void tags(Map<String, String> memberTags) {
        replicationInfo.tags(memberTags);
    }

    /** {@return the replica-set member tags announced in {@code hello}} */
    public Map<String, String> tags() {
        return replicationInfo.tags();
    }

    /**
     * The address a secondary names as its primary in {@code hello}.
     *
     * @param address the primary's address
     */
    public void primaryAddress(String address) {
        replicationInfo.primaryAddress(address);
    }

    /**
     * The users this node authenticates (SCRAM-SHA-256); authorization is on once one exists. Shards of an emulated
     * cluster keep none: they trust mongos, which authenticates clients.
     *
     * @param nodeUsers the users; none for a shard
     */
    public void users(Users nodeUsers) {
        this.users = java.util.Objects.requireNonNull(nodeUsers, "users");
    }

    /** {@return the users this node authenticates} */
    public Users users() {
        return users;
    }

    /**
     * Commands this node received, grouped into copies by (lsid, txnNumber).
     *
     * @return the node's truth
     */
    public ServerTruth truth() {
        return truth;
    }

    /**
     * The node's {@code failCommand} fail point (also settable with {@code configureFailPoint}).
     *
     * @return the fail point
     */
    public FailCommand failCommand() {
        return failCommand;
    }

    /**
     * The node's {@code onPrimaryTransactionalWrite} fail point (also settable with {@code configureFailPoint}).
     *
     * @return the fail point
     */
    public OnPrimaryTransactionalWrite onPrimaryTransactionalWrite() {
        return onPrimaryTransactionalWrite;
    }

    /**
     * The storage engine, for commands that must bypass the emulated server (seeding data in tests). In a replicating
     * set (several members) what is written here bypasses the oplog: it is neither replicated nor kept by a restart.
     *
     * @return the engine
     */
    public StorageEngine engine() {
        return engine;
    }

    /**
     * mongod's {@code transactionLifetimeLimitSeconds} (60 by default): a transaction open longer is aborted, its
     * writes discarded; also set by {@code setParameter: 1, transactionLifetimeLimitSeconds: n} on {@code admin}.
     *
     * @param seconds the limit, at least 1
     */
    public void transactionLifetimeLimitSeconds(long seconds) {
        transactions.lifetimeLimitSeconds(seconds);
    }

    /** {@return the multi-document transactions open on this node now} */
    public int openTransactions() {
        return transactions.open();
    }

    /**
     * Whether the transaction {@code txnNumber} of session {@code lsid} is open here (neither committed nor aborted):
     * the emulated mongos' stand-in for a participant's vote in the prepare phase of two-phase commit.
     *
     * @param lsid      the session's {@code lsid} document
     * @param txnNumber the transaction number
     * @return whether it is in progress
     */
    public boolean transactionInProgress(BsonDocument lsid, long txnNumber) {
        String id = SessionCatalog.sessionId(lsid);
        return id != null && transactions.inProgress(id, txnNumber);
    }

    // ---- the replication layer's hooks ------------------------------------------------------------------

    /**
     * Makes this node a member of a replicating set; its role then comes from {@code member}, not its identity.
     *
     * @param member the node's role in the set
     */
    public void membership(Membership member) {
        this.membership = member;
    }

    /**
     * The node's replica-set role, or null when it has a fixed identity.
     *
     * @return the role, or null
     */
    public Membership membership() {
        return membership;
    }

    /**
     * Cuts the node off from its clients, or ends that ({@link Membership.Reach#SERVING}): with
     * {@link Membership.Reach#CLOSED} every request gets its connection closed (a command running then loses its
     * reply), with {@link Membership.Reach#BLACKHOLED} requests are never answered until it ends. For a node outside a
     * replicating set, e.g. a mongos partitioned from the application (its own calls to the shards go on).
     *
     * @param reach how clients reach the node from now on
     */
    public void cutOff(Membership.Reach reach) {
        this.cutOff = java.util.Objects.requireNonNull(reach, "reach");
    }

    /** How the network treats the node now: its own cut-off, else its replica-set member's reach. */
    private Membership.Reach reach() {
        Membership.Reach own = cutOff;
        if (own != Membership.Reach.SERVING) {
            return own;
        }
        Membership member = membership;
        return member == null ? Membership.Reach.SERVING : member.reach();
    }

    /**
     * Replaces the node's data (the replication layer rebuilds it from the oplog after a rollback or a restart).
     *
     * @param rebuilt the rebuilt engine
     */
    public void replaceEngine(StorageEngine rebuilt) {
        this.engine = java.util.Objects.requireNonNull(rebuilt, "rebuilt");
    }

    /**
     * Kills the running operations {@code which} selects: each ends at its next interrupt point with the error of
     * {@code reason} (an uninterruptible one runs to its end).
     *
     * @return how many were killed
     * @param reason why they are killed, which decides their error
     * @param which  selects the operations to kill
     */
    public int killOperations(
            OperationInterruptedException.KillReason reason, java.util.function.Predicate<OperationContext> which) {
        int killed = 0;
        for (OperationContext operation : active.values()) {
            if (which.test(operation)) {
                operation.kill(reason);
                killed++;
            }
        }
        return killed;
    }

    /**
     * What a restarted mongod no longer has in memory: its sessions (the retryable-write records come back from the
     * oplog through {@link #applyRetryRecord}), its fail points, its running operations (killed at shutdown).
     */
    public void restarted() {
        killOperations(OperationInterruptedException.KillReason.SHUTDOWN, operation -> true);
        sessionCatalog.clear();
        failCommand.off();
        onPrimaryTransactionalWrite.off();
        lostReplies.set(null);
    }

    /** Forgets every retryable-write record (before they are rebuilt from the oplog); sessions stay known. */
    public void clearRetryRecords() {
        sessionCatalog.clearRetryRecords();
    }

    /**
     * Applies a retryable-write record from the oplog ({@link SessionCatalog#applyRetryRecord}).
     *
     * @param sessionId the session's id, as this node keys its sessions
     * @param lsid      the session's {@code lsid}
     * @param txnNumber the write's transaction number
     * @param stmtId    the statement's id
     * @param outcome   the statement's result, as a retry gets it
     */
    public void applyRetryRecord(
            String sessionId, BsonDocument lsid, long txnNumber, int stmtId, BsonDocument outcome) {
        sessionCatalog.applyRetryRecord(sessionId, lsid, txnNumber, stmtId, outcome);
    }

    /**
     * The next {@code times} replies to any of {@code commandNames} (none named: any command but the handshake) are
     * lost: the command runs to its end (its writes are applied), then the connection is closed instead of answering,
     * as when the network fails just after the server replied. Works for every command, multi-document writes included;
     * the emulator's own network fault, no server fail point does it.
     *
     * @param times        how many replies to lose; 0 loses none
     * @param commandNames the commands whose replies are lost; none for any command but the handshake
     * @throws IllegalArgumentException when {@code times} is negative
     */
    public void loseReplies(int times, String... commandNames) {
        if (times < 0) {
            throw new IllegalArgumentException("times (" + times + ") must not be negative");
        }
        lostReplies.set(
                times == 0
                        ? null
                        : new LostReplies(Set.of(commandNames), new java.util.concurrent.atomic.AtomicInteger(times)));
    }

    /** Stops losing replies. */
    public void stopLosingReplies() {
        lostReplies.set(null);
    }

    private boolean loseReply(String commandName) {
        LostReplies lost = lostReplies.get();
        if (lost == null
                || NOT_RECORDED.contains(commandName)
                || (!lost.commands().isEmpty() && !lost.commands().contains(commandName))) {
            return false;
        }
        int left = lost.left().getAndDecrement();
        if (left <= 1) {
            lostReplies.compareAndSet(lost, null);
        }
        return left >= 1;
    }

    /** A request to a node that cannot be reached: no answer, the connection closed (at once, or once a black hole heals). */
    private CloseConnectionSignal unreachable(ClientConnection connection) {
        while (reach() == Membership.Reach.BLACKHOLED) {
            Sleeps.until(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(10));
            if (Thread.currentThread().isInterrupted()) {
                break;
            }
        }
        connection.close();
        return new CloseConnectionSignal();
    }

    /**
     * Installs a stall; it applies to commands that reach the stall step from now on, and ends when the
     * returned handle is released or closed.
     *
     * @param stall the stall
     * @return the handle that ends it
     */
    public StallHandle stall(Stall stall) {
        ActiveStall active = new ActiveStall(stall);
        stalls.add(active);
        return active;
    }

    /**
     * Holds every write command on {@code namespace} after its first {@code statements} statements ran (they are
     * committed), at the interrupt point before the next one, until released or {@code duration} passed; a kill, a
     * stepdown or the deadline ends it there and fails the command with those statements applied
     * ({@code write_ops_exec.cpp}). Only commands the node runs statement by statement (retryable writes, ordered
     * updates and deletes) have these points.
     *
     * @param namespace  {@code db.collection}, or {@code "*"}
     * @param statements how many statements run first, 1 or more
     * @param duration   the longest hold
     * @return the handle that ends it
     */
    public StallHandle pauseAfterStatements(String namespace, int statements, java.time.Duration duration) {
        return interruptPoints.pauseAfter(namespace, statements, duration);
    }

    /**
     * How many times each command arrived, as {@code serverStatus().metrics.commands.<name>.total}.
     *
     * @param commandName the command's name
     * @return how many times it arrived
     */
    public long commandCount(String commandName) {
        return genericCommands.commandCount(commandName);
    }

    // ------------------------------------------------------------------------------------------------------

    @Override
    public BsonDocument handle(ClientConnection connection, String database, BsonDocument command) {
        String commandName = command.getFirstKey();
        Membership member = membership;
        long incarnation = member == null ? 0 : member.incarnation();
        if (reach() != Membership.Reach.SERVING) {
            throw unreachable(connection);
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
            if (reach() != Membership.Reach.SERVING || (member != null && member.incarnation() != incarnation)) {
                // Partitioned or restarted while the command ran: its answer never reaches the client.
                closedAfterRun(record);
                throw unreachable(connection);
            }
            if (loseReply(commandName)) {
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
        BsonDocument refused = authorizationSession.authorize(operation);
        if (refused != null) {
            return refused;
        }
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
        if (identity.kind() != NodeIdentity.Kind.MONGOS) {
            deadline.arm(operation);
        }
        Membership member = membership;
        if (member != null && !member.isWritablePrimary()) {
            BsonDocument notPrimary = notPrimary(operation);
            if (notPrimary != null) {
                return labelled(operation, notPrimary, null);
            }
        }
        if (!identity.version().atLeast(io.github.mongowriteguard.testkit.ServerVersion.V4_4)
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
        boolean modern = identity.version().atLeast(io.github.mongowriteguard.testkit.ServerVersion.V5_0);
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
                        new BsonDocument("ns", new BsonString(namespace(operation.database(), command)))
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
        Membership member = membership;
        if (member != null && Membership.WRITE_COMMANDS.contains(operation.commandName())) {
            BsonDocument refused = member.beginWrite(operation);
            if (refused != null) {
                member.endWrite(operation);
                return refused;
            }
            try {
                return transactions.outside(
                        operation, engine, () -> execute(operation, session, retryableWrite, member));
            } finally {
                member.endWrite(operation);
            }
        }
        if (identity.kind() != NodeIdentity.Kind.MONGOS) {
            return transactions.outside(operation, engine, () -> execute(operation, session, retryableWrite, null));
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
        Membership member = membership;
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
        return transactions.run(
                operation, session.id, sessionNumber, engine, this::strip, writes -> commitWrites(operation, writes));
    }

    private BsonDocument commitWrites(OperationContext operation, List<Transactions.Write> writes) {
        Membership member = membership;
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
            BsonDocument refused = member != null ? applyAll.get() : engine.atomically(applyAll);
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
        stallIfAsked(operation);
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
            if (member != null) {
                statements.recordingTo((stmtId, outcome) ->
                        member.statementRecorded(operation, session.id, session.lsid, txnNumber, stmtId, outcome));
            }
            int[] ran = {0};
            RetryableStatements.Result result = statements.run(
                    session.statements,
                    single -> {
                        if (member != null) {
                            // The previous statement, its effects and its record, is one oplog entry.
                            member.flush(operation);
                        }
                        interruptPoints.beforeStatement(operation, namespace(operation.database(), command), ran[0]++);
                        return executor.execute(operation, single.apply(stripped));
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
                        interruptPoints.beforeStatement(operation, namespace(operation.database(), command), ran[0]++);
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
            applied = applied(operation.commandName(), reply);
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

    // ---- sessions ---------------------------------------------------------------------------------------

    // ---- retry history across chunk migrations ----------------------------------------------------------

    /**
     * One session's retry history of one transaction number as a chunk migration carries it: the executed statements
     * (by stmtId, their recorded results) that wrote documents of the migrated chunk, or none with {@code incomplete}
     * when the donor could not send it whole (mongodb/mongo {@code src/mongo/db/s/session_catalog_migration_source.cpp},
     * {@code session_catalog_migration_destination.cpp}: the dead-end sentinel).
     */
    public record RetryHistory(
            String sessionId,
            BsonDocument lsid,
            long txnNumber,
            Map<Integer, BsonDocument> statements,
            boolean incomplete) {}

    /**
     * The retry history a migration copies from this donor ({@link SessionCatalog#retryHistory}).
     *
     * @param inChunk accepts the statement targets that lie in the migrated chunk
     * @return one entry per session with statements to copy
     */
    public List<RetryHistory> retryHistory(java.util.function.Predicate<BsonDocument> inChunk) {
        return sessionCatalog.retryHistory(inChunk);
    }

    /**
     * The recipient's side of a migration's retry history ({@link SessionCatalog#receiveRetryHistory}).
     *
     * @param history the retry history the donor sent
     */
    public void receiveRetryHistory(List<RetryHistory> history) {
        sessionCatalog.receiveRetryHistory(history);
    }

    // ---- stalls -----------------------------------------------------------------------------------------

    private final class ActiveStall implements StallHandle {
        private final Stall stall;
        private volatile boolean released;

        ActiveStall(Stall stall) {
            this.stall = stall;
        }

        @Override
        public Stall stall() {
            return stall;
        }

        @Override
        public void release() {
            stalls.remove(this);
            lock.lock();
            try {
                released = true;
                changed.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    private void stallIfAsked(OperationContext operation) {
        String namespace = namespace(operation.database(), operation.command());
        for (ActiveStall stall : stalls) {
            if (!stall.stall.matches(namespace, operation.commandName())) {
                continue;
            }
            long until = System.nanoTime() + stall.stall.duration().toNanos();
            lock.lock();
            try {
                if (stall.stall.mode() == StallMode.INTERRUPTIBLE) {
                    operation.awaitInterruptibly(() -> stall.released, until);
                } else {
                    operation.awaitUninterruptibly(() -> stall.released, until);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw OperationInterruptedException.killed();
            } finally {
                lock.unlock();
            }
        }
    }

    // ---- kill and currentOp -----------------------------------------------------------------------------

    /**
     * Kills every running operation of the given sessions, whoever owns them.
     *
     * @param sessionIds the sessions' ids; all sessions when empty
     * @return how many operations were killed
     */
    public int killSessions(Set<String> sessionIds) {
        return killCommands.killSessions(sessionIds);
    }

    /**
     * Kills every running operation whose session matches one of {@code patterns} ({@link KillCommands}).
     *
     * @param patterns the session patterns
     * @return how many operations were killed
     */
    public int killSessions(List<SessionMatch> patterns) {
        return killCommands.killSessions(patterns);
    }

    /**
     * The running operations as {@code currentOp} documents ({@link CurrentOpCommand#currentOps(boolean, Principal)}).
     *
     * @param truncate  {@code truncateOps}
     * @param ownOpsOf  only the operations of this user, or null for all
     * @return one {@code currentOp} document per selected running operation
     */
    public List<BsonDocument> currentOps(boolean truncate, Principal ownOpsOf) {
        return currentOpCommand.currentOps(truncate, ownOpsOf);
    }

    // ---- commands the node answers itself -------------------------------------------------------------

    BsonDocument strip(BsonDocument command) {
        BsonDocument stripped = new BsonDocument();
        for (Map.Entry<String, BsonValue> entry : command.entrySet()) {
            if (!STRIPPED.contains(entry.getKey())) {
                stripped.put(entry.getKey(), entry.getValue());
            }
        }
        return stripped;
    }

    // ---- helpers ----------------------------------------------------------------------------------------

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
                name + "/" + address(),
                connection.id(),
                connection.appName(),
                database,
                command.getFirstKey(),
                namespace(database, command),
                txnId,
                command.get("comment"),
                maxTimeMs,
                statementCount(command),
                start);
        records.add(record);
        return record;
    }

    static String namespace(String database, BsonDocument command) {
        BsonValue target = command.get(command.getFirstKey());
        if (target != null && target.isString() && !command.getFirstKey().equals("configureFailPoint")) {
            return database + "." + target.asString().getValue();
        }
        return database + ".$cmd";
    }

    private static int statementCount(BsonDocument command) {
        for (String field : List.of("documents", "updates", "deletes")) {
            if (command.containsKey(field) && command.get(field).isArray()) {
                return command.getArray(field).size();
            }
        }
        return command.getFirstKey().equalsIgnoreCase("findAndModify") ? 1 : 0;
    }

    static long applied(String commandName, BsonDocument reply) {
        switch (commandName) {
            case "insert":
            case "delete":
                return reply.get("n", new BsonInt32(0)).asNumber().longValue();
            case "update":
                return reply.get("nModified", new BsonInt32(0)).asNumber().longValue()
                        + (reply.containsKey("upserted")
                                ? reply.getArray("upserted").size()
                                : 0);
            case "bulkWrite":
                return reply.get("nInserted", new BsonInt32(0)).asNumber().longValue()
                        + reply.get("nModified", new BsonInt32(0)).asNumber().longValue()
                        + reply.get("nUpserted", new BsonInt32(0)).asNumber().longValue()
                        + reply.get("nDeleted", new BsonInt32(0)).asNumber().longValue();
            case "findAndModify":
            case "findandmodify":
                BsonDocument lastError = reply.getDocument("lastErrorObject", new BsonDocument());
                return lastError.get("n", new BsonInt32(0)).asNumber().longValue();
            default:
                return 0;
        }
    }

    private static String codeName(int code) {
        return ErrorCodeNames.of(code);
    }

    static BsonDocument ok() {
        return new BsonDocument("ok", new BsonDouble(1));
    }

    /**
     * Waits until every operation on this node has ended (for orderly shutdown in tests).
     *
     * @param timeout the longest wait
     * @return whether every operation ended in time
     * @throws InterruptedException when interrupted while waiting
     */
    public boolean awaitNoOperations(Duration timeout) throws InterruptedException {
        long until = System.nanoTime() + timeout.toNanos();
        while (!active.isEmpty()) {
            if (System.nanoTime() - until > 0) {
                return false;
            }
            Thread.sleep(5);
        }
        return true;
    }

    @Override
    public void close() {
        server.close();
        for (ActiveStall stall : stalls) {
            stall.release();
        }
        engine.close();
        introspection.close();
    }

    @Override
    public String toString() {
        return name + "@" + address() + " (" + identity.kind() + ", "
                + identity.version().versionString() + ")";
    }
}
