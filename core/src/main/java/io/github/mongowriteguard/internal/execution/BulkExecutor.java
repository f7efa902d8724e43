package io.github.mongowriteguard.internal.execution;

import com.mongodb.WriteConcern;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.WriteModel;
import com.mongodb.session.ClientSession;
import io.github.mongowriteguard.bulk.PlanMode;
import io.github.mongowriteguard.copies.StatementIds;
import io.github.mongowriteguard.exception.InvalidBulkException;
import io.github.mongowriteguard.exception.InvalidBulkException.Problem;
import io.github.mongowriteguard.internal.CallObserver;
import io.github.mongowriteguard.internal.ClientBinding;
import io.github.mongowriteguard.internal.ClientPort;
import io.github.mongowriteguard.internal.command.CommandOptions;
import io.github.mongowriteguard.internal.command.WriteCommandEncoder;
import io.github.mongowriteguard.internal.outcome.RecordedIndexOutcome;
import io.github.mongowriteguard.internal.outcome.RecordedWriteOutcome;
import io.github.mongowriteguard.internal.plan.BulkPlanner;
import io.github.mongowriteguard.internal.plan.KeyPlacement;
import io.github.mongowriteguard.internal.plan.PlanOptions;
import io.github.mongowriteguard.internal.plan.PlannedBulk;
import io.github.mongowriteguard.metrics.CallOutcome;
import io.github.mongowriteguard.metrics.GuardEventListener;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * Runs one guarded bulk, top to bottom: check and plan it (ids assigned, rounds), then for each round skip what the
 * caller's mode says must not run, encode the rest as write commands with the server deadline, send each as one
 * server copy ({@link CopySender}: its own transaction number, same-copy retries behind the overlap gate), and record
 * every statement's outcome ({@link OutcomeRecorder}); the rounds run in a {@link BulkRun}, whose ORDERED key runs on
 * several shards go side by side ({@link SideBySideKeyRuns}). A whole command that fails, or whose outcome becomes
 * unknown, stops the call, as it stops the driver's bulk. (The driver's own split: {@code MixedBulkWriteOperation} runs the
 * loop, {@code BulkWriteBatchCombiner} merges the replies.)
 *
 * @param <T> the collection's document class
 */
public final class BulkExecutor<T> {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(BulkExecutor.class);

    private final Transport.Target<T> collection;
    private final String namespace;
    private final Transport transport;
    private final GuardRuntime runtime;
    private final long maxTimeMs;
    private final BulkPlanner<T> planner;
    private final BulkRun.Tools<T> tools;

    public BulkExecutor(MongoCollection<T> collection, ClientPort access, GuardRuntime runtime, long maxTimeMs) {
        this(collection, access, runtime, maxTimeMs, new ClientBinding(null, 0, null));
    }

    /**
     * An executor for the collection's writes.
     *
     * @param collection the collection, with its codecs and concerns
     * @param access     the sessions and databases the commands go through
     * @param runtime    the guard's settings, ledger and listeners
     * @param maxTimeMs  the server deadline every command carries
     * @param binding    what {@code configure} read from the client's builder: whether writes carry a {@code txnNumber}
     */
    public BulkExecutor(
            MongoCollection<T> collection,
            ClientPort access,
            GuardRuntime runtime,
            long maxTimeMs,
            ClientBinding binding) {
        this(Transport.Target.of(collection), Transport.sync(access, collection, runtime), runtime, maxTimeMs, binding);
    }

    /**
     * An executor whose commands go through {@code transport}: the synchronous driver's ({@link Transport#sync}) or
     * another driver's.
     */
    BulkExecutor(
            Transport.Target<T> collection,
            Transport transport,
            GuardRuntime runtime,
            long maxTimeMs,
            ClientBinding binding) {
        this.collection = collection;
        this.namespace = collection.namespace().getFullName();
        this.transport = transport;
        this.runtime = runtime;
        this.maxTimeMs = maxTimeMs;
        this.planner = BulkPlanner.of(collection.documentClass(), collection.registry());
        this.tools = new BulkRun.Tools<>(
                new WriteCommandEncoder<>(
                        collection.namespace().getCollectionName(), collection.documentClass(), collection.registry()),
                new CopySender(
                        runtime,
                        transport.channel(),
                        transport.gate(),
                        namespace,
                        maxTimeMs,
                        binding,
                        transport.resume()),
                runtime,
                transport.sessions(),
                collection.registry(),
                maxTimeMs,
                binding);
    }

    /**
     * This executor over another transport of the same collection (the reactive guard's, with one call's subscriber
     * context): the same planner and encoder, a sender on {@code other}.
     */
    BulkExecutor<T> over(Transport other) {
        return new BulkExecutor<>(this, other);
    }

    private BulkExecutor(BulkExecutor<T> base, Transport transport) {
        this.collection = base.collection;
        this.namespace = base.namespace;
        this.transport = transport;
        this.runtime = base.runtime;
        this.maxTimeMs = base.maxTimeMs;
        this.planner = base.planner;
        BulkRun.Tools<T> tools = base.tools;
        this.tools = new BulkRun.Tools<>(
                tools.encoder(),
                tools.sender().over(transport),
                tools.runtime(),
                transport.sessions(),
                tools.registry(),
                tools.maxTimeMs(),
                tools.binding());
    }

    /** How this executor's commands reach the server. */
    Transport transport() {
        return transport;
    }

    /** The collection's namespace, document class, codecs and write concern. */
    Transport.Target<T> target() {
        return collection;
    }

    /** What {@code configure} read from the client's builder, and what the guard learned of its server. */
    ClientBinding binding() {
        return tools.binding();
    }

    /** The server deadline every command carries. */
    public long maxTimeMs() {
        return maxTimeMs;
    }

    public PlannedBulk plan(List<? extends WriteModel<? extends T>> models, BulkWriteOptions options) {
        return plan(models, options, new AtomicReference<>());
    }

    /** @param placement set to the placement the planner read, if it read one */
    private PlannedBulk plan(
            List<? extends WriteModel<? extends T>> models,
            BulkWriteOptions options,
            AtomicReference<KeyPlacement> placement) {
        PlanOptions planOptions = PlanOptions.builder(
                        PlanOptions.from(options, runtime.settings().strictOrdered()))
                .lastWriteWins(runtime.settings().lastWriteWins())
                // read only if an ordered bulk repeats a key: how many key runs share one ORDERED command, and which
                // shard each run's command goes to when they go side by side
                .keyPlacement(() -> {
                    KeyPlacement read = runtime.keyPlacements()
                            .forCollection(transport.catalog(), collection.namespace(), maxTimeMs);
                    placement.set(read);
                    return read;
                })
                .build();
        if (SingleDocumentRules.needed(models)) {
            planOptions = PlanOptions.builder(planOptions)
                    .singleDocumentById(runtime.singleDocumentRules()
                            .forCollection(transport.catalog(), collection.namespace(), maxTimeMs))
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
        return Continuations.now(executeAsync(call, models));
    }

    /**
     * As {@link #execute}, driven as the transport drives it: over the synchronous driver complete on return, over the
     * reactive one completed in the last command's answer, with no thread held while an answer or a backoff is pending
     * (bad input is refused before anything is sent, thrown or as a failed future).
     */
    public CompletableFuture<WriteOutcome<T>> executeAsync(
            GuardedCall call, List<? extends WriteModel<? extends T>> models) {
        return runtime.observer()
                .observeAsync(
                        namespace,
                        call.operation(),
                        sink -> run(
                                        call.session(),
                                        models,
                                        call.options(),
                                        call.operation(),
                                        call.idempotentMultiRetries(),
                                        call.statementCounts(),
                                        call.statementIds(),
                                        sink)
                                .thenApply(result -> {
                                    DriverExceptions.apply(
                                            call.throwPolicy(), result, collection.namespace(), maxTimeMs);
                                    return result;
                                }));
    }

    private CompletableFuture<WriteOutcome<T>> run(
            @Nullable ClientSession session,
            List<? extends WriteModel<? extends T>> models,
            BulkWriteOptions options,
            String operation,
            boolean idempotentMultiRetries,
            boolean statementCounts,
            @Nullable StatementIds statementIds,
            CallObserver.OutcomeSink sink) {
        long started = System.nanoTime();
        if (statementIds != null) {
            checkIdsBeforePlanning(models, statementIds);
        }
        WriteConcern writeConcern = requireAcknowledged(collection.writeConcern());
        if (idempotentMultiRetries) {
            MultiRetryOptIn.check(models, collection.documentClass(), collection.registry());
        }
        CommandOptions commandOptions = CommandOptions.from(options, collection.documentClass(), collection.registry());
        AtomicReference<KeyPlacement> placement = new AtomicReference<>();
        PlannedBulk plan = plan(models, options, placement);
        if (statementIds != null) {
            checkIdsFitPlan(plan);
        }
        if (!plan.isEmpty()) {
            announce(plan, operation, idempotentMultiRetries, sink);
            if (options.isOrdered() && plan.mode() == PlanMode.UNORDERED_ROUNDS && runtime.listening()) {
                runtime.events()
                        .orderedBulkRegrouped(new GuardEventListener.OrderedBulkRegrouped(namespace, operation, plan));
            }
        }
        RecordedWriteOutcome.Builder<T> outcome = new RecordedWriteOutcome.Builder<>(models);
        if (plan.hasSuperseded()) {
            recordSuperseded(plan, outcome);
        }
        if (plan.isEmpty()) {
            return CompletableFuture.completedFuture(finish(plan, outcome, operation, started, sink));
        }
        {
            BulkRun.Call call = new BulkRun.Call(
                    plan,
                    options.isOrdered() && plan.mode() == PlanMode.UNORDERED_ROUNDS,
                    writeConcern.isServerDefault() ? null : writeConcern.asDocument(),
                    commandOptions,
                    idempotentMultiRetries,
                    statementCounts,
                    session == null,
                    placement.get(),
                    statementIds);
            BulkRun<T> run = new BulkRun<>(
                    tools,
                    statementIds != null
                            ? Sessions.chosen(transport.sessions(), statementIds)
                            : session == null ? Sessions.own(transport.sessions()) : Sessions.callers(session),
                    call,
                    outcome);
            CompletableFuture<Void> rounds;
            try {
                rounds = run.rounds(plan.rounds());
            } catch (RuntimeException | Error e) {
                run.close();
                throw e;
            }
            return rounds.whenComplete((done, error) -> run.close()).thenApply(done -> {
                Settle.mark(outcome, plan, plan.size());
                return finish(plan, outcome, operation, started, sink);
            });
        }
    }

    /** The outcome built, reported to the observation and the listeners. */
    private WriteOutcome<T> finish(
            PlannedBulk plan,
            RecordedWriteOutcome.Builder<T> outcome,
            String operation,
            long started,
            CallObserver.OutcomeSink sink) {
        WriteOutcome<T> result = outcome.build();
        CallOutcome callOutcome = callOutcome(result);
        sink.outcome(callOutcome);
        if (runtime.listening()) {
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
        }
        return result;
    }

    /**
     * Refuses caller-chosen statement ids that cannot name the bulk's writes, before anything is planned or sent: one
     * id per write, and a client whose writes carry a {@code txnNumber}.
     */
    private void checkIdsBeforePlanning(List<?> models, StatementIds ids) {
        if (models != null && ids.size() != models.size()) {
            throw new InvalidBulkException(
                    -1,
                    Problem.INVALID_STATEMENT_IDS,
                    "the StatementIds hold " + ids.size() + " statement ids for " + models.size() + " writes: give"
                            + " exactly one per write, in the bulk's order. Nothing was sent.");
        }
        if (!tools.binding().sendsTxnNumber()) {
            throw new InvalidBulkException(
                    -1,
                    Problem.INVALID_STATEMENT_IDS,
                    "statement ids need retryable writes, and this client sends no txnNumber ("
                            + tools.binding().noTxnNumberReason()
                            + "): use a replica set or a sharded cluster with retryWrites=true. Nothing was sent.");
        }
    }

    /**
     * Refuses a plan in which a write is not exactly one retryable statement: a multi-document write (the server
     * keeps no statement record of it) or a write left out under last-write-wins (its id would name nothing).
     */
    private static void checkIdsFitPlan(PlannedBulk plan) {
        int multi = plan.firstMultiDocument();
        if (multi >= 0) {
            throw new InvalidBulkException(
                    multi,
                    Problem.INVALID_STATEMENT_IDS,
                    "the write at index " + multi + " is a multi-document write, which the server runs without a"
                            + " statement record: its statement id could not keep it from applying twice; send it"
                            + " without StatementIds (or as single-document writes). Nothing was sent.");
        }
        if (plan.hasSuperseded()) {
            for (int index = 0; index < plan.size(); index++) {
                if (plan.supersededBy(index) >= 0) {
                    throw new InvalidBulkException(
                            index,
                            Problem.INVALID_STATEMENT_IDS,
                            "the write at index " + index + " would be left out under lastWriteWins, so its"
                                    + " statement id would name no statement; with StatementIds every write is sent"
                                    + " (turn lastWriteWins off for this call). Nothing was sent.");
                }
            }
        }
    }

    /** Writes left out under last-write-wins: SUPERSEDED, naming the write that decides their document. */
    private static void recordSuperseded(PlannedBulk plan, RecordedWriteOutcome.Builder<?> outcome) {
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
    private void announce(
            PlannedBulk plan, String operation, boolean idempotentMultiRetries, CallObserver.OutcomeSink sink) {
        try {
            runtime.planWarnings().note(namespace, plan, idempotentMultiRetries);
        } catch (RuntimeException e) {
            log.warn("mongo-write-guard: could not describe the plan of a bulk on {}; the write goes on", namespace, e);
        }
        if (runtime.listening()) {
            int first = plan.mode() == PlanMode.PRESERVE_ORDER ? plan.firstUnkeyed() : plan.firstMultiDocument();
            runtime.events()
                    .planChosen(new GuardEventListener.PlanChosen(
                            namespace,
                            operation,
                            plan.mode(),
                            plan.reasonTag(),
                            plan.size(),
                            plan.mode() == PlanMode.STRICT_ORDERED ? -1 : first));
        }
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
}
