package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.mongowriteguard.testkit.stall.StallMode;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The emulator's own stalls ({@link Stall}): a command on a matching namespace is held once its session is checked
 * out, interruptibly or not, until the stall is released or its duration passed. No server component: it stands for
 * a slow storage engine (an uninterruptible one runs to its end, as a WiredTiger write loop does; a kill or the deadline
 * is then seen at the command's next interrupt point, so the statement it held is written).
 */
final class Stalls {
    private final ReentrantLock lock;
    private final Condition changed;
    private final List<ActiveStall> stalls = new CopyOnWriteArrayList<>();

    Stalls(ReentrantLock lock, Condition changed) {
        this.lock = lock;
        this.changed = changed;
    }

    StallHandle add(Stall stall) {
        ActiveStall active = new ActiveStall(stall);
        stalls.add(active);
        return active;
    }

    void releaseAll() {
        for (ActiveStall stall : stalls) {
            stall.release();
        }
    }

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

    void stallIfAsked(OperationContext operation) {
        String namespace = EmulatedNode.namespace(operation.database(), operation.command());
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
}
