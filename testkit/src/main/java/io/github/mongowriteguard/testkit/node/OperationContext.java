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
    private final long startNanos;
    private final long deadlineNanos;
    private final ReentrantLock lock;
    private final Condition changed;
    private final CommandRecord record;
    private volatile boolean killed;

    OperationContext(long opid, ClientConnection connection, String database, BsonDocument command,
                     long startNanos, long maxTimeMs, ReentrantLock lock, Condition changed, CommandRecord record) {
        this.opid = opid;
        this.connection = connection;
        this.database = database;
        this.command = command;
        this.startNanos = startNanos;
        this.deadlineNanos = maxTimeMs > 0 ? startNanos + TimeUnit.MILLISECONDS.toNanos(maxTimeMs) : Long.MAX_VALUE;
        this.lock = lock;
        this.changed = changed;
        this.record = record;
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

    /** {@return the command's name (its first field)} */
    public String commandName() {
        return command.getFirstKey();
    }

    /** {@return {@link System#nanoTime()} when the command started} */
    public long startNanos() {
        return startNanos;
    }

    CommandRecord record() {
        return record;
    }

    boolean isKilled() {
        return killed;
    }

    void kill() {
        lock.lock();
        try {
            killed = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** An interrupt point: throws if the deadline passed or the operation was killed. */
    public void checkForInterrupt() {
        if (killed) {
            throw OperationInterruptedException.killed();
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
