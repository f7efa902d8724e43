package io.github.mongowriteguard.internal.outcome;

import com.mongodb.MongoException;
import com.mongodb.ServerAddress;
import com.mongodb.bulk.BulkWriteInsert;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.bulk.BulkWriteUpsert;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.copies.CopyRecord;
import io.github.mongowriteguard.internal.copies.SettleHold;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.jspecify.annotations.Nullable;

/**
 * The {@link WriteOutcome} of a guarded call, and its {@link Builder}, which the executors fill while the call runs.
 * Not API.
 *
 * @param <T> the collection's document class
 */
public final class RecordedWriteOutcome<T> implements WriteOutcome<T> {
    private final List<? extends WriteModel<? extends T>> models;
    /** One outcome per index, in index order; {@link #outcomes} is a read-only view of it. */
    private final IndexOutcome[] statuses;

    private final List<IndexOutcome> outcomes;
    private final int inserted;
    private final int matched;
    private final int modified;
    private final int deleted;
    private final List<BulkWriteUpsert> upserts;
    private final List<BulkWriteInsert> inserts;
    private final int rounds;
    private final int commands;
    private final int sends;
    private final @Nullable BsonDocument writeConcernError;
    private final List<CopyRecord> copies;
    private final List<CopyRecord> stillRunning;
    private final @Nullable MongoException commandError;
    private final @Nullable ServerAddress serverAddress;
    private final Set<String> errorLabels;
    private final Map<Integer, WriteOutcome.StatementCounts> statementCounts;
    /** The commands of this outcome the guard holds for settle (UNKNOWN statements, single-document writes). */
    private final List<SettleHold.Entry> held;

    private RecordedWriteOutcome(Builder<T> builder) {
        this.models = builder.models;
        // The builder's array, handed over: the builder is spent once built, so nothing writes into it again.
        this.statuses = builder.outcomes;
        this.outcomes = Collections.unmodifiableList(Arrays.asList(statuses));
        this.inserted = builder.inserted;
        this.matched = builder.matched;
        this.modified = builder.modified;
        this.deleted = builder.deleted;
        this.upserts = copy(builder.upserts);
        this.inserts = copy(builder.inserts);
        this.rounds = builder.rounds;
        this.commands = builder.commands;
        this.sends = builder.sends;
        this.writeConcernError = builder.writeConcernError;
        this.copies = copy(builder.copies);
        this.stillRunning = copy(builder.stillRunning);
        this.commandError = builder.commandError;
        this.serverAddress = builder.serverAddress;
        this.errorLabels = builder.errorLabels == null ? Set.of() : Set.copyOf(builder.errorLabels);
        this.statementCounts = builder.statementCounts == null ? Map.of() : Map.copyOf(builder.statementCounts);
        this.held = copy(builder.held);
    }

    /** {@return the commands of this outcome held for settle, in the order they were sent} */
    public List<SettleHold.Entry> held() {
        return held;
    }

    @Override
    public java.time.@Nullable Instant settleableUntil() {
        java.time.Instant until = null;
        for (SettleHold.Entry entry : held) {
            if (entry.releasedBecause() == null
                    && (until == null || entry.until().isBefore(until))) {
                until = entry.until();
            }
        }
        return until;
    }

    /**
     * {@link List#copyOf}, without the copy's allocations for the lists most calls leave empty (the builder makes them
     * only when something is added) and with one element.
     */
    private static <E> List<E> copy(@Nullable List<E> list) {
        if (list == null || list.isEmpty()) {
            return List.of();
        }
        return list.size() == 1 ? List.of(list.get(0)) : List.copyOf(list);
    }

    /**
     * The counts of an applied update, replace or delete that was sent in a command of its own, or null (an insert, a
     * write that shared its command with others, a write that did not apply).
     *
     * @param index an index of the caller's bulk
     * @return the counts of that write alone, or null
     */
    public WriteOutcome.@Nullable StatementCounts statementCounts(int index) {
        return statementCounts.get(index);
    }

    /** One outcome per index of the caller's bulk, in index order. */
    public List<IndexOutcome> outcomes() {
        return outcomes;
    }

    public IndexOutcome outcome(int index) {
        return outcomes.get(index); // the list's bounds check and exception, as before
    }

    /** The number of writes with each status. */
    public Map<WriteStatus, Integer> counts() {
        Map<WriteStatus, Integer> counts = new EnumMap<>(WriteStatus.class);
        for (WriteStatus status : WriteStatus.values()) {
            counts.put(status, 0);
        }
        for (IndexOutcome o : statuses) {
            counts.merge(o.status(), 1, Integer::sum);
        }
        return counts;
    }

    /** True when every write was applied. */
    public boolean isComplete() {
        // loops over the array, not streams or iterators: asked on every call (the observation's outcome, the
        // driver-style exceptions)
        for (IndexOutcome o : statuses) {
            if (o.status() != WriteStatus.APPLIED && o.status() != WriteStatus.SUPERSEDED) {
                return false;
            }
        }
        return true;
    }

    public boolean hasUnknown() {
        return any(WriteStatus.UNKNOWN);
    }

    public boolean hasFailures() {
        return any(WriteStatus.FAILED);
    }

    private boolean any(WriteStatus status) {
        for (IndexOutcome o : statuses) {
            if (o.status() == status) {
                return true;
            }
        }
        return false;
    }

    public int insertedCount() {
        return inserted;
    }

    public int matchedCount() {
        return matched;
    }

    public int modifiedCount() {
        return modified;
    }

    public int deletedCount() {
        return deleted;
    }

    /** Upserts, with the index each write had in the caller's bulk. */
    public List<BulkWriteUpsert> upserts() {
        return upserts;
    }

    /** Inserts applied, with their index in the caller's bulk and their {@code _id}. */
    public List<BulkWriteInsert> inserts() {
        return inserts;
    }

    /** Rounds run (each one unordered bulk, or the one ordered bulk when order had to be kept). */
    public int rounds() {
        return rounds;
    }

    /** Write commands (distinct server copies) the guard started. */
    public int commands() {
        return commands;
    }

    /** Times those commands were sent: a resend of the same copy counts here, not in {@link #commands()}. */
    public int sends() {
        return sends;
    }

    /**
     * The first write-concern error the server reported, or null. The writes it concerns were applied on the
     * primary; their durability was not confirmed.
     */
    public @Nullable BsonDocument writeConcernError() {
        return writeConcernError;
    }

    /**
     * The server copies this call started, one per write command (a retry of a single-document write resends the
     * same copy): sends, attempts, and whether each may still be running.
     */
    public List<CopyRecord> copies() {
        return copies;
    }

    /**
     * The error of a whole command (the server answered {@code ok: 0}, after the guard's retries), exactly as the
     * driver raised it; null when none. The call stopped there, as the driver's bulk does: later writes are SKIPPED.
     */
    public @Nullable MongoException commandError() {
        return commandError;
    }

    /** The server that answered the call's first command, as the driver reports it; null when nothing was answered. */
    public @Nullable ServerAddress serverAddress() {
        return serverAddress;
    }

    /** The error labels of the replies that reported write errors or write-concern errors, as the driver collects them. */
    public Set<String> errorLabels() {
        return errorLabels;
    }

    /** Attempts in all (first sends and retries of every copy). */
    public int attempts() {
        return copies.stream().mapToInt(CopyRecord::attempts).sum();
    }

    /** Copies the server may still be running: the client stopped waiting and nothing showed that they ended. */
    public List<CopyRecord> possiblyRunning() {
        return copies.stream().filter(CopyRecord::possiblyRunning).toList();
    }

    /** Copies that refused a retry because {@code currentOp} showed them still running; empty when none. */
    public List<CopyRecord> stillRunning() {
        return stillRunning;
    }

    /**
     * The caller's models whose status is FAILED, SKIPPED or UNKNOWN, in index order (not SUPERSEDED ones: sending
     * them after the write that superseded them would undo it).
     */
    public List<WriteModel<? extends T>> notApplied() {
        List<WriteModel<? extends T>> result = new ArrayList<>();
        for (IndexOutcome outcome : statuses) {
            if (outcome.status() != WriteStatus.APPLIED && outcome.status() != WriteStatus.SUPERSEDED) {
                result.add(models.get(outcome.index()));
            }
        }
        return result;
    }

    /** The counts as the driver's result type. */
    public BulkWriteResult toBulkWriteResult() {
        return BulkWriteResult.acknowledged(inserted, matched, deleted, modified, upserts, inserts);
    }

    @Override
    public String toString() {
        return "WriteOutcome{" + counts() + ", inserted=" + inserted + ", matched=" + matched + ", modified=" + modified
                + ", deleted=" + deleted + ", upserted=" + upserts.size() + ", rounds=" + rounds + ", commands="
                + commands
                + ", sends=" + sends + (stillRunning.isEmpty() ? "" : ", stillRunning=" + stillRunning) + '}';
    }

    private static final java.util.Comparator<BulkWriteUpsert> BY_INDEX_UPSERT =
            java.util.Comparator.comparingInt(BulkWriteUpsert::getIndex);
    private static final java.util.Comparator<BulkWriteInsert> BY_INDEX_INSERT =
            java.util.Comparator.comparingInt(BulkWriteInsert::getIndex);

    /** Collects an outcome while a guarded write runs; for the guard's executor; built once. */
    public static final class Builder<T> {
        private final List<? extends WriteModel<? extends T>> models;
        /** One outcome per index, set in any order; handed to the outcome by {@link #build}. */
        private final IndexOutcome[] outcomes;
        // The collections below are made at their first element: most calls leave most of them empty.
        private @Nullable List<BulkWriteUpsert> upserts;
        private @Nullable List<BulkWriteInsert> inserts;
        private int inserted;
        private int matched;
        private int modified;
        private int deleted;
        private int rounds;
        private int commands;
        private int sends;
        private @Nullable BsonDocument writeConcernError;
        private @Nullable List<CopyRecord> copies;
        private @Nullable List<CopyRecord> stillRunning;
        private @Nullable MongoException commandError;
        private @Nullable ServerAddress serverAddress;
        private @Nullable Set<String> errorLabels;
        private @Nullable Map<Integer, WriteOutcome.StatementCounts> statementCounts;
        private @Nullable List<SettleHold.Entry> held;
        private boolean built;

        public Builder(List<? extends WriteModel<? extends T>> models) {
            this.models = models;
            this.outcomes = new IndexOutcome[models.size()];
        }

        /**
         * A builder that starts from everything {@code previous} says but its held commands, for a settle, which
         * records what each of those commands did and holds again those still unsettled.
         */
        public Builder(RecordedWriteOutcome<T> previous) {
            this.models = previous.models;
            this.outcomes = previous.statuses.clone();
            this.upserts = new ArrayList<>(previous.upserts);
            this.inserts = new ArrayList<>(previous.inserts);
            this.inserted = previous.inserted;
            this.matched = previous.matched;
            this.modified = previous.modified;
            this.deleted = previous.deleted;
            this.rounds = previous.rounds;
            this.commands = previous.commands;
            this.sends = previous.sends;
            this.writeConcernError = previous.writeConcernError;
            this.copies = new ArrayList<>(previous.copies);
            this.stillRunning = new ArrayList<>(previous.stillRunning);
            this.commandError = previous.commandError;
            this.serverAddress = previous.serverAddress;
            this.errorLabels = new HashSet<>(previous.errorLabels);
            this.statementCounts = new HashMap<>(previous.statementCounts);
        }

        /** A command of this outcome held for settle. */
        public Builder<T> held(SettleHold.Entry entry) {
            if (held == null) {
                held = new ArrayList<>(1);
            }
            held.add(entry);
            return this;
        }

        /** {@return the commands held for settle so far} */
        public List<SettleHold.Entry> heldSoFar() {
            return held == null ? List.of() : held;
        }

        /** The copies recorded so far: a settle replaces a copy's record with the one its resend leaves. */
        public Builder<T> replaceCopy(CopyRecord copy) {
            if (copies != null) {
                copies.removeIf(
                        c -> c.lsid().equals(copy.lsid()) && java.util.Objects.equals(c.txnNumber(), copy.txnNumber()));
            }
            return copy(copy);
        }

        public Builder<T> set(IndexOutcome outcome) {
            if (built) {
                throw new IllegalStateException("guard defect: an outcome was set after the call's outcome was built");
            }
            outcomes[outcome.index()] = outcome;
            return this;
        }

        public @Nullable IndexOutcome get(int index) {
            return outcomes[index];
        }

        public Builder<T> counts(int inserted, int matched, int modified, int deleted) {
            this.inserted += inserted;
            this.matched += matched;
            this.modified += modified;
            this.deleted += deleted;
            return this;
        }

        /** The counts of the write at {@code index}, sent alone in its command. */
        public Builder<T> statementCounts(int index, WriteOutcome.StatementCounts counts) {
            if (statementCounts == null) {
                // a call of one such write (the single-write methods) keeps its one entry without a hash map
                statementCounts = Map.of(index, counts);
                return this;
            }
            if (!(statementCounts instanceof HashMap)) {
                statementCounts = new HashMap<>(statementCounts);
            }
            statementCounts.put(index, counts);
            return this;
        }

        public Builder<T> upsert(BulkWriteUpsert upsert) {
            if (upserts == null) {
                upserts = new ArrayList<>();
            }
            upserts.add(upsert);
            return this;
        }

        public Builder<T> insert(BulkWriteInsert insert) {
            if (inserts == null) {
                inserts = new ArrayList<>();
            }
            inserts.add(insert);
            return this;
        }

        public Builder<T> writeConcernError(BsonDocument error) {
            if (writeConcernError == null) {
                writeConcernError = error;
            }
            return this;
        }

        public Builder<T> copy(CopyRecord copy) {
            if (copies == null) {
                copies = new ArrayList<>(1);
            }
            copies.add(copy);
            return this;
        }

        public Builder<T> stillRunning(CopyRecord copy) {
            if (stillRunning == null) {
                stillRunning = new ArrayList<>(1);
            }
            stillRunning.add(copy);
            return this;
        }

        public Builder<T> commandError(MongoException error) {
            if (commandError == null) {
                commandError = error;
            }
            return this;
        }

        /** The server of a send; the first one is kept, as the driver keeps its first batch's. */
        public Builder<T> server(@Nullable ServerAddress address) {
            if (serverAddress == null) {
                serverAddress = address;
            }
            return this;
        }

        public Builder<T> errorLabels(Set<String> labels) {
            if (labels.isEmpty()) {
                return this;
            }
            if (errorLabels == null) {
                errorLabels = new HashSet<>();
            }
            errorLabels.addAll(labels);
            return this;
        }

        public Builder<T> round() {
            rounds++;
            return this;
        }

        public Builder<T> command() {
            commands++;
            return this;
        }

        public Builder<T> send() {
            sends++;
            return this;
        }

        /**
         * @throws IllegalStateException if an index has no outcome: every index must have exactly one
         */
        public WriteOutcome<T> build() {
            for (int i = 0; i < outcomes.length; i++) {
                if (outcomes[i] == null) {
                    throw new IllegalStateException("guard defect: index " + i + " has no outcome");
                }
            }
            if (upserts != null && upserts.size() > 1) {
                upserts.sort(BY_INDEX_UPSERT);
            }
            if (inserts != null && inserts.size() > 1) {
                inserts.sort(BY_INDEX_INSERT);
            }
            built = true;
            return new RecordedWriteOutcome<>(this);
        }
    }
}
