package io.github.mongowriteguard.internal.execution;

import com.mongodb.MongoNamespace;
import com.mongodb.bulk.BulkWriteInsert;
import com.mongodb.bulk.BulkWriteUpsert;
import com.mongodb.client.ClientSession;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.WriteModel;
import com.mongodb.client.model.bulk.ClientBulkWriteOptions;
import com.mongodb.client.model.bulk.ClientNamespacedWriteModel;
import com.mongodb.internal.client.model.bulk.ConcreteClientBulkWriteOptions;
import io.github.mongowriteguard.bulk.PlanMode;
import io.github.mongowriteguard.exception.InvalidBulkException;
import io.github.mongowriteguard.exception.InvalidBulkException.Problem;
import io.github.mongowriteguard.internal.CallObserver;
import io.github.mongowriteguard.internal.outcome.RecordedIndexOutcome;
import io.github.mongowriteguard.internal.outcome.RecordedWriteOutcome;
import io.github.mongowriteguard.internal.plan.PlannedBulk;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import org.bson.BsonDocument;
import org.bson.codecs.configuration.CodecRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Runs a client-level bulk (the driver's {@code MongoCluster.bulkWrite}, several namespaces in one call) with the
 * collection-level machinery: keys are (namespace, {@code _id}), so the writes of each namespace are planned and run
 * by that namespace's {@link BulkExecutor} exactly as a collection-level bulk of those writes (rounds, per-key order,
 * per-key failures for an ORDERED call of keyed writes). Namespaces share no key, so running them one after the
 * other gives what interleaved rounds would. An ORDERED call with an unkeyed write anywhere (or with
 * {@code strictOrdered}) keeps the caller's order across namespaces: each run of consecutive writes on one namespace
 * is the driver's ORDERED bulk, and the first write that does not apply stops the call. A failed whole command, an
 * unknown outcome or a write no server received stops the call in every mode; later writes are SKIPPED.
 * Everything is checked and planned before anything is sent.
 */
public final class ClientBulkExecutor {
    /**
     * The caller's method, on the client-level observation and on each namespace's: {@value}.
     */
    private static final String OPERATION = "clientBulkWrite";

    /**
     * The client-level observation's namespace: {@value}, where the driver runs the call (driver-core
     * {@code ClientBulkWriteOperation.getNamespace()}: {@code admin.$cmd}, "The bulkWrite command is executed on the
     * admin database"; the driver's own tracing, 5.7 and later, names that operation {@code bulkWrite admin} with
     * {@code db.namespace} {@code admin}). A collection's namespace is always {@code db.collection}, so it cannot be
     * taken for one.
     */
    static final String CLIENT_NAMESPACE = "admin";

    /** What the messages of the exceptions the call throws say it wrote to. */
    private static final String NAMESPACES = "the namespaces of a client bulk";

    private final CodecRegistry registry;
    /** The executor of a namespace; {@code true} for one whose ORDERED bulks are the caller's order (strict). */
    private final BiFunction<MongoNamespace, Boolean, BulkExecutor<BsonDocument>> executors;

    private final boolean strictOrdered;
    private final long maxTimeMs;
    private final CallObserver observer;

    /**
     * @param registry      the client's codecs, to encode the caller's documents
     * @param executors     the executor of a namespace, strict or not
     * @param strictOrdered the guard's {@code strictOrdered}
     * @param maxTimeMs     the server deadline of every command
     * @param observer      the guard's call observer: one observation per call, around its namespaces' own
     */
    public ClientBulkExecutor(
            CodecRegistry registry,
            BiFunction<MongoNamespace, Boolean, BulkExecutor<BsonDocument>> executors,
            boolean strictOrdered,
            long maxTimeMs,
            CallObserver observer) {
        this.registry = registry;
        this.executors = executors;
        this.strictOrdered = strictOrdered;
        this.maxTimeMs = maxTimeMs;
        this.observer = observer;
    }

    /**
     * The description of a client-level call: its operation, session, the collection-level options each namespace's
     * commands carry ({@link #options}), {@code verboseResults} as per-statement counts, and what the call throws.
     *
     * @param session     the caller's session, or null
     * @param options     the caller's options
     * @param throwPolicy {@link ThrowPolicy#CLIENT_BULK} for {@code bulkWrite}, {@link ThrowPolicy#OUTCOME_ONLY} for
     *                    the guard's {@code execute}
     * @return the call
     * @throws IllegalArgumentException for options of a class the guard cannot read, before anything is sent
     */
    public static GuardedCall call(
            @Nullable ClientSession session, ClientBulkWriteOptions options, ThrowPolicy throwPolicy) {
        return GuardedCall.of(OPERATION, session, options(options), throwPolicy).statementCounts(verbose(options));
    }

    /**
     * The collection-level options the driver's client bulk sends on every command: {@code ordered},
     * {@code bypassDocumentValidation}, {@code comment}, {@code let}. ({@code verboseResults} is read with
     * {@link #verbose(ClientBulkWriteOptions)}.)
     *
     * @throws IllegalArgumentException for options of a class the guard cannot read, before anything is sent
     */
    static BulkWriteOptions options(ClientBulkWriteOptions options) {
        ConcreteClientBulkWriteOptions given = concrete(options);
        BulkWriteOptions converted = new BulkWriteOptions().ordered(given.isOrdered());
        given.isBypassDocumentValidation().ifPresent(converted::bypassDocumentValidation);
        given.getComment().ifPresent(converted::comment);
        given.getLet().ifPresent(converted::let);
        return converted;
    }

    /**
     * Whether the caller asked for {@code verboseResults(true)}: then every update, replace and delete is sent in a
     * command of its own, so that command's {@code n} and {@code nModified} are the write's own counts.
     */
    static boolean verbose(ClientBulkWriteOptions options) {
        return concrete(options).isVerboseResults();
    }

    private static ConcreteClientBulkWriteOptions concrete(ClientBulkWriteOptions options) {
        if (!(options instanceof ConcreteClientBulkWriteOptions given)) {
            throw new InvalidBulkException(
                    -1,
                    Problem.UNSUPPORTED_OPTIONS,
                    "unknown ClientBulkWriteOptions class "
                            + (options == null ? "null" : options.getClass().getName())
                            + ": use ClientBulkWriteOptions.clientBulkWriteOptions(). Nothing was sent.");
        }
        return given;
    }

    /**
     * Runs the call inside one client-level observation (namespace {@value #CLIENT_NAMESPACE}, inside which each
     * namespace's writes have their own, as a collection-level bulk), then throws what {@code call}'s
     * {@link ThrowPolicy} says for the outcome ({@link DriverExceptions#apply}), inside the observation too, which
     * records it; as {@link BulkExecutor#execute} does for a collection. With {@link ThrowPolicy#OUTCOME_ONLY} it throws
     * only for bad input (before anything is sent). Every index of the caller's list has an outcome.
     *
     * @param call   the call ({@link #call}); its {@code statementCounts} sends every update, replace and delete in a
     *               command of its own, so that each applied one has its own counts: {@code verboseResults}
     * @param models the caller's writes, each with its namespace
     * @return every write's outcome, at the indices of the caller's list
     */
    public WriteOutcome<BsonDocument> execute(GuardedCall call, List<? extends ClientNamespacedWriteModel> models) {
        return observer.observe(CLIENT_NAMESPACE, call.operation(), sink -> {
            WriteOutcome<BsonDocument> outcome = run(call, models);
            sink.outcome(BulkExecutor.callOutcome(outcome));
            DriverExceptions.apply(call.throwPolicy(), outcome, NAMESPACES, maxTimeMs, call.statementCounts());
            return outcome;
        });
    }

    private WriteOutcome<BsonDocument> run(GuardedCall call, List<? extends ClientNamespacedWriteModel> models) {
        com.mongodb.session.@Nullable ClientSession session = call.session();
        BulkWriteOptions options = call.options();
        boolean statementCounts = call.statementCounts();
        List<ClientModels.NamespacedModel> converted = ClientModels.convert(models, registry);
        List<WriteModel<BsonDocument>> all = new ArrayList<>(converted.size());
        Map<MongoNamespace, List<Integer>> byNamespace = new LinkedHashMap<>();
        for (int index = 0; index < converted.size(); index++) {
            all.add(converted.get(index).model());
            byNamespace
                    .computeIfAbsent(converted.get(index).namespace(), ns -> new ArrayList<>())
                    .add(index);
        }
        // Check and plan everything first: a refused write anywhere means nothing is sent anywhere.
        boolean callersOrder = options.isOrdered() && strictOrdered;
        for (Map.Entry<MongoNamespace, List<Integer>> entry : byNamespace.entrySet()) {
            PlannedBulk plan;
            try {
                plan = executors.apply(entry.getKey(), false).plan(models(all, entry.getValue()), options);
            } catch (InvalidBulkException e) {
                int callerIndex = e.index() < 0 ? -1 : entry.getValue().get(e.index());
                throw new InvalidBulkException(
                        callerIndex,
                        e.problem(),
                        "at index " + callerIndex + " of the client bulk (" + entry.getKey() + "): " + e.getMessage());
            }
            callersOrder |= options.isOrdered() && plan.mode() != PlanMode.UNORDERED_ROUNDS;
        }
        RecordedWriteOutcome.Builder<BsonDocument> outcome = new RecordedWriteOutcome.Builder<>(all);
        Stop stop = new Stop();
        if (callersOrder) {
            int start = 0;
            while (start < converted.size()) {
                MongoNamespace namespace = converted.get(start).namespace();
                List<Integer> run = new ArrayList<>();
                for (int index = start;
                        index < converted.size()
                                && converted.get(index).namespace().equals(namespace);
                        index++) {
                    run.add(index);
                }
                start += run.size();
                runPart(session, namespace, true, all, run, options, statementCounts, outcome, stop);
                if (stop.why == null) {
                    for (int index : run) {
                        if (outcome.get(index).status() != WriteStatus.APPLIED) {
                            stop.at(
                                    index,
                                    "the call keeps the caller's order and stopped after index " + index
                                            + " did not apply");
                            break;
                        }
                    }
                }
            }
        } else {
            for (Map.Entry<MongoNamespace, List<Integer>> entry : byNamespace.entrySet()) {
                runPart(session, entry.getKey(), false, all, entry.getValue(), options, statementCounts, outcome, stop);
            }
        }
        return outcome.build();
    }

    /** Why nothing more is sent, and because of which index. */
    private static final class Stop {
        @Nullable
        String why;

        int at = -1;

        void at(int index, String reason) {
            why = reason;
            at = index;
        }
    }

    private void runPart(
            com.mongodb.session.@Nullable ClientSession session,
            MongoNamespace namespace,
            boolean strict,
            List<WriteModel<BsonDocument>> all,
            List<Integer> indices,
            BulkWriteOptions options,
            boolean statementCounts,
            RecordedWriteOutcome.Builder<BsonDocument> outcome,
            Stop stop) {
        if (stop.why != null) {
            for (int index : indices) {
                outcome.set(RecordedIndexOutcome.skipped(index, stop.at, "not sent: " + stop.why));
            }
            return;
        }
        WriteOutcome<BsonDocument> part = executors
                .apply(namespace, strict)
                .execute(
                        GuardedCall.of(OPERATION, session, options, ThrowPolicy.OUTCOME_ONLY)
                                .statementCounts(statementCounts),
                        models(all, indices));
        merge(part, indices, outcome);
        for (IndexOutcome result : part.outcomes()) {
            boolean notSent = result.status() == WriteStatus.FAILED && !result.wasSent();
            if (part.commandError() != null
                    || result.status() == WriteStatus.UNKNOWN
                    || notSent
                    || !part.stillRunning().isEmpty()) {
                int at = indices.get(result.index());
                stop.at(
                        at,
                        "the writes on " + namespace + " stopped at index " + at + " (" + result.status()
                                + (result.message().isEmpty() ? "" : ": " + result.message()) + ")");
                return;
            }
        }
    }

    private static List<WriteModel<BsonDocument>> models(List<WriteModel<BsonDocument>> all, List<Integer> indices) {
        List<WriteModel<BsonDocument>> part = new ArrayList<>(indices.size());
        indices.forEach(index -> part.add(all.get(index)));
        return part;
    }

    private static final String NOT_SETTLEABLE_HERE = "cannot be settled: a client-level bulk's outcome does not keep"
            + " its namespaces' commands (settle is available for a collection's bulk, GuardedCollection.execute)";

    /** A namespace's outcome at the caller's indices. */
    private static void merge(
            WriteOutcome<BsonDocument> part,
            List<Integer> indices,
            RecordedWriteOutcome.Builder<BsonDocument> outcome) {
        for (IndexOutcome result : part.outcomes()) {
            IndexOutcome atCallers = RecordedIndexOutcome.atIndex(
                    result,
                    indices.get(result.index()),
                    result.relatedIndex() >= 0 ? indices.get(result.relatedIndex()) : -1);
            outcome.set(
                    result.settleable()
                            ? RecordedIndexOutcome.settleable(atCallers, false, NOT_SETTLEABLE_HERE)
                            : atCallers);
        }
        // The client-level outcome keeps no namespace's commands: their sessions are let go at once.
        if (part instanceof RecordedWriteOutcome<BsonDocument> recorded) {
            recorded.held().forEach(entry -> entry.release(NOT_SETTLEABLE_HERE));
        }
        outcome.counts(part.insertedCount(), part.matchedCount(), part.modifiedCount(), part.deletedCount());
        part.upserts().forEach(u -> outcome.upsert(new BulkWriteUpsert(indices.get(u.getIndex()), u.getId())));
        part.inserts().forEach(i -> outcome.insert(new BulkWriteInsert(indices.get(i.getIndex()), i.getId())));
        for (int i = 0; i < indices.size(); i++) {
            WriteOutcome.StatementCounts counts = part.statementCounts(i);
            if (counts != null) {
                outcome.statementCounts(indices.get(i), counts);
            }
        }
        if (part.writeConcernError() != null) {
            outcome.writeConcernError(part.writeConcernError());
        }
        part.copies().forEach(outcome::copy);
        part.stillRunning().forEach(outcome::stillRunning);
        if (part.commandError() != null) {
            outcome.commandError(part.commandError());
        }
        outcome.server(part.serverAddress());
        outcome.errorLabels(part.errorLabels());
        for (int i = 0; i < part.rounds(); i++) {
            outcome.round();
        }
        for (int i = 0; i < part.commands(); i++) {
            outcome.command();
        }
        for (int i = 0; i < part.sends(); i++) {
            outcome.send();
        }
    }
}
