package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.mongowriteguard.testkit.stall.StallMode;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The interrupt points mongod has between the statements of a write command, and the pauses a test places there.
 * Each statement of a batch takes its own locks, which checks for interruption and the deadline
 * (mongodb/mongo {@code src/mongo/db/ops/write_ops_exec.cpp}); an insert's documents go in groups of 64
 * ({@code performInserts}, {@code internalInsertMaxBatchSize}), so its points are between groups, and a pause after
 * {@code n} statements holds an insert at the first point past {@code n}. An interruption there is rethrown by
 * {@code handleError} ("These have always failed the whole batch"), so the command fails with the interruption's
 * code while the statements before it stay committed (and, for a retryable write, recorded).
 */
final class InterruptPoints {
    private final ReentrantLock lock;
    private final Condition changed;
    private final List<Pause> pauses = new CopyOnWriteArrayList<>();

    InterruptPoints(ReentrantLock lock, Condition changed) {
        this.lock = lock;
        this.changed = changed;
    }

    /** A pause after the first {@code statements} statements of a matching write command. */
    private final class Pause implements StallHandle {
        private final Stall stall;
        private final int statements;
        private volatile boolean released;

        Pause(Stall stall, int statements) {
            this.stall = stall;
            this.statements = statements;
        }

        @Override
        public Stall stall() {
            return stall;
        }

        @Override
        public void release() {
            pauses.remove(this);
            lock.lock();
            try {
                released = true;
                changed.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    /** Holds every matching write command, interruptibly, after its first {@code statements} statements ran. */
    StallHandle pauseAfter(String namespace, int statements, Duration duration) {
        if (statements < 1) {
            throw new IllegalArgumentException(
                    "statements (" + statements + ") must be 1 or more; to hold a command before it runs, use stall()");
        }
        Pause pause =
                new Pause(new Stall(namespace, Stall.WRITE_COMMANDS, StallMode.INTERRUPTIBLE, duration), statements);
        pauses.add(pause);
        return pause;
    }

    /**
     * Before the statement that follows {@code ran} statements of the command: the pauses placed there, then the
     * interrupt check (none before the first statement: the command's own checks ran just before it).
     *
     * @throws OperationInterruptedException when the operation was killed or its deadline passed
     */
    void beforeStatement(OperationContext operation, String namespace, int ran) {
        beforeStatement(operation, namespace, ran, 1);
    }

    /**
     * As {@link #beforeStatement(OperationContext, String, int)} where the last step ran {@code lastRan} statements at
     * once (an insert's group): a pause after {@code n} statements holds here when that group took the command past
     * {@code n}.
     */
    void beforeStatement(OperationContext operation, String namespace, int ran, int lastRan) {
        if (ran == 0) {
            return;
        }
        for (Pause pause : pauses) {
            boolean reachedHere = ran - lastRan < pause.statements && pause.statements <= ran;
            if (!reachedHere || !pause.stall.matches(namespace, operation.commandName())) {
                continue;
            }
            long until = System.nanoTime() + pause.stall.duration().toNanos();
            lock.lock();
            try {
                operation.awaitInterruptibly(() -> pause.released, until);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw OperationInterruptedException.killed();
            } finally {
                lock.unlock();
            }
        }
        operation.checkForInterrupt();
    }
}
