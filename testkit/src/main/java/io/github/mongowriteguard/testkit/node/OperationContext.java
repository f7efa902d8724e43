package io.github.mongowriteguard.testkit.node;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import org.bson.BsonDocument;

import io.github.mongowriteguard.testkit.truth.CommandRecord;
import io.github.mongowriteguard.testkit.wire.ClientConnection;

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
    private final long deadlineNanos;
    private final ReentrantLock lock;
    private final Condition changed;
    private final CommandRecord record;
    private volatile boolean killed;
    private volatile OperationInterruptedException.KillReason killReason = OperationInterruptedException.KillReason.KILLED;
    private volatile Object replicationState;
    private volatile long executionStartNanos;
    private volatile boolean executing;

    OperationContext(long opid, ClientConnection connection, String database, BsonDocument command,
                     long startNanos, long maxTimeMs, ReentrantLock lock, Condition changed, CommandRecord record) {
        this.opid = opid;
        this.connection = connection;
        this.database = database;
        this.command = command;
        this.description = description(command, connection.documentSequences());
        this.startNanos = startNanos;
        this.deadlineNanos = maxTimeMs > 0 ? startNanos + TimeUnit.MILLISECONDS.toNanos(maxTimeMs) : Long.MAX_VALUE;
        this.lock = lock;
        this.changed = changed;
        this.record = record;
    }

    public long opid() {
        return opid;
    }

    public ClientConnection connection() {
        return connection;
    }

    public String database() {
        return database;
    }

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

    public String commandName() {
        return command.getFirstKey();
    }

    public long startNanos() {
        return startNanos;
    }

    /**
     * The command leaves its waits (fail point block, session check-out) and starts executing: from now on
     * {@code currentOp} shows {@code secs_running}, as mongod's {@code CurOp::ensureStarted()} in the write path
     * ({@code performInserts} and its siblings in {@code write_ops_exec.cpp}) starts the clock that
     * {@code CurOp::reportState} reports only once started.
     */
    void startExecution() {
        if (!executing) {
            executionStartNanos = System.nanoTime();
            executing = true;
        }
    }

    /** Whether the command started executing (it no longer waits at a fail point block or the session check-out). */
    boolean isExecuting() {
        return executing;
    }

    /** {@link System#nanoTime()} when the command started executing; meaningful once {@link #isExecuting()}. */
    long executionStartNanos() {
        return executionStartNanos;
    }

    /** Nanoseconds until the {@code maxTimeMS} deadline ({@link Long#MAX_VALUE} without one); 0 once it passed. */
    public long remainingNanos() {
        if (deadlineNanos == Long.MAX_VALUE) {
            return Long.MAX_VALUE;
        }
        return Math.max(0, deadlineNanos - System.nanoTime());
    }

    /** Whether the operation was killed ({@code killOp}, {@code killSessions}, a stepdown or shutdown). */
    public boolean killed() {
        return killed;
    }

    /** The error the operation ends with at its next interrupt point, once killed. */
    public OperationInterruptedException killError() {
        return OperationInterruptedException.of(killReason);
    }

    /** The replication layer's state of this operation (its term, pending oplog entries); null elsewhere. */
    public Object replicationState() {
        return replicationState;
    }

    public void replicationState(Object state) {
        this.replicationState = state;
    }

    CommandRecord record() {
        return record;
    }

    boolean isKilled() {
        return killed;
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
        if (killed) {
            throw OperationInterruptedException.of(killReason);
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
