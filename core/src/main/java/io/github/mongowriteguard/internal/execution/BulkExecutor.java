package io.github.mongowriteguard.internal.execution;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.codecs.Codec;
import org.bson.codecs.CollectibleCodec;

import com.mongodb.ClientSessionOptions;
import com.mongodb.MongoException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.bulk.BulkWriteInsert;
import com.mongodb.bulk.BulkWriteUpsert;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.WriteModel;

import io.github.mongowriteguard.MongoAccess;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.bulk.BulkPlan;
import io.github.mongowriteguard.bulk.BulkPlanner;
import io.github.mongowriteguard.bulk.PlanOptions;
import io.github.mongowriteguard.bulk.Round;
import io.github.mongowriteguard.bulk.WriteDecision;
import io.github.mongowriteguard.internal.GuardCommandListener;
import io.github.mongowriteguard.internal.command.CommandReply;
import io.github.mongowriteguard.internal.command.WriteCommand;
import io.github.mongowriteguard.internal.command.WriteCommandEncoder;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;

/**
 * Runs one guarded bulk, top to bottom: check and plan it (ids assigned, superseded writes dropped, rounds), then
 * for each round skip what depends on a write that did not apply, encode the rest as write commands with the server
 * deadline, send each in an explicit session with its own transaction number, resend once as the same copy after a
 * network error or a retryable error, and classify every statement.
 *
 * @param <T> the collection's document class
 */
public final class BulkExecutor<T> {
    /** Error codes after which the same write may succeed when sent again (transient), besides labelled ones. */
    private static final Set<Integer> TRANSIENT_CODES = Set.of(6, 7, 24, 50, 89, 91, 112, 189, 262, 9001, 10107,
        11600, 11601, 11602, 13388, 13435, 13436);
    private static final int DUPLICATE_KEY = 11000;
    private static final int MAX_TIME_MS_EXPIRED = 50;

    private final MongoCollection<T> collection;
    private final MongoDatabase database;
    private final MongoAccess sessions;
    private final WriteGuardSettings settings;
    private final long maxTimeMs;
    private final GuardCommandListener listener;
    private final BulkPlanner<T> planner;
    private final WriteCommandEncoder<T> encoder;

    public BulkExecutor(MongoCollection<T> collection, MongoDatabase database, MongoAccess sessions,
                        WriteGuardSettings settings, long maxTimeMs, GuardCommandListener listener) {
        this.collection = collection;
        this.database = database;
        this.sessions = sessions;
        this.settings = settings;
        this.maxTimeMs = maxTimeMs;
        this.listener = listener;
        this.planner = BulkPlanner.forCollection(collection);
        this.encoder = new WriteCommandEncoder<>(collection.getNamespace().getCollectionName(),
            collection.getDocumentClass(), collection.getCodecRegistry());
    }

    /** The server deadline every command carries. */
    public long maxTimeMs() {
        return maxTimeMs;
    }

    public BulkPlan plan(List<? extends WriteModel<? extends T>> models, BulkWriteOptions options) {
        return planner.plan(models, PlanOptions.from(options, settings));
    }

    /**
     * Runs the bulk. Throws only for bad input (before anything is sent); every write failure is in the outcome.
     */
    public WriteOutcome<T> execute(List<? extends WriteModel<? extends T>> models, BulkWriteOptions options) {
        WriteConcern writeConcern = collection.getWriteConcern();
        if (!writeConcern.isAcknowledged()) {
            throw new IllegalArgumentException("the collection's write concern " + writeConcern
                + " is unacknowledged: the guard cannot know the outcome of a write nobody confirms; use w:1 or"
                + " w:\"majority\" (collection.withWriteConcern(WriteConcern.W1)). Nothing was sent.");
        }
        boolean[] idByGuard = insertsWithoutId(models);
        BulkPlan plan = plan(models, options);
        WriteOutcome.Builder<T> outcome = new WriteOutcome.Builder<>(models);
        plan.superseded().forEach((index, by) -> outcome.set(IndexOutcome.superseded(index, by)));
        if (plan.isEmpty() || plan.rounds().isEmpty()) {
            return outcome.build();
        }
        Run run = new Run(models, plan, idByGuard, outcome, writeConcern.isServerDefault() ? null : writeConcern.asDocument());
        try (ClientSession session = sessions.startSession(ClientSessionOptions.builder().causallyConsistent(false).build())) {
            for (Round round : plan.rounds()) {
                run.round(session, round);
            }
        }
        return outcome.build();
    }

    /** The state of one bulk while it runs. */
    private final class Run {
        final List<? extends WriteModel<? extends T>> models;
        final BulkPlan plan;
        final boolean[] idByGuard;
        final WriteOutcome.Builder<T> outcome;
        final BsonDocument writeConcern;
        final String writeId = HexFormat.of().formatHex(longBytes(ThreadLocalRandom.current().nextLong()));
        int commandNumber;
        /** In an ordered round: the index whose failure stopped the round, or -1. */
        int stoppedAt = -1;

        Run(List<? extends WriteModel<? extends T>> models, BulkPlan plan, boolean[] idByGuard,
            WriteOutcome.Builder<T> outcome, BsonDocument writeConcern) {
            this.models = models;
            this.plan = plan;
            this.idByGuard = idByGuard;
            this.outcome = outcome;
            this.writeConcern = writeConcern;
        }

        void round(ClientSession session, Round round) {
            List<Integer> runnable = new ArrayList<>();
            for (int index : round.indices()) {
                int previous = plan.previousOnKey(index);
                if (stoppedAt >= 0) {
                    outcome.set(IndexOutcome.skipped(index, stoppedAt,
                        "not run: the bulk keeps the caller's order and stopped after index " + stoppedAt + " did not apply"));
                } else if (previous >= 0 && plan.roundOf(previous) < round.number()
                    && outcome.get(previous).status() != WriteStatus.APPLIED) {
                    // Only a previous write of an earlier round has an outcome yet; one in this (ordered) round is
                    // covered by the command's own ordered stop.
                    outcome.set(IndexOutcome.skipped(index, previous, "not run: the earlier write on the same key (index "
                        + previous + ") is " + outcome.get(previous).status()));
                } else {
                    runnable.add(index);
                }
            }
            if (runnable.isEmpty()) {
                return;
            }
            outcome.round();
            for (WriteCommand command : encoder.encode(models, runnable, round.isOrdered())) {
                if (stoppedAt >= 0) {
                    for (int position = 0; position < command.size(); position++) {
                        outcome.set(IndexOutcome.skipped(command.index(position), stoppedAt,
                            "not run: the bulk keeps the caller's order and stopped after index " + stoppedAt + " did not apply"));
                    }
                    continue;
                }
                send(session, round.number(), command);
                if (command.ordered()) {
                    for (int position = 0; position < command.size(); position++) {
                        int index = command.index(position);
                        if (outcome.get(index).status() != WriteStatus.APPLIED) {
                            stoppedAt = index;
                            break;
                        }
                    }
                }
            }
        }

        /** Sends one command; a retryable one is resent once as the same copy (same lsid and txnNumber). */
        void send(ClientSession session, int roundNumber, WriteCommand command) {
            Long txnNumber = command.retryable() ? session.getServerSession().advanceTransactionNumber() : null;
            BsonValue comment = listener.maxWireVersion() >= 9
                ? new BsonString("mwg:" + writeId + ":" + roundNumber + "." + (++commandNumber)) : null;
            BsonDocument body = command.toCommand(txnNumber, maxTimeMs, writeConcern, comment);
            outcome.command();
            boolean clientGaveUp = false;
            MongoException last = null;
            int maxSends = command.retryable() ? 2 : 1;
            for (int send = 1; send <= maxSends; send++) {
                outcome.send();
                try {
                    BsonDocument reply = database.runCommand(session, body, ReadPreference.primary(), BsonDocument.class);
                    classify(command, CommandReply.of(reply), send > 1);
                    return;
                } catch (MongoSocketException | MongoTimeoutException e) {
                    // A socket timeout is not a cancellation: the server may still be applying this copy.
                    clientGaveUp |= e instanceof MongoSocketException;
                    last = e;
                } catch (MongoException e) {
                    // Server errors; MaxTimeMSExpired arrives as MongoExecutionTimeoutException, not a server exception.
                    last = e;
                    boolean retryable = command.retryable() && e.hasErrorLabel("RetryableWriteError");
                    if (retryable && send < maxSends) {
                        continue;
                    }
                    if (clientGaveUp) {
                        unknown(command, "an earlier send of this copy timed out on the client and the resend failed with "
                            + e.getCode() + ": the first send may still be running on the server");
                    } else {
                        failAll(command, e.getCode(), describe(e), isTransient(e.getCode(), command));
                    }
                    return;
                }
            }
            if (clientGaveUp) {
                unknown(command, command.retryable()
                    ? "the client stopped waiting (" + last.getClass().getSimpleName() + "): the server may still be applying it"
                    : "the client stopped waiting (" + last.getClass().getSimpleName() + ") on a multi-document write:"
                        + " an unknown number of documents may have been changed; it is never retried");
            } else {
                failAll(command, last.getCode(), describe(last), command.retryable());
            }
        }

        void classify(WriteCommand command, CommandReply reply, boolean resent) {
            int firstError = reply.firstErrorPosition();
            int applied = 0;
            for (int position = 0; position < command.size(); position++) {
                int index = command.index(position);
                CommandReply.StatementError error = reply.error(position);
                if (error != null) {
                    if (error.code() == DUPLICATE_KEY && command.kind() == WriteCommand.Kind.INSERT && idByGuard[index] && resent) {
                        // The guard gave this insert its _id; only an earlier copy of this very write can have used it.
                        outcome.set(IndexOutcome.applied(index, "applied by an earlier copy (duplicate key on the _id the guard assigned)"));
                        continue;
                    }
                    outcome.set(IndexOutcome.failed(index, error.code(), error.message(), isTransient(error.code(), command)));
                } else if (command.ordered() && firstError >= 0 && position > firstError) {
                    outcome.set(IndexOutcome.skipped(index, command.index(firstError),
                        "not run: the bulk keeps the caller's order and stopped after index " + command.index(firstError) + " failed"));
                } else {
                    outcome.set(IndexOutcome.applied(index));
                    applied++;
                    record(command, position, index, reply);
                }
            }
            switch (command.kind()) {
                case INSERT:
                    outcome.counts(reply.n(), 0, 0, 0);
                    break;
                case UPDATE:
                    outcome.counts(0, reply.n() - reply.upsertedCount(), reply.nModified(), 0);
                    break;
                default:
                    outcome.counts(0, 0, 0, reply.n());
                    break;
            }
            if (reply.writeConcernError() != null) {
                outcome.writeConcernError(reply.writeConcernError());
            }
        }

        private void record(WriteCommand command, int position, int index, CommandReply reply) {
            if (command.kind() == WriteCommand.Kind.INSERT) {
                WriteDecision decision = plan.decision(index);
                decision.id().ifPresent(id -> outcome.insert(new BulkWriteInsert(index, id)));
            } else if (reply.upsertedId(position) != null) {
                outcome.upsert(new BulkWriteUpsert(index, reply.upsertedId(position)));
            }
        }

        void failAll(WriteCommand command, int code, String message, boolean retrySafe) {
            for (int position = 0; position < command.size(); position++) {
                outcome.set(IndexOutcome.failed(command.index(position), code, message, retrySafe));
            }
        }

        void unknown(WriteCommand command, String reason) {
            for (int position = 0; position < command.size(); position++) {
                outcome.set(IndexOutcome.unknown(command.index(position), reason, command.retryable()));
            }
        }
    }

    private static boolean isTransient(int code, WriteCommand command) {
        return command.retryable() && TRANSIENT_CODES.contains(code);
    }

    private static String describe(MongoException e) {
        if (e.getCode() == MAX_TIME_MS_EXPIRED) {
            return "the server stopped this write at its deadline (MaxTimeMSExpired)";
        }
        return e.getClass().getSimpleName() + " " + e.getCode() + ": " + e.getMessage();
    }

    /** Which inserts have no {@code _id} before planning: the guard assigns theirs. */
    @SuppressWarnings("unchecked")
    private boolean[] insertsWithoutId(List<? extends WriteModel<? extends T>> models) {
        boolean[] withoutId = new boolean[models == null ? 0 : models.size()];
        if (models == null) {
            return withoutId;
        }
        Codec<T> codec = collection.getCodecRegistry().get(collection.getDocumentClass());
        if (!(codec instanceof CollectibleCodec)) {
            return withoutId;
        }
        CollectibleCodec<T> collectible = (CollectibleCodec<T>) codec;
        int index = 0;
        for (WriteModel<? extends T> model : models) {
            if (model instanceof InsertOneModel && ((InsertOneModel<? extends T>) model).getDocument() != null) {
                withoutId[index] = !collectible.documentHasId(((InsertOneModel<T>) model).getDocument());
            }
            index++;
        }
        return withoutId;
    }

    private static byte[] longBytes(long value) {
        byte[] bytes = new byte[8];
        for (int i = 0; i < 8; i++) {
            bytes[i] = (byte) (value >>> (8 * i));
        }
        return bytes;
    }
}
