package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.auth.Users;
import io.github.mongowriteguard.testkit.engine.StorageEngine;
import io.github.mongowriteguard.testkit.failpoint.FailCommand;
import io.github.mongowriteguard.testkit.failpoint.OnPrimaryTransactionalWrite;
import io.github.mongowriteguard.testkit.internal.Sleeps;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.mongowriteguard.testkit.truth.CommandRecord;
import io.github.mongowriteguard.testkit.truth.ServerTruth;
import io.github.mongowriteguard.testkit.wire.ClientConnection;
import io.github.mongowriteguard.testkit.wire.CommandHandler;
import io.github.mongowriteguard.testkit.wire.WireServer;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonValue;

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
    private final String name;
    private final NodeIdentity identity;
    volatile StorageEngine engine = new StorageEngine();
    final CommandExecutor executor;
    private final Introspection introspection = new Introspection();
    private final ChangeStreams changeStreams = new ChangeStreams();
    final ReentrantLock lock = new ReentrantLock();
    final Condition changed = lock.newCondition();
    final InterruptPoints interruptPoints = new InterruptPoints(lock, changed);
    final SessionCatalog sessionCatalog = new SessionCatalog(lock, changed);
    final Map<Long, OperationContext> active = new ConcurrentHashMap<>();
    final Collection<CommandRecord> records = ServerTruth.newStore();
    private final ServerTruth truth = new ServerTruth(records);
    private final FailCommand failCommand = new FailCommand();
    private final OnPrimaryTransactionalWrite onPrimaryTransactionalWrite = new OnPrimaryTransactionalWrite();
    final Stalls stalls = new Stalls(lock, changed);
    private final WireServer server;
    final ReplicationInfo replicationInfo;
    final AuthorizationSession authorizationSession;
    final SaslCommands saslCommands;
    final FailPointCommand failPointCommand;
    final CurrentOpCommand currentOpCommand;
    final KillCommands killCommands;
    final GenericCommands genericCommands;
    private final ServiceEntryPoint serviceEntryPoint;
    volatile Users users = new Users();
    volatile Membership membership;
    private volatile Membership.Reach cutOff = Membership.Reach.SERVING;
    final java.util.concurrent.atomic.AtomicReference<LostReplies> lostReplies =
            new java.util.concurrent.atomic.AtomicReference<>();
    final Transactions transactions;

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
        this(name, identity, port, io.github.mongowriteguard.testkit.server.Storage.MEMORY);
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
        this(name, identity, port, executor, io.github.mongowriteguard.testkit.server.Storage.MEMORY);
    }

    /**
     * Starts a node that runs its commands on its own storage: the in-memory engine, or with
     * {@link io.github.mongowriteguard.testkit.server.Storage#NONE} no storage at all (writes answered by count, see
     * {@link io.github.mongowriteguard.testkit.server.Storage}); everything in front of the storage is the same.
     *
     * @param name     a label for logs and truth
     * @param identity what it answers {@code hello} as
     * @param port     the loopback port, 0 for any free one
     * @param storage  where writes go
     */
    public EmulatedNode(
            String name, NodeIdentity identity, int port, io.github.mongowriteguard.testkit.server.Storage storage) {
        this(name, identity, port, null, java.util.Objects.requireNonNull(storage, "storage"));
    }

    private EmulatedNode(
            String name,
            NodeIdentity identity,
            int port,
            CommandExecutor executor,
            io.github.mongowriteguard.testkit.server.Storage storage) {
        this.name = name;
        this.identity = identity;
        CommandExecutor own = storage == io.github.mongowriteguard.testkit.server.Storage.NONE
                ? (operation, command) -> {
                    BsonDocument answered = NullStorage.answer(command);
                    return answered != null ? answered : engine.run(operation.database(), command);
                }
                : (operation, command) -> engine.run(operation.database(), command);
        this.executor = executor != null ? executor : own;
        this.engine.serverVersion(identity.version());
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
        this.serviceEntryPoint = new ServiceEntryPoint(this);
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

    /** {@return the users this node authenticates} */
    Users users() {
        return users;
    }

    /** {@return the node's replica-set role, or null when it has a fixed identity} */
    Membership membership() {
        return membership;
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
    Membership.Reach reach() {
        Membership.Reach own = cutOff;
        if (own != Membership.Reach.SERVING) {
            return own;
        }
        Membership member = membership;
        return member == null ? Membership.Reach.SERVING : member.reach();
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

    boolean loseReply(String commandName) {
        LostReplies lost = lostReplies.get();
        if (lost == null
                || ServiceEntryPoint.NOT_RECORDED.contains(commandName)
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
    CloseConnectionSignal unreachable(ClientConnection connection) {
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
        return stalls.add(stall);
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

    /** Runs one command through the node's dispatch ({@link ServiceEntryPoint}). */
    @Override
    public BsonDocument handle(ClientConnection connection, String database, BsonDocument command) {
        return serviceEntryPoint.handle(connection, database, command);
    }

    // ---- kill and currentOp -----------------------------------------------------------------------------

    /**
     * Kills every running operation of the given sessions, whoever owns them.
     *
     * @param sessionIds the sessions' ids; all sessions when empty
     * @return how many operations were killed
     */
    int killSessions(Set<String> sessionIds) {
        return killCommands.killSessions(sessionIds);
    }

    // ---- helpers ----------------------------------------------------------------------------------------

    static String namespace(String database, BsonDocument command) {
        BsonValue target = command.get(command.getFirstKey());
        if (target != null && target.isString() && !command.getFirstKey().equals("configureFailPoint")) {
            return database + "." + target.asString().getValue();
        }
        return database + ".$cmd";
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
        stalls.releaseAll();
        engine.close();
        introspection.close();
    }

    @Override
    public String toString() {
        return name + "@" + address() + " (" + identity.kind() + ", "
                + identity.version().versionString() + ")";
    }
}
