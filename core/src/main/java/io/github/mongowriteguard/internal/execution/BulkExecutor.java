package io.github.mongowriteguard.internal.execution;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.jspecify.annotations.Nullable;

import com.mongodb.ClientSessionOptions;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoExecutionTimeoutException;
import com.mongodb.MongoServerException;
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
import com.mongodb.client.model.WriteModel;

import io.github.mongowriteguard.MongoAccess;
import io.github.mongowriteguard.bulk.BulkPlan;
import io.github.mongowriteguard.bulk.BulkPlanner;
import io.github.mongowriteguard.bulk.PlanMode;
import io.github.mongowriteguard.bulk.PlanOptions;
import io.github.mongowriteguard.bulk.Round;
import io.github.mongowriteguard.copies.CopyLedger;
import io.github.mongowriteguard.copies.OverlapGate;
import io.github.mongowriteguard.internal.ErrorCodes;
import io.github.mongowriteguard.internal.GuardCommandListener;
import io.github.mongowriteguard.internal.GuardRuntime;
import io.github.mongowriteguard.metrics.GuardEventListener;
import io.github.mongowriteguard.retry.RetryClassifier;
import io.github.resilience4j.retry.Retry;
import io.github.mongowriteguard.internal.command.CommandOptions;
import io.github.mongowriteguard.internal.command.CommandReply;
import io.github.mongowriteguard.internal.command.WriteCommand;
import io.github.mongowriteguard.internal.command.WriteCommandEncoder;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;

/**
 * Runs one guarded bulk, top to bottom: check and plan it (ids assigned, rounds), then for each round skip what the
 * caller's mode says must not run, encode the rest as write commands with the server deadline, send each in an
 * explicit session with its own transaction number (one server copy), retry what is safe and useful as the same copy
 * behind the overlap gate, and classify every statement. A whole command that fails, or whose outcome becomes
 * unknown, stops the call, as it stops the driver's bulk.
 *
 * @param <T> the collection's document class
 */
public final class BulkExecutor<T> {
    private final MongoCollection<T> collection;
    private final String namespace;
    private final MongoDatabase database;
    private final MongoDatabase admin;
    private final MongoAccess access;
    private final GuardRuntime runtime;
    private final long maxTimeMs;
    private final BulkPlanner<T> planner;
    private final WriteCommandEncoder<T> encoder;

    public BulkExecutor(MongoCollection<T> collection, MongoAccess access, GuardRuntime runtime, long maxTimeMs) {
        this.collection = collection;
        this.namespace = collection.getNamespace().getFullName();
        // Commands go through the collection's database with the collection's codecs, so documents encode as its
        // own bulkWrite would encode them.
        this.database = access.getDatabase(collection.getNamespace().getDatabaseName()).withCodecRegistry(collection.getCodecRegistry());
        this.admin = access.getDatabase("admin");
        this.access = access;
        this.runtime = runtime;
        this.maxTimeMs = maxTimeMs;
        this.planner = BulkPlanner.forCollection(collection);
        this.encoder = new WriteCommandEncoder<>(collection.getNamespace().getCollectionName(),
            collection.getDocumentClass(), collection.getCodecRegistry());
    }

    /** The server deadline every command carries. */
    public long maxTimeMs() {
        return maxTimeMs;
    }

    public BulkPlan plan(List<? extends WriteModel<? extends T>> models, BulkWriteOptions options) {
        return planner.plan(models, PlanOptions.from(options, runtime.settings()));
    }

    /**
     * Runs the bulk. Throws only for bad input (before anything is sent); every write failure is in the outcome.
     *
     * @param operation              the caller's method, for metrics ({@code bulkWrite}, {@code insertOne}, ...)
     * @param idempotentMultiRetries the caller's explicit opt-in to retry multi-document updates that are provably
     *                               idempotent
     */
    public WriteOutcome<T> execute(List<? extends WriteModel<? extends T>> models, BulkWriteOptions options, String operation,
                                   boolean idempotentMultiRetries) {
        long started = System.nanoTime();
        WriteConcern writeConcern = collection.getWriteConcern();
        if (!writeConcern.isAcknowledged()) {
            throw new IllegalArgumentException("the collection's write concern " + writeConcern
                + " is unacknowledged: the guard cannot know the outcome of a write nobody confirms; use w:1 or"
                + " w:\"majority\" (collection.withWriteConcern(WriteConcern.W1)). Nothing was sent.");
        }
        if (idempotentMultiRetries) {
            MultiRetryOptIn.check(models, collection.getDocumentClass(), collection.getCodecRegistry());
        }
        CommandOptions commandOptions = CommandOptions.from(options, collection.getDocumentClass(), collection.getCodecRegistry());
        BulkPlan plan = plan(models, options);
        WriteOutcome.Builder<T> outcome = new WriteOutcome.Builder<>(models);
        if (!plan.isEmpty()) {
            try (Sessions sessions = new Sessions(access)) {
                Run run = new Run(plan, options.isOrdered() && plan.mode() == PlanMode.UNORDERED_ROUNDS, outcome,
                    writeConcern.isServerDefault() ? null : writeConcern.asDocument(), commandOptions, sessions,
                    idempotentMultiRetries);
                for (Round round : plan.rounds()) {
                    run.round(round);
                }
            }
        }
        WriteOutcome<T> result = outcome.build();
        runtime.events().writeCompleted(new GuardEventListener.WriteCompleted(namespace, operation, outcomeTag(result),
            java.time.Duration.ofNanos(System.nanoTime() - started), result.rounds(), result.commands(), result.sends(),
            plan.mode().name()));
        return result;
    }

    private static String outcomeTag(WriteOutcome<?> outcome) {
        if (outcome.isComplete()) {
            return "success";
        }
        if (outcome.hasUnknown()) {
            return "unknown";
        }
        boolean anyApplied = outcome.outcomes().stream().anyMatch(o -> o.status() == WriteStatus.APPLIED);
        return anyApplied ? "partial" : "failure";
    }

    /**
     * The explicit sessions of one bulk: one at a time; after a copy is left possibly running, the next command gets
     * a fresh session so that it does not wait behind that copy on the server's session check-out.
     */
    private static final class Sessions implements AutoCloseable {
        private final MongoAccess access;
        private final List<ClientSession> all = new ArrayList<>();
        private ClientSession current;

        Sessions(MongoAccess access) {
            this.access = access;
            this.current = start();
        }

        private ClientSession start() {
            ClientSession session = access.startSession(ClientSessionOptions.builder().causallyConsistent(false).build());
            all.add(session);
            return session;
        }

        ClientSession current() {
            return current;
        }

        void replace() {
            current = start();
        }

        @Override
        public void close() {
            all.forEach(ClientSession::close);
        }
    }

    /** The state of one bulk while it runs. */
    private final class Run {
        final BulkPlan plan;
        /** An ordered request run in rounds: after a write on a key does not apply, that key's later writes are skipped. */
        final boolean perKeyFailures;
        final WriteOutcome.Builder<T> outcome;
        final @Nullable BsonDocument writeConcern;
        final CommandOptions commandOptions;
        final Sessions sessions;
        final boolean idempotentMultiRetries;
        final CopyLedger ledger = runtime.ledger();
        final OverlapGate gate = runtime.gate();
        final Retry retry = runtime.retry();
        final GuardEventListener events = runtime.events();
        final GuardCommandListener listener = runtime.commandListener();
        final String writeId = HexFormat.of().formatHex(longBytes(ThreadLocalRandom.current().nextLong()));
        int commandNumber;
        /** Why nothing more is sent (a whole command failed, an outcome is unknown, an ORDERED round stopped), or null. */
        @Nullable String stopped;
        int stoppedAt = -1;

        Run(BulkPlan plan, boolean perKeyFailures, WriteOutcome.Builder<T> outcome, @Nullable BsonDocument writeConcern,
            CommandOptions commandOptions, Sessions sessions, boolean idempotentMultiRetries) {
            this.plan = plan;
            this.perKeyFailures = perKeyFailures;
            this.outcome = outcome;
            this.writeConcern = writeConcern;
            this.commandOptions = commandOptions;
            this.sessions = sessions;
            this.idempotentMultiRetries = idempotentMultiRetries;
        }

        void round(Round round) {
            List<Integer> runnable = new ArrayList<>();
            for (int index : round.indices()) {
                int previous = plan.previousOnKey(index);
                if (stopped != null) {
                    skipAfterStop(index);
                } else if (perKeyFailures && previous >= 0 && outcome.get(previous).status() != WriteStatus.APPLIED) {
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
            for (WriteCommand command : encoder.encode(plan, runnable, round.isOrdered(), commandOptions)) {
                if (stopped != null) {
                    for (int position = 0; position < command.size(); position++) {
                        skipAfterStop(command.index(position));
                    }
                    continue;
                }
                send(round.number(), command);
                if (stopped == null && command.ordered()) {
                    for (int position = 0; position < command.size(); position++) {
                        int index = command.index(position);
                        if (outcome.get(index).status() != WriteStatus.APPLIED) {
                            stop(index, "the bulk keeps the caller's order and stopped after index " + index
                                + " did not apply");
                            break;
                        }
                    }
                }
            }
        }

        private void stop(int index, String why) {
            stopped = why;
            stoppedAt = index;
        }

        private void skipAfterStop(int index) {
            outcome.set(IndexOutcome.skipped(index, stoppedAt, "not sent: " + stopped));
        }

        /**
         * Sends one command, as one server copy, with up to the policy's attempts: a retryable command resends the
         * same copy (same lsid and txnNumber) after the backoff and the overlap gate; a multi-document command is
         * sent once unless the caller opted in and every update in it is provably idempotent.
         */
        void send(int roundNumber, WriteCommand command) {
            ClientSession session = sessions.current();
            Long txnNumber = command.retryable() ? session.getServerSession().advanceTransactionNumber() : null;
            String guardComment = "mwg:" + writeId + ":" + roundNumber + "." + (++commandNumber);
            // The caller's comment is sent as given; without one, the guard's names the copy (servers 4.4+ take it).
            BsonValue comment = commandOptions.comment() != null ? commandOptions.comment()
                : listener.maxWireVersion() >= 9 ? new BsonString(guardComment) : null;
            BsonDocument body = command.toCommand(txnNumber, maxTimeMs, writeConcern, comment);
            boolean retryAllowed = command.retryable() || idempotentMultiRetries;
            CopyLedger.Copy copy = ledger.start(namespace, lsid(session), txnNumber, comment == null ? null : guardComment);
            outcome.command();
            Retry.Context<SendResult> retryContext = retry.context();
            SendResult result;
            int attempt = 0;
            boolean reachedServer = false;
            // A send got no answer, and no later answer proved what this copy did: its outcome is unknown.
            boolean unanswered = false;
            while (true) {
                attempt++;
                copy.attempt();
                events.attemptStarted(new GuardEventListener.AttemptStarted(namespace, attempt, attempt > 1 && command.retryable()));
                long sentAt = System.nanoTime();
                result = sendOnce(session, body, copy);
                reachedServer |= result.kind != SendResult.Kind.NO_SERVER;
                if (result.kind == SendResult.Kind.GAVE_UP) {
                    unanswered = true;
                } else if (result.provesOutcome()) {
                    unanswered = false;
                    copy.markEnded();
                }
                if (result.hitDeadline() && !copy.isPossiblyRunning()) {
                    events.deadlineHit(new GuardEventListener.DeadlineHit(namespace, maxTimeMs));
                }
                if (!retryAllowed || !result.worthRetrying() || !retryContext.onResult(result)) {
                    break;
                }
                long gateStart = System.nanoTime();
                OverlapGate.Verdict verdict = gate.beforeRetry(admin, copy, sentAt, maxTimeMs);
                events.gateDecided(new GuardEventListener.GateDecided(namespace, verdict.name().toLowerCase(java.util.Locale.ROOT)
                    .replace('_', '-'), java.time.Duration.ofNanos(System.nanoTime() - gateStart)));
                if (verdict == OverlapGate.Verdict.REFUSED) {
                    result = result.refused(copy.snapshot());
                    break;
                }
                if (!command.retryable()) {
                    if (verdict == OverlapGate.Verdict.DEADLINE_ONLY && unanswered) {
                        // A new copy of a multi-document write may only start once the old one is shown gone.
                        result = result.blind();
                        break;
                    }
                    // A multi-document write has no retryable-write identity: the next attempt is a new copy.
                    outcome.copy(copy.snapshot());
                    copy.close();
                    copy = ledger.start(namespace, lsid(session), null, comment == null ? null : guardComment);
                    outcome.command();
                }
            }
            retryContext.onComplete();
            outcome.copy(copy.snapshot());
            apply(command, result, attempt > 1, reachedServer, unanswered);
            if (copy.isPossiblyRunning()) {
                // Later commands must not queue behind this copy on the server's session check-out.
                sessions.replace();
            }
            copy.close();
        }

        private SendResult sendOnce(ClientSession session, BsonDocument body, CopyLedger.Copy copy) {
            copy.sent();
            outcome.send();
            try {
                RawBsonDocument reply = database.runCommand(session, body, ReadPreference.primary(), RawBsonDocument.class);
                outcome.server(listener.serverOfLastCommandOnThisThread());
                return SendResult.reply(reply);
            } catch (MongoSocketException e) {
                // A socket timeout is not a cancellation: the server may still be applying this copy.
                copy.clientGaveUp();
                return SendResult.gaveUp(e);
            } catch (MongoTimeoutException e) {
                return SendResult.noServer(e);
            } catch (MongoServerException | MongoExecutionTimeoutException e) {
                // ok: 0. The driver raises MaxTimeMSExpired as MongoExecutionTimeoutException, not a server exception.
                outcome.server(listener.serverOfLastCommandOnThisThread());
                return SendResult.serverError(e);
            } catch (MongoException e) {
                // Anything else the driver raises after sending (an interrupted thread, a client-side failure): the
                // server may have received the command, so its outcome is not known.
                copy.clientGaveUp();
                return SendResult.gaveUp(e);
            }
        }

        private void apply(WriteCommand command, SendResult result, boolean resent, boolean reachedServer, boolean unanswered) {
            switch (result.kind) {
                case REPLY:
                    classify(command, result.reply, resent, unanswered);
                    return;
                case REFUSED:
                    outcome.stillRunning(result.runningCopy);
                    unknown(command, "not retried: an earlier copy is still running on the server (" + result.runningCopy
                        + "); it may still apply the write");
                    return;
                case BLIND:
                    unknown(command, "not retried: an earlier copy timed out on the client, and the guard cannot see"
                        + " whether it still runs (currentOp is not permitted or failed); a new copy of a multi-document"
                        + " write could run beside it");
                    return;
                case GAVE_UP:
                    unknown(command, command.retryable()
                        ? "the client stopped waiting (" + result.error.getClass().getSimpleName() + "): the server may still be applying it"
                        : "the client stopped waiting (" + result.error.getClass().getSimpleName() + ") on a multi-document write:"
                            + " an unknown number of documents may have been changed; it is not retried");
                    return;
                case NO_SERVER:
                    if (!reachedServer) {
                        for (int position = 0; position < command.size(); position++) {
                            outcome.set(IndexOutcome.notSent(command.index(position), result.code(), "not sent: no attempt"
                                + " reached a server (" + result.error.getClass().getSimpleName() + ": none could be selected,"
                                + " or no connection was free, in time)"));
                        }
                        stop(command.index(0), "no server could be reached for the command of index " + command.index(0));
                        return;
                    }
                    // An earlier attempt reached a server: handled as any failure below.
                default:
                    if (unanswered) {
                        unknown(command, "an earlier send of this copy timed out on the client and the last one failed with "
                            + result.code() + ": the earlier send may have applied it, or may still be running");
                    } else if (command.size() > 1 && ErrorCodes.isInterruption(result.code())) {
                        unknown(command, "the server interrupted the whole command (" + describe(result.error) + "): the"
                            + " statements before the interruption point may have been applied");
                    } else {
                        failAll(command, result);
                    }
                    if (result.kind == SendResult.Kind.SERVER_ERROR && result.code() != ErrorCodes.MAX_TIME_MS_EXPIRED) {
                        outcome.commandError(result.error);
                    }
                    if (stopped == null) {
                        stop(command.index(0), "the whole command of index " + command.index(0) + " failed ("
                            + describe(result.error) + "), which stops the bulk as it stops the driver's");
                    }
            }
        }

        void classify(WriteCommand command, CommandReply reply, boolean resent, boolean unanswered) {
            int firstError = reply.firstErrorPosition();
            boolean interruptedOrdered = command.ordered() && firstError >= 0
                && ErrorCodes.isInterruption(reply.error(firstError).code());
            for (int position = 0; position < command.size(); position++) {
                int index = command.index(position);
                CommandReply.StatementError error = reply.error(position);
                if (error != null) {
                    if (error.code() == ErrorCodes.DUPLICATE_KEY && command.kind() == WriteCommand.Kind.INSERT
                        && plan.hasOwnAssignedId(index) && resent) {
                        // The guard gave this insert its _id; only an earlier copy of this very write can have used it.
                        outcome.set(IndexOutcome.applied(index, "applied by an earlier copy (duplicate key on the _id the guard assigned)"));
                        continue;
                    }
                    boolean transientError = RetryClassifier.isTransient(error.code(), false);
                    if (unanswered && transientError) {
                        unknown(index, "an earlier send of this copy timed out on the client; the last send's " + error.code()
                            + " (" + error.codeName() + ") does not show what the earlier one did");
                    } else if (command.size() > 1 && ErrorCodes.isInterruption(error.code())) {
                        unknown(index, "the server interrupted the statements' batch (" + error.code() + " " + error.codeName()
                            + "), which may have applied it before the interruption point");
                    } else if (!command.retryable()) {
                        // A multi-document write is not atomic: what it changed before the error (earlier in its scan,
                        // or on other shards, whose counts mongos adds to the reply's) stays changed.
                        outcome.set(IndexOutcome.failedMultiDocument(index, error.code(), error.codeName(), error.message(),
                            error.details()));
                    } else {
                        outcome.set(IndexOutcome.failed(index, error.code(), error.codeName(), error.message(), error.details(),
                            transientError));
                    }
                } else if (command.ordered() && firstError >= 0 && position > firstError) {
                    if (interruptedOrdered) {
                        unknown(index, "the server interrupted the batch of index " + command.index(firstError)
                            + ", which may have applied this write before the interruption point");
                    } else {
                        outcome.set(IndexOutcome.skipped(index, command.index(firstError),
                            "not run: the bulk keeps the caller's order and stopped after index " + command.index(firstError) + " failed"));
                    }
                } else {
                    outcome.set(IndexOutcome.applied(index));
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
            if (reply.errorCount() > 0 || reply.writeConcernError() != null) {
                outcome.errorLabels(reply.errorLabels());
            }
        }

        private void record(WriteCommand command, int position, int index, CommandReply reply) {
            if (command.kind() == WriteCommand.Kind.INSERT) {
                plan.decision(index).id().ifPresent(id -> outcome.insert(new BulkWriteInsert(index, id)));
            } else if (reply.upsertedId(position) != null) {
                outcome.upsert(new BulkWriteUpsert(index, reply.upsertedId(position)));
            }
        }

        void failAll(WriteCommand command, SendResult result) {
            int code = result.code();
            String codeName = result.error instanceof MongoCommandException commandError ? commandError.getErrorCodeName() : "";
            boolean retrySafe = command.retryable() && RetryClassifier.isTransient(code, result.error.hasErrorLabel("RetryableWriteError"));
            // An interrupted multi-document write has changed what it reached before the interrupt point.
            boolean partial = !command.retryable() && ErrorCodes.isInterruption(code);
            for (int position = 0; position < command.size(); position++) {
                outcome.set(partial
                    ? IndexOutcome.failedMultiDocument(command.index(position), code, codeName, describe(result.error), null)
                    : IndexOutcome.failed(command.index(position), code, codeName, describe(result.error), null, retrySafe));
            }
        }

        void unknown(WriteCommand command, String reason) {
            for (int position = 0; position < command.size(); position++) {
                unknown(command.index(position), reason);
            }
            if (stopped == null) {
                stop(command.index(0), "the outcome of the command of index " + command.index(0) + " is unknown, which"
                    + " stops the bulk as a network error stops the driver's");
            }
        }

        void unknown(int index, String reason) {
            outcome.set(IndexOutcome.unknown(index, reason, RetrySafety.ofNewCopy(plan, index, collection.getCodecRegistry())));
        }
    }

    private static String lsid(ClientSession session) {
        return session.getServerSession().getIdentifier().getBinary("id").asUuid().toString();
    }

    private static String describe(MongoException e) {
        if (e.getCode() == ErrorCodes.MAX_TIME_MS_EXPIRED) {
            return "the server stopped this write at its deadline (MaxTimeMSExpired)";
        }
        return e.getClass().getSimpleName() + " " + e.getCode() + ": " + e.getMessage();
    }

    private static byte[] longBytes(long value) {
        byte[] bytes = new byte[8];
        for (int i = 0; i < 8; i++) {
            bytes[i] = (byte) (value >>> (8 * i));
        }
        return bytes;
    }
}
