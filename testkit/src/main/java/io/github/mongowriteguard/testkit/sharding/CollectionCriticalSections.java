package io.github.mongowriteguard.testkit.sharding;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A shard's migration critical sections, one per collection, and the collection lock that orders them with the writes
 * running on the shard, as mongod does it (mongodb/mongo {@code src/mongo/db/s/migration_source_manager.cpp},
 * {@code CollectionCriticalSection}; {@code sharding_migration_critical_section.cpp};
 * {@code collection_sharding_runtime.cpp}):
 *
 * <ul>
 *   <li>a versioned write holds the collection lock shared (mongod's {@code MODE_IX}) while it runs, a
 *       multi-document transaction's write until the transaction ends;</li>
 *   <li>entering the critical section takes the lock exclusively ({@code MODE_X}) with a deadline of
 *       {@code migrationLockAcquisitionMaxWaitMS} (500 ms by default), so the writes already running finish first and
 *       the migration fails with {@code LockTimeout} when they do not finish in time;</li>
 *   <li>while the critical section is held, a versioned write that arrives gets the critical section's signal instead
 *       of running ({@code getCriticalSectionSignal(kWrite)}: StaleConfig with the signal); it waits on the signal
 *       ({@code OperationShardingState::waitForCriticalSectionToComplete}, bounded by the operation's own deadline)
 *       and then answers StaleConfig, so mongos refreshes and sends it to the new owner.</li>
 * </ul>
 *
 * <p>Shared by the members of one shard (only its primary writes).
 */
final class CollectionCriticalSections {
    /** mongod's {@code migrationLockAcquisitionMaxWaitMS} default. */
    static final Duration MIGRATION_LOCK_ACQUISITION_MAX_WAIT = Duration.ofMillis(500);

    private final Map<String, Section> sections = new ConcurrentHashMap<>();

    private static final class Section {
        final ReentrantReadWriteLock lock = new ReentrantReadWriteLock(true);
        volatile CompletableFuture<Void> signal;
        /** The open transactions that wrote the collection, by key, each with whether it is still open. */
        final Map<String, java.util.function.BooleanSupplier> transactions = new ConcurrentHashMap<>();
    }

    /** A versioned write's admission: it runs holding the collection lock, or it must wait on a critical section. */
    record Admission(Lock held, CompletableFuture<Void> criticalSection) {
        boolean admitted() {
            return held != null;
        }

        void release() {
            if (held != null) {
                held.unlock();
            }
        }
    }

    /** Takes the collection lock shared for a write, unless the collection is in its critical section. */
    Admission admitWrite(String namespace) {
        Section section = section(namespace);
        Lock shared = section.lock.readLock();
        shared.lock();
        CompletableFuture<Void> signal = section.signal;
        if (signal != null) {
            shared.unlock();
            return new Admission(null, signal);
        }
        return new Admission(shared, null);
    }

    /**
     * A multi-document transaction wrote the collection, under {@code admission}: like mongod's, its collection lock
     * ({@code MODE_IX}) is held until the transaction commits or aborts (a transaction keeps its locks to its end,
     * {@code src/mongo/db/transaction/transaction_participant.cpp} stashes them with the transaction's resources), so
     * the critical section cannot be entered while it is open.
     *
     * @param key  the transaction ({@code lsid} and {@code txnNumber})
     * @param open whether it is still open (not committed, aborted, expired or killed)
     */
    void transactionWrote(String namespace, String key, java.util.function.BooleanSupplier open) {
        section(namespace).transactions.put(key, open);
    }

    /**
     * Waits for the critical section to end, at most {@code maxNanos} (the operation's remaining time); a best effort,
     * as mongod's: the caller answers StaleConfig either way.
     *
     * @return whether it ended
     */
    static boolean awaitExit(CompletableFuture<Void> signal, long maxNanos) {
        try {
            signal.get(maxNanos, TimeUnit.NANOSECONDS);
            return true;
        } catch (TimeoutException | ExecutionException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Enters the collection's critical section once the writes running on it have finished.
     *
     * @param maxWait how long to wait for them ({@code migrationLockAcquisitionMaxWaitMS})
     * @return the held critical section, to exit once the migration committed or failed
     * @throws IllegalStateException with {@code LockTimeout} when the running writes outlast {@code maxWait}
     */
    Held enter(String namespace, Duration maxWait) {
        Section section = section(namespace);
        Lock exclusive = section.lock.writeLock();
        long until = System.nanoTime() + maxWait.toNanos();
        boolean locked = false;
        while (!locked) {
            try {
                locked = exclusive.tryLock(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            if (locked) {
                // An open transaction that wrote the collection holds its lock to its end.
                section.transactions.values().removeIf(open -> !open.getAsBoolean());
                if (!section.transactions.isEmpty()) {
                    exclusive.unlock();
                    locked = false;
                    if (System.nanoTime() - until >= 0) {
                        break;
                    }
                    io.github.mongowriteguard.testkit.internal.Sleeps.until(
                            Math.min(until, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(5)));
                }
            } else {
                break;
            }
        }
        if (!locked) {
            throw new IllegalStateException("LockTimeout: the migration of " + namespace
                    + " could not enter its critical section: writes or open transactions still holding the"
                    + " collection after " + maxWait.toMillis() + " ms (migrationLockAcquisitionMaxWaitMS)");
        }
        try {
            if (section.signal != null) {
                throw new IllegalStateException(namespace + " is already in a critical section");
            }
            section.signal = new CompletableFuture<>();
        } finally {
            exclusive.unlock();
        }
        return () -> {
            CompletableFuture<Void> signal = section.signal;
            section.signal = null;
            signal.complete(null);
        };
    }

    /** {@return whether {@code namespace} is in its critical section} */
    boolean inCriticalSection(String namespace) {
        Section section = sections.get(namespace);
        return section != null && section.signal != null;
    }

    private Section section(String namespace) {
        return sections.computeIfAbsent(namespace, n -> new Section());
    }

    /** A critical section being held; {@link #exit()} releases the writes waiting on it. */
    interface Held {
        void exit();
    }
}
