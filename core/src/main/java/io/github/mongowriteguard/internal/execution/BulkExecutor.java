package io.github.mongowriteguard.internal.execution;

import com.mongodb.WriteConcern;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.MongoAccess;
import io.github.mongowriteguard.bulk.BulkPlan;
import io.github.mongowriteguard.bulk.BulkPlanner;
import io.github.mongowriteguard.bulk.PlanMode;
import io.github.mongowriteguard.bulk.PlanOptions;
import io.github.mongowriteguard.bulk.Round;
import io.github.mongowriteguard.exception.InvalidBulkException;
import io.github.mongowriteguard.exception.InvalidBulkException.Problem;
import io.github.mongowriteguard.internal.CallObserver;
import io.github.mongowriteguard.internal.GuardRuntime;
import io.github.mongowriteguard.internal.command.CommandOptions;
import io.github.mongowriteguard.internal.command.WriteCommand;
import io.github.mongowriteguard.internal.command.WriteCommandEncoder;
import io.github.mongowriteguard.internal.outcome.RecordedIndexOutcome;
import io.github.mongowriteguard.internal.outcome.RecordedWriteOutcome;
import io.github.mongowriteguard.metrics.CallOutcome;
import io.github.mongowriteguard.metrics.GuardEventListener;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;

/**
 * Runs one guarded bulk, top to bottom: check and plan it (ids assigned, rounds), then for each round skip what the
 * caller's mode says must not run, encode the rest as write commands with the server deadline, send each as one
 * server copy ({@link CopySender}: its own transaction number, same-copy retries behind the overlap gate), and record
 * every statement's outcome ({@link OutcomeRecorder}). A whole command that fails, or whose outcome becomes unknown,
 * stops the call, as it stops the driver's bulk. (The driver's own split: {@code MixedBulkWriteOperation} runs the
 * loop, {@code BulkWriteBatchCombiner} merges the replies.)
 *
 * @param <T> the collection's document class
 */
public final class BulkExecutor<T> {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(BulkExecutor.class);

    private final MongoCollection<T> collection;
    private final String namespace;
    private final MongoDatabase database;
    private final MongoDatabase admin;
    private final MongoAccess access;
    private final GuardRuntime runtime;
    private final long maxTimeMs;
    private final BulkPlanner<T> planner;
    private final WriteCommandEncoder<T> encoder;
    private final CopySender sender;

    public BulkExecutor(MongoCollection<T> collection, MongoAccess access, GuardRuntime runtime, long maxTimeMs) {
        this.collection = collection;
        this.namespace = collection.getNamespace().getFullName();
        // Commands go through the collection's database with the collection's codecs, so documents encode as its
        // own bulkWrite would encode them.
        this.database = access.getDatabase(collection.getNamespace().getDatabaseName())
                .withCodecRegistry(collection.getCodecRegistry());
        this.admin = access.getDatabase("admin");
        this.access = access;
        this.runtime = runtime;
        this.maxTimeMs = maxTimeMs;
        this.planner = BulkPlanner.forCollection(collection);
        this.encoder = new WriteCommandEncoder<>(
                collection.getNamespace().getCollectionName(),
                collection.getDocumentClass(),
                collection.getCodecRegistry());
        this.sender = new CopySender(runtime, database, admin, namespace, maxTimeMs);
    }

    /** The server deadline every command carries. */
    public long maxTimeMs() {
        return maxTimeMs;
    }

    public BulkPlan plan(List<? extends WriteModel<? extends T>> models, BulkWriteOptions options) {
        PlanOptions planOptions = PlanOptions.builder(
                        PlanOptions.from(options, runtime.settings().isStrictOrdered()))
                .lastWriteWins(runtime.settings().isLastWriteWins())
                // read only if an ordered bulk repeats a key: how many key runs share one ORDERED command
                .keyPlacement(() -> runtime.keyPlacements().forCollection(access, collection.getNamespace(), maxTimeMs))
                .build();
        if (SingleDocumentRules.needed(models)) {
            planOptions = PlanOptions.builder(planOptions)
                    .singleDocumentById(
                            runtime.singleDocumentRules().forCollection(access, collection.getNamespace(), maxTimeMs))
                    .build();
        }
        return planner.plan(models, planOptions);
    }

    /**
     * Runs the bulk inside the call's observation, then throws what {@code call}'s {@link ThrowPolicy} says for the
     * outcome ({@link DriverExceptions#apply}), inside the observation too, which records it. With
     * {@link ThrowPolicy#OUTCOME_ONLY} it throws only for bad input (before anything is sent): every write failure is
     * in the outcome.
     */
    public WriteOutcome<T> execute(GuardedCall call, List<? extends WriteModel<? extends T>> models) {
        return runtime.observer().observe(namespace, call.operation(), sink -> {
            WriteOutcome<T> result = run(
                    call.session(),
                    models,
                    call.options(),
                    call.operation(),
                    call.idempotentMultiRetries(),
                    call.statementCounts(),
                    sink);
            DriverExceptions.apply(call.throwPolicy(), result, collection.getNamespace(), maxTimeMs);
            return result;
        });
    }

    private WriteOutcome<T> run(
            @Nullable ClientSession session,
            List<? extends WriteModel<? extends T>> models,
            BulkWriteOptions options,
            String operation,
            boolean idempotentMultiRetries,
            boolean statementCounts,
            CallObserver.OutcomeSink sink) {
        long started = System.nanoTime();
        WriteConcern writeConcern = requireAcknowledged(collection.getWriteConcern());
        if (idempotentMultiRetries) {
            MultiRetryOptIn.check(models, collection.getDocumentClass(), collection.getCodecRegistry());
        }
        CommandOptions commandOptions =
                CommandOptions.from(options, collection.getDocumentClass(), collection.getCodecRegistry());
        BulkPlan plan = plan(models, options);
        if (!plan.isEmpty()) {
            announce(plan, operation, sink);
        }
        RecordedWriteOutcome.Builder<T> outcome = new RecordedWriteOutcome.Builder<>(models);
        if (plan.hasSuperseded()) {
            recordSuperseded(plan, outcome);
        }
        if (!plan.isEmpty()) {
            try (Run run = new Run(
                    session == null ? Sessions.own(access) : Sessions.callers(session),
                    plan,
                    options.isOrdered() && plan.mode() == PlanMode.UNORDERED_ROUNDS,
                    outcome,
                    writeConcern.isServerDefault() ? null : writeConcern.asDocument(),
                    commandOptions,
                    idempotentMultiRetries,
                    statementCounts)) {
                for (Round round : plan.rounds()) {
                    run.round(round);
                }
            }
        }
        WriteOutcome<T> result = outcome.build();
        CallOutcome callOutcome = callOutcome(result);
        sink.outcome(callOutcome);
        runtime.events()
                .writeCompleted(new GuardEventListener.WriteCompleted(
                        namespace,
                        operation,
                        callOutcome,
                        java.time.Duration.ofNanos(System.nanoTime() - started),
                        result.rounds(),
                        result.commands(),
                        result.sends(),
                        plan.mode()));
        return result;
    }

    /** Writes left out under last-write-wins: SUPERSEDED, naming the write that decides their document. */
    private static void recordSuperseded(BulkPlan plan, RecordedWriteOutcome.Builder<?> outcome) {
        for (int index = 0; index < plan.size(); index++) {
            int by = plan.supersededBy(index);
            if (by >= 0) {
                outcome.set(RecordedIndexOutcome.superseded(
                        index,
                        by,
                        "not sent (lastWriteWins): the later write at index " + by + " replaces or deletes the same"
                                + " _id; had this one been sent, its own error would not be known"));
            }
        }
    }

    /**
     * Says how the bulk runs where a user looks: a WARN line when it runs as given or without same-copy retries, the
     * {@code mongodb.guard.plans} meter (through the event), the mode on the call's observation.
     */
    private void announce(BulkPlan plan, String operation, CallObserver.OutcomeSink sink) {
        try {
            runtime.planWarnings().note(namespace, plan);
        } catch (RuntimeException e) {
            log.warn("mongo-write-guard: could not describe the plan of a bulk on {}; the write goes on", namespace, e);
        }
        int first = plan.mode() == PlanMode.PRESERVE_ORDER ? plan.firstUnkeyed() : plan.firstMultiDocument();
        runtime.events()
                .planChosen(new GuardEventListener.PlanChosen(
                        namespace,
                        operation,
                        plan.mode(),
                        plan.reasonTag(),
                        plan.size(),
                        plan.mode() == PlanMode.STRICT_ORDERED ? -1 : first));
        sink.planMode(plan.mode());
    }

    /** The collection's write concern, refused when unacknowledged: nobody would confirm the outcome. */
    static WriteConcern requireAcknowledged(WriteConcern writeConcern) {
        if (!writeConcern.isAcknowledged()) {
            throw new InvalidBulkException(
                    -1,
                    Problem.UNACKNOWLEDGED_WRITE_CONCERN,
                    "the collection's write concern " + writeConcern
                            + " is unacknowledged: the guard cannot know the outcome of a write nobody confirms; use w:1 or"
                            + " w:\"majority\" (collection.withWriteConcern(WriteConcern.W1)). Nothing was sent.");
        }
        return writeConcern;
    }

    /** How a call ended, for its event and observation. */
    static CallOutcome callOutcome(WriteOutcome<?> outcome) {
        if (outcome.isComplete()) {
            return CallOutcome.SUCCESS;
        }
        if (outcome.hasUnknown()) {
            return CallOutcome.UNKNOWN;
        }
        boolean anyApplied = outcome.outcomes().stream().anyMatch(o -> o.status() == WriteStatus.APPLIED);
        return anyApplied ? CallOutcome.PARTIAL : CallOutcome.FAILURE;
    }

    /** The state of one bulk while it runs: the round loop, and when the call stops. */
    private final class Run implements AutoCloseable {
        final BulkPlan plan;
        /** An ordered request run in rounds: after a write on a key does not apply, that key's later writes are skipped. */
        final boolean perKeyFailures;

        final RecordedWriteOutcome.Builder<T> outcome;
        final @Nullable BsonDocument writeConcern;
        final CommandOptions commandOptions;
        final boolean idempotentMultiRetries;
        /** Every update, replace and delete in a command of its own. */
        final boolean statementCounts;

        final Sessions sessions;
        final OutcomeRecorder<T> recorder;
        final String writeId =
                HexFormat.of().formatHex(longBytes(ThreadLocalRandom.current().nextLong()));
        int commandNumber;
        /** Why nothing more is sent (a whole command failed, an outcome is unknown, an ORDERED round stopped), or null. */
        @Nullable
        String stopped;

        int stoppedAt = -1;
        /** Writes of this call that did not apply for their key (ordered requests); null until the first. */
        boolean @Nullable [] dead;

        Run(
                Sessions sessions,
                BulkPlan plan,
                boolean perKeyFailures,
                RecordedWriteOutcome.Builder<T> outcome,
                @Nullable BsonDocument writeConcern,
                CommandOptions commandOptions,
                boolean idempotentMultiRetries,
                boolean statementCounts) {
            this.sessions = sessions;
            this.statementCounts = statementCounts;
            this.plan = plan;
            this.perKeyFailures = perKeyFailures;
            this.outcome = outcome;
            this.writeConcern = writeConcern;
            this.commandOptions = commandOptions;
            this.idempotentMultiRetries = idempotentMultiRetries;
            this.recorder = new OutcomeRecorder<>(plan, outcome, collection.getCodecRegistry());
        }

        void round(Round round) {
            List<Integer> together = runnable(round, round.unorderedPart());
            List<Integer> keyRuns = runnable(round, round.keyRuns());
            if (together.isEmpty() && keyRuns.isEmpty()) {
                return;
            }
            outcome.round();
            if (!together.isEmpty()) {
                sendAll(round, encoder.commands(plan, together, round.isOrdered(), commandOptions, statementCounts));
            }
            if (!keyRuns.isEmpty()) {
                sendKeyRuns(round, keyRuns);
            }
        }

        /** The writes of {@code part} still to send: not after a stop, not after a write on their key that did not apply. */
        private List<Integer> runnable(Round round, List<Integer> part) {
            List<Integer> runnable = new ArrayList<>(part.size());
            for (int index : part) {
                int previous = plan.previousOnKey(index);
                if (stopped != null) {
                    skipAfterStop(index);
                } else if (perKeyFailures && previous >= 0 && !appliedBefore(round, previous)) {
                    skipOnKey(index, previous);
                } else {
                    runnable.add(index);
                }
            }
            return runnable;
        }

        /**
         * Whether {@code previous}, the write before another on its key, leaves that key alive: applied in an earlier
         * round, or, in this round's key runs (not sent yet), not itself skipped.
         */
        private boolean appliedBefore(Round round, int previous) {
            if (plan.roundOf(previous) == round.number()) {
                return !isDead(previous);
            }
            return applied(outcome.get(previous));
        }

        private void skipOnKey(int index, int previous) {
            markDead(index);
            outcome.set(RecordedIndexOutcome.skipped(
                    index,
                    previous,
                    "not run: the earlier write on the same key (index " + previous + ") is "
                            + outcome.get(previous).status()));
        }

        /** Sends the commands one by one: each is encoded when the one before it (and every resend of it) is done. */
        private void sendAll(Round round, WriteCommandEncoder<T>.Commands commands) {
            while (commands.hasNext()) {
                WriteCommand command = commands.next();
                if (sent(round, command) && command.ordered()) {
                    int failed = firstNotApplied(command);
                    if (failed >= 0) {
                        int index = command.index(failed);
                        stop(
                                index,
                                "the bulk keeps the caller's order and stopped after index " + index
                                        + " did not apply");
                    }
                }
            }
        }

        /**
         * Sends a round's key runs as ORDERED commands. The server runs an ORDERED command's statements in order and
         * stops at the first that does not apply (write_ops_exec.cpp; through mongos, batch_write_exec.cpp stops the
         * same way): the statements before it applied, none after it ran. Those after it are sent again, in the same
         * order, without the remaining writes of the failed write's key, which are SKIPPED as in rounds.
         */
        private void sendKeyRuns(Round round, List<Integer> keyRuns) {
            List<Integer> pending = keyRuns;
            while (!pending.isEmpty()) {
                WriteCommandEncoder<T>.Commands commands =
                        encoder.commands(plan, pending, true, commandOptions, statementCounts);
                pending = List.of();
                while (commands.hasNext()) {
                    WriteCommand command = commands.next();
                    if (!sent(round, command)) {
                        continue;
                    }
                    int failed = firstNotApplied(command);
                    if (failed < 0) {
                        continue;
                    }
                    markDead(command.index(failed));
                    List<Integer> rest = new ArrayList<>();
                    for (int position = failed + 1; position < command.size(); position++) {
                        rest.add(command.index(position));
                    }
                    rest.addAll(commands.remaining()); // the later commands' statements, in order
                    pending = new ArrayList<>(rest.size());
                    for (int index : rest) {
                        int previous = plan.previousOnKey(index);
                        if (previous >= 0 && isDead(previous)) {
                            skipOnKey(index, previous);
                        } else {
                            pending.add(index);
                        }
                    }
                    break;
                }
            }
        }

        /**
         * Sends {@code command} and records its outcome; after a stop, skips its writes instead.
         *
         * @return whether it was sent and the call goes on
         */
        private boolean sent(Round round, WriteCommand command) {
            if (stopped != null) {
                for (int position = 0; position < command.size(); position++) {
                    skipAfterStop(command.index(position));
                }
                return false;
            }
            String stop = recorder.record(command, send(round.number(), command));
            if (stop != null) {
                stop(command.index(0), stop);
                return false;
            }
            return true;
        }

        /** The position of the first statement of {@code command} that did not apply, or -1. */
        private int firstNotApplied(WriteCommand command) {
            for (int position = 0; position < command.size(); position++) {
                if (!applied(outcome.get(command.index(position)))) {
                    return position;
                }
            }
            return -1;
        }

        /** Marks a write of an ordered request as not applied for its key (failed, or skipped for its key). */
        private void markDead(int index) {
            if (dead == null) {
                dead = new boolean[plan.size()];
            }
            dead[index] = true;
        }

        private boolean isDead(int index) {
            return dead != null && dead[index];
        }

        /** One command as one server copy: its transaction number, the server deadline, the comment that names it. */
        private CopySender.Sent send(int roundNumber, WriteCommand command) {
            Long txnNumber =
                    command.retryable() ? sessions.current().getServerSession().advanceTransactionNumber() : null;
            String guardComment = "mwg:" + writeId + ":" + roundNumber + "." + (++commandNumber);
            BsonValue comment = sender.comment(commandOptions.comment(), guardComment);
            BsonDocument body = command.toCommand(txnNumber, maxTimeMs, writeConcern, comment);
            return sender.send(
                    sessions, body, txnNumber, idempotentMultiRetries, comment == null ? null : guardComment, outcome);
        }

        /** Applied as far as ORDERED goes: a write-concern error stops no driver bulk, so it stops no key either. */
        private boolean applied(IndexOutcome result) {
            return result.status() == WriteStatus.APPLIED || result.writeConcernFailed();
        }

        private void stop(int index, String why) {
            stopped = why;
            stoppedAt = index;
        }

        private void skipAfterStop(int index) {
            outcome.set(RecordedIndexOutcome.skipped(index, stoppedAt, "not sent: " + stopped));
        }

        @Override
        public void close() {
            sessions.close();
        }
    }

    private static byte[] longBytes(long value) {
        byte[] bytes = new byte[8];
        for (int i = 0; i < 8; i++) {
            bytes[i] = (byte) (value >>> (8 * i));
        }
        return bytes;
    }
}
