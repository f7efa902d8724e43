package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.truth.CommandRecord;
import io.github.mongowriteguard.testkit.wire.ClientConnection;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.bson.BsonDocument;

/**
 * One running command, as mongod's OperationContext: its deadline (from {@code maxTimeMS}), its kill flag,
 * and the interrupt points where both are checked. Waiting at an interrupt point (session check-out, an
 * interruptible stall) ends with {@code MaxTimeMSExpired} when the deadline passes and {@code Interrupted}
 * when the operation is killed.
 */
public final class OperationContext {
    private final long opid;
    private final ClientConnection connection;
    private final String database;
    private final BsonDocument command;
    private final BsonDocument description;
    private final long startNanos;
    private final long maxTimeMs;
    private volatile long deadlineNanos;
    private final ReentrantLock lock;
    private final Condition changed;
    private final CommandRecord record;
    /** The command this one is a statement of (a {@code bulkWrite}'s op), or null. */
    private final OperationContext parent;

    private volatile boolean killed;
    private volatile long lastOpBeforeRun;
    private volatile OperationInterruptedException.KillReason killReason =
            OperationInterruptedException.KillReason.KILLED;
    private volatile Object replicationState;
    private volatile long executionStartNanos;
    private volatile boolean executing;

    OperationContext(
            long opid,
            ClientConnection connection,
            String database,
            BsonDocument command,
            long startNanos,
            long maxTimeMs,
            ReentrantLock lock,
            Condition changed,
            CommandRecord record) {
        this.opid = opid;
        this.connection = connection;
        this.database = database;
        this.command = command;
        this.description = description(command, connection.documentSequences());
        this.startNanos = startNanos;
        this.maxTimeMs = maxTimeMs;
        this.deadlineNanos = maxTimeMs > 0 ? startNanos + TimeUnit.MILLISECONDS.toNanos(maxTimeMs) : Long.MAX_VALUE;
        this.lock = lock;
        this.changed = changed;
        this.record = record;
        this.parent = null;
    }

    private OperationContext(OperationContext parent, String database, BsonDocument command) {
        this.opid = parent.opid;
        this.connection = parent.connection;
        this.database = database;
        this.command = command;
        this.description = command;
        this.startNanos = parent.startNanos;
        this.maxTimeMs = parent.maxTimeMs;
        this.deadlineNanos = parent.deadlineNanos;
        this.lock = parent.lock;
        this.changed = parent.changed;
        this.record = null;
        this.parent = parent;
        this.executing = true;
        this.executionStartNanos = parent.executionStartNanos;
    }

    /**
     * One op of a {@code bulkWrite} run as its own single-statement command: the same opid, connection, deadline
     * and kill flag as the whole command, no record of its own.
     */
    OperationContext forStatement(String statementDatabase, BsonDocument statementCommand) {
        return new OperationContext(this, statementDatabase, statementCommand);
    }

    /** {@return the operation id {@code currentOp} and {@code killOp} use} */
    public long opid() {
        return opid;
    }

    /** {@return the client connection the command came on} */
    public ClientConnection connection() {
        return connection;
    }

    /** {@return the command's database ({@code $db})} */
    public String database() {
        return database;
    }

    /** {@return the command as received} */
    public BsonDocument command() {
        return command;
    }

    /**
     * The command as {@code currentOp} shows it: the OP_MSG body without the fields that came as document
     * sequences (mongod's {@code setGenericOpRequestDetails(..., request.body, ...)}; an {@code OpMsgRequest} keeps
     * its sequences apart from its body).
     */
    BsonDocument description() {
        return description;
    }

    private static BsonDocument description(BsonDocument command, java.util.Set<String> sequences) {
        if (sequences.isEmpty()) {
            return command;
        }
        BsonDocument body = new BsonDocument();
        command.forEach((key, value) -> {
            if (!sequences.contains(key)) {
                body.put(key, value);
            }
        });
        return body;
    }

    /** {@return the command's name, its first field} */
    public String commandName() {
        return command.getFirstKey();
    }

    /** {@return {@link System#nanoTime()} when the command started} */
    public long startNanos() {
        return startNanos;
    }

    /**
     * Holds the {@code maxTimeMS} clock until {@link #startDeadlineNow()}, as mongod sets the operation's deadline only after the
     * {@code failCommand} fail point (and its {@code blockConnection} wait) in {@code execCommandDatabase}
     * ({@code opCtx->setDeadlineAfterNowBy} in {@code src/mongo/db/service_entry_point_common.cpp}).
     */
    void deferDeadline() {
        deadlineNanos = Long.MAX_VALUE;
    }

    /** See {@link #deferDeadline()}: the deadline is {@code maxTimeMS} from now. */
    void startDeadlineNow() {
        if (maxTimeMs > 0) {
            deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxTimeMs);
        }
    }

    /** See {@link #deferDeadline()}: the deadline is {@code maxTimeMS} from {@code startNanos} ({@link System#nanoTime()}). */
    void startDeadlineFrom(long startNanos) {
        if (maxTimeMs > 0) {
            deadlineNanos = startNanos + TimeUnit.MILLISECONDS.toNanos(maxTimeMs);
        }
    }

    /**
     * Nanoseconds left before the {@code maxTimeMS} deadline, {@link Long#MAX_VALUE} without one.
     *
     * @return the nanoseconds left, 0 once the deadline passed
     */
    public long remainingNanos() {
        long deadline = deadlineNanos;
        return deadline == Long.MAX_VALUE ? Long.MAX_VALUE : Math.max(0, deadline - System.nanoTime());
    }

    /**
     * The command passed its fail point and dispatch checks: from now on {@code currentOp} shows
     * {@code secs_running}, also while it still waits at the session check-out. mongod's
     * {@code CurOp::ensureStarted()} runs at the end of the dispatch checks, before the session is checked out
     * ({@code src/mongo/db/service_entry_point_common.cpp}: 4.4 {@code execCommandDatabase} before
     * {@code runCommandImpl} / {@code invokeWithSessionCheckedOut}; 5.0+ {@code ExecCommandDatabase::_initiateCommand}
     * before {@code _commandExec} / {@code CheckoutSessionAndInvokeCommand::_checkOutSession}, in
     * {@code service_entry_point_shard_role.cpp} on 8.0+); the write path's own
     * call ({@code write_ops_exec.cpp} {@code performInserts}) then finds the clock started and changes nothing, and
     * {@code curop.cpp} {@code reportState} reports {@code secs_running} once the clock started. The
     * {@code failCommand} fail point is evaluated earlier in the same function, so a block holds the command before
     * its clock starts.
     */
    void startExecution() {
        if (!executing) {
            executionStartNanos = System.nanoTime();
            executing = true;
        }
    }

    /** Whether the command's clock started (it passed its fail point and dispatch checks; see {@link #startExecution()}). */
    boolean isExecuting() {
        return executing;
    }

    /** {@link System#nanoTime()} when the command's clock started; meaningful once {@link #isExecuting()}. */
    long executionStartNanos() {
        return executionStartNanos;
    }

    /** The connection's last op time when the command arrived (0: it never wrote), for NoWritesPerformed. */
    void lastOpBeforeRun(long opTime) {
        this.lastOpBeforeRun = opTime;
    }

    long lastOpBeforeRun() {
        return lastOpBeforeRun;
    }

    /**
     * Whether the operation was killed ({@code killOp}, {@code killSessions}, a stepdown or shutdown).
     *
     * @return true once killed
     */
    public boolean killed() {
        return isKilled();
    }

    /**
     * The error the operation ends with at its next interrupt point, once killed.
     *
     * @return the error
     */
    public OperationInterruptedException killError() {
        if (!killed && parent != null) {
            return parent.killError();
        }
        return OperationInterruptedException.of(killReason);
    }

    /**
     * The replication layer's state of this operation (its term, pending oplog entries); null elsewhere.
     *
     * @return the state, or null
     */
    public Object replicationState() {
        return replicationState;
    }

    /**
     * Sets the replication layer's state of this operation.
     *
     * @param state the state
     */
    public void replicationState(Object state) {
        this.replicationState = state;
    }

    CommandRecord record() {
        return record;
    }

    boolean isKilled() {
        return killed || (parent != null && parent.isKilled());
    }

    void kill() {
        kill(OperationInterruptedException.KillReason.KILLED);
    }

    /** Marks the operation killed for {@code reason}; it ends at its next interrupt point with the matching error. */
    void kill(OperationInterruptedException.KillReason reason) {
        lock.lock();
        try {
            if (!killed) {
                killReason = reason;
            }
            killed = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** An interrupt point: throws if the deadline passed or the operation was killed. */
    public void checkForInterrupt() {
        if (isKilled()) {
            throw killError();
        }
        if (System.nanoTime() - deadlineNanos >= 0) {
            throw OperationInterruptedException.maxTimeExpired();
        }
    }

    /**
     * Waits, as an interrupt point, until {@code done} holds or {@code untilNanos} is reached. Must be called
     * with the node's lock held; the node signals its condition whenever a session, a stall or a kill flag
     * changes.
     *
     * @return true if {@code done} became true, false if the time ran out
     */
    boolean awaitInterruptibly(java.util.function.BooleanSupplier done, long untilNanos) throws InterruptedException {
        while (!done.getAsBoolean()) {
            checkForInterrupt();
            long now = System.nanoTime();
            long wait = Math.min(untilNanos - now, deadlineNanos - now);
            if (untilNanos - now <= 0) {
                return false;
            }
            if (wait > 0) {
                changed.awaitNanos(wait);
            }
        }
        return true;
    }

    /** Waits, ignoring deadline and kill, until {@code done} holds or {@code untilNanos} is reached. */
    boolean awaitUninterruptibly(java.util.function.BooleanSupplier done, long untilNanos) throws InterruptedException {
        while (!done.getAsBoolean()) {
            long wait = untilNanos - System.nanoTime();
            if (wait <= 0) {
                return false;
            }
            changed.awaitNanos(wait);
        }
        return true;
    }
}
