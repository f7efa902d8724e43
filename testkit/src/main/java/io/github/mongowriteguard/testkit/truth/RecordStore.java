package io.github.mongowriteguard.testkit.truth;

import java.util.AbstractCollection;
import java.util.Collections;
import java.util.Iterator;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One node's recorded commands ({@link ServerTruth#newStore()}), holding at most {@link #MAX_STATEMENTS} write
 * statements at a time: a command that arrives while the store holds that many or more is kept without its statements
 * ({@link ReceivedCommand#statementsDropped()}), and one WARN line says so once per fill. The bound counts the
 * statements the store holds now, so {@link ServerTruth#reset()} frees it: a deployment shared by many tests or rounds
 * records every round's statements as long as each round stays under the bound. Thread-safe: the emulator adds from
 * every connection while tests read and reset.
 */
final class RecordStore extends AbstractCollection<CommandRecord> {
    private static final Logger log = LoggerFactory.getLogger(RecordStore.class);

    /**
     * The most write statements one node's truth holds between resets (their identities, for copies per key): the
     * bound keeps a long run (the lab's soak and paired runs) from growing the emulator's memory with every write.
     */
    static final long MAX_STATEMENTS = 250_000;

    private final Queue<CommandRecord> records = new ConcurrentLinkedQueue<>();
    /** Guards {@link #held} together with what the queue holds. */
    private final Object lock = new Object();

    private volatile long maxStatements = MAX_STATEMENTS;
    /** The statements of the records in {@link #records}; guarded by {@link #lock}. */
    private long held;

    /** Lowers or raises the bound (a seam for tests, which cannot send 250,000 statements per case). */
    void maxStatements(long max) {
        this.maxStatements = max;
    }

    /**
     * Keeps {@code record}, with its statements while the store holds fewer than the bound, else without them.
     *
     * @param record a command that just arrived
     * @return true
     */
    @Override
    public boolean add(CommandRecord record) {
        int statements = record.statementCount();
        long max = maxStatements;
        long filled = -1;
        synchronized (lock) {
            if (statements > 0 && held >= max) {
                record.dropStatements();
            } else {
                held += statements;
                if (statements > 0 && held >= max) {
                    filled = held;
                }
            }
            records.add(record);
        }
        if (filled >= 0) {
            log.warn(
                    "emulator: this node's truth holds {} write statements, its bound: later commands are kept "
                            + "without their statements (ReceivedCommand.statementsDropped()) and counting copies per "
                            + "key from them throws, until the truth is reset; reset it between measurements "
                            + "(truth().reset())",
                    filled);
        }
        return true;
    }

    /** Removes the matching records and frees their statements from the bound. */
    @Override
    public boolean removeIf(Predicate<? super CommandRecord> filter) {
        synchronized (lock) {
            boolean removed = records.removeIf(filter);
            long left = 0;
            for (CommandRecord record : records) {
                left += record.statementCount();
            }
            held = left;
            return removed;
        }
    }

    @Override
    public void clear() {
        removeIf(record -> true);
    }

    /** A weakly consistent, read-only view (remove through {@link #removeIf}). */
    @Override
    public Iterator<CommandRecord> iterator() {
        return Collections.unmodifiableCollection(records).iterator();
    }

    @Override
    public int size() {
        return records.size();
    }

    /** {@return the write statements held now} */
    long statementsHeld() {
        synchronized (lock) {
            return held;
        }
    }
}
