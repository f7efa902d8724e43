package io.github.mongowriteguard.internal.execution;

import com.mongodb.MongoException;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Collation;
import com.mongodb.client.model.WriteModel;
import com.mongodb.session.ClientSession;
import io.github.mongowriteguard.internal.CallObserver;
import io.github.mongowriteguard.internal.ClientBinding;
import io.github.mongowriteguard.internal.ClientPort;
import io.github.mongowriteguard.internal.outcome.RecordedIndexOutcome;
import io.github.mongowriteguard.internal.outcome.RecordedWriteOutcome;
import io.github.mongowriteguard.internal.plan.NestingDepth;
import io.github.mongowriteguard.internal.plan.PlannedBulk;
import io.github.mongowriteguard.internal.plan.WriteRecord;
import io.github.mongowriteguard.internal.server.ErrorCodes;
import io.github.mongowriteguard.internal.server.RetryClassifier;
import io.github.mongowriteguard.metrics.CallOutcome;
import io.github.mongowriteguard.metrics.GuardEventListener;
import io.github.mongowriteguard.outcome.WriteOutcome;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.bson.BsonDocument;
import org.bson.BsonDocumentReader;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.codecs.Codec;
import org.bson.codecs.DecoderContext;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * {@code findOneAndUpdate}, {@code findOneAndReplace} and {@code findOneAndDelete}, guarded: one {@code findAndModify}
 * command, a single-document write the server can retry, sent as one server copy ({@link CopySender}: its own
 * transaction number, the server deadline, same-copy retries behind the overlap gate). The command is the driver's
 * (driver-core {@code BaseFindAndModifyOperation} and its subclasses, field by field), the returned document is
 * decoded with the collection's codec, and failures are what the driver throws, typed where the guard knows more.
 *
 * @param <T> the collection's document class
 */
public final class FindAndModifyExecutor<T> {
    private final BulkExecutor<T> executor;
    private final Transport.Target<T> collection;
    private final Transport transport;
    private final GuardRuntime runtime;
    private final Codec<T> codec;

    public FindAndModifyExecutor(
            BulkExecutor<T> executor, MongoCollection<T> collection, ClientPort access, GuardRuntime runtime) {
        this(executor, runtime);
    }

    /** The findAndModify executor beside {@code executor}: same collection, same transport. */
    FindAndModifyExecutor(BulkExecutor<T> executor, GuardRuntime runtime) {
        this.executor = executor;
        this.collection = executor.target();
        this.transport = executor.transport();
        this.runtime = runtime;
        this.codec = collection.registry().get(collection.documentClass());
    }

    /** The caller's {@code findOneAndX} as one write: what to check and plan, and the command's specific fields. */
    public record Request<T>(
            String operation,
            WriteModel<T> model,
            @Nullable Bson projection,
            @Nullable Bson sort,
            long maxTimeMs,
            BsonDocument specific,
            @Nullable Collation collation,
            @Nullable Bson hint,
            @Nullable String hintString,
            @Nullable BsonValue comment,
            @Nullable Bson let) {}

    /**
     * Runs the request and returns the document the server returned (before or after the write, as asked), or null.
     *
     * @param session the caller's session (outside a transaction), or null for one of the guard's own
     * @throws io.github.mongowriteguard.exception.InvalidBulkException for bad input, before anything is sent
     */
    public @Nullable T execute(@Nullable ClientSession session, Request<T> request) {
        return Continuations.now(executeAsync(session, request));
    }

    /**
     * As {@link #execute}, driven as the transport drives it: over the synchronous driver complete on return, over the
     * reactive one completed in the command's answer, with no thread held while the answer or a backoff is pending.
     */
    public CompletableFuture<@Nullable T> executeAsync(@Nullable ClientSession session, Request<T> request) {
        return runtime.observer()
                .observeAsync(
                        collection.namespace().getFullName(),
                        request.operation(),
                        sink -> executeAsync(session, request, sink));
    }

    private CompletableFuture<@Nullable T> executeAsync(
            @Nullable ClientSession session, Request<T> request, CallObserver.OutcomeSink sink) {
        DriverArgumentChecks.requireMaxTime(request.operation(), request.maxTimeMs());
        checkOptionNesting(request);
        long started = System.nanoTime();
        WriteConcern writeConcern = BulkExecutor.requireAcknowledged(collection.writeConcern());
        // The planner checks the write as it checks a bulk's (operators, replacement fields, 16 MiB) and keys it.
        PlannedBulk plan = executor.plan(List.of(request.model()), new BulkWriteOptions());
        long maxTimeMs =
                request.maxTimeMs() > 0 ? Math.min(request.maxTimeMs(), executor.maxTimeMs()) : executor.maxTimeMs();
        RecordedWriteOutcome.Builder<T> outcome = new RecordedWriteOutcome.Builder<>(List.of(request.model()));
        CopySender sender = new CopySender(
                runtime,
                transport.channel(),
                transport.gate(),
                collection.namespace().getFullName(),
                maxTimeMs,
                executor.binding(),
                transport.resume());
        Sessions sessions = session == null ? Sessions.own(transport.sessions()) : Sessions.callers(session);
        CompletableFuture<CopySender.Sent> sending;
        try {
            // No txnNumber without a retryable-write identity (retryWrites=false, a standalone), as the driver.
            ClientBinding binding = executor.binding();
            Long txnNumber = binding.sendsTxnNumber()
                    ? sessions.current().getServerSession().advanceTransactionNumber()
                    : null;
            String guardComment = "mwg:" + Long.toHexString(System.nanoTime()) + ":fam";
            BsonValue comment = sender.comment(request.comment(), guardComment);
            String copyName = comment == null ? null : guardComment;
            sending = sender.sendAsync(
                            sessions,
                            command(request, writeConcern, comment, maxTimeMs, txnNumber),
                            txnNumber,
                            false,
                            copyName,
                            CopySender.Tally.of(outcome))
                    .thenCompose(sent -> {
                        if (txnNumber != null
                                && sent.result() instanceof SendResult.ServerError refused
                                && ClientBinding.isStandaloneRefusal(refused.error())) {
                            // A standalone refused the txnNumber before the command ran: sent again without one, as
                            // the driver.
                            binding.refusedTxnNumber();
                            return sender.sendAsync(
                                    sessions,
                                    command(request, writeConcern, comment, maxTimeMs, null),
                                    null,
                                    false,
                                    copyName,
                                    CopySender.Tally.of(outcome));
                        }
                        return CompletableFuture.completedFuture(sent);
                    });
        } catch (RuntimeException | Error e) {
            sessions.close();
            throw e;
        }
        return sending.whenComplete((sent, error) -> sessions.close()).thenApply(sent -> {
            try {
                record(sent, plan, outcome);
                DriverExceptions.throwIfFindAndModifyNotApplied(
                        outcome.build(), sent.result(), collection.namespace().getFullName(), maxTimeMs);
                // Applied (a write-concern error was thrown above): only a reply applies.
                return value((SendResult.Reply) sent.result());
            } finally {
                WriteOutcome<T> done = outcome.build();
                CallOutcome callOutcome = BulkExecutor.callOutcome(done);
                sink.outcome(callOutcome);
                runtime.events()
                        .writeCompleted(new GuardEventListener.WriteCompleted(
                                collection.namespace().getFullName(),
                                request.operation(),
                                callOutcome,
                                Duration.ofNanos(System.nanoTime() - started),
                                1,
                                done.commands(),
                                done.sends(),
                                plan.mode()));
            }
        });
    }

    /**
     * The command-level documents the planner does not see, refused as the driver refuses them when they nest too deep
     * (the query, update, replacement, array filters and pipeline are the planned write's).
     */
    private void checkOptionNesting(Request<T> request) {
        Class<T> documentClass = collection.documentClass();
        CodecRegistry registry = collection.registry();
        if (request.projection() != null) {
            NestingDepth.checkOption("projection", request.projection(), documentClass, registry);
        }
        if (request.sort() != null) {
            NestingDepth.checkOption("sort", request.sort(), documentClass, registry);
        }
        if (request.hint() != null) {
            NestingDepth.checkOption("hint", request.hint(), documentClass, registry);
        }
        if (request.comment() != null) {
            NestingDepth.checkOption("comment", request.comment(), documentClass, registry);
        }
        if (request.let() != null) {
            NestingDepth.checkOption("let", request.let(), documentClass, registry);
        }
    }

    /** The driver's {@code findAndModify} command, in its field order, with the guard's deadline and transaction number. */
    private BsonDocument command(
            Request<T> request,
            WriteConcern writeConcern,
            @Nullable BsonValue comment,
            long maxTimeMs,
            @Nullable Long txnNumber) {
        BsonDocument command = new BsonDocument(
                "findAndModify", new BsonString(collection.namespace().getCollectionName()));
        putIfNotNull(command, "query", WriteRecord.of(request.model()).filter());
        putIfNotNull(command, "fields", request.projection());
        putIfNotNull(command, "sort", request.sort());
        command.putAll(request.specific());
        if (!writeConcern.isServerDefault()) {
            command.put("writeConcern", writeConcern.asDocument());
        }
        if (request.collation() != null) {
            command.put("collation", request.collation().asDocument());
        }
        if (request.hint() != null) {
            command.put("hint", toBson(request.hint()));
        } else if (request.hintString() != null) {
            command.put("hint", new BsonString(request.hintString()));
        }
        if (comment != null) {
            command.put("comment", comment);
        }
        putIfNotNull(command, "let", request.let());
        command.put("maxTimeMS", new BsonInt64(maxTimeMs));
        if (txnNumber != null) {
            command.put("txnNumber", new BsonInt64(txnNumber));
        }
        return command;
    }

    private void putIfNotNull(BsonDocument command, String name, @Nullable Bson value) {
        if (value != null) {
            command.put(name, toBson(value));
        }
    }

    private BsonDocument toBson(Bson bson) {
        return bson.toBsonDocument(collection.documentClass(), collection.registry());
    }

    /** Records the write's outcome from what its copy's sends came to: the rules of {@link OutcomeRecorder}. */
    private void record(CopySender.Sent sent, PlannedBulk plan, RecordedWriteOutcome.Builder<T> outcome) {
        SendResult result = sent.result();
        if (result instanceof SendResult.Reply answered) {
            BsonDocument reply = answered.reply().document();
            outcome.set(RecordedIndexOutcome.applied(0));
            if (reply.isDocument("writeConcernError")) {
                outcome.set(RecordedIndexOutcome.writeConcernFailed(
                        0,
                        OutcomeRecorder.writeConcernFailedReason(reply.getDocument("writeConcernError")),
                        RetrySafety.ofNewCopy(plan, 0, collection.registry())));
            }
            return;
        }
        if (result instanceof SendResult.ServerError serverError
                && !RefusalProof.anEarlierSendMayHaveApplied(
                        sent, true, executor.binding().mayBeMongos())
                && RefusalProof.provesNothingApplied(
                        serverError.error(), true, executor.binding().mayBeMongos())) {
            MongoException error = serverError.error();
            outcome.set(RecordedIndexOutcome.failed(
                    0,
                    result.code(),
                    "",
                    error.getMessage(),
                    null,
                    RetryClassifier.isTransient(result.code(), error.hasErrorLabel("RetryableWriteError"))));
            return;
        }
        if (result instanceof SendResult.NoServer && !sent.reachedServer()) {
            outcome.set(RecordedIndexOutcome.notSent(0, result.code(), "not sent: no attempt reached a server"));
            return;
        }
        String reason = result instanceof SendResult.Refused refused
                ? "not retried: an earlier copy is still running on the server (" + refused.runningCopy() + ")"
                : result.code() == ErrorCodes.MAX_TIME_MS_EXPIRED
                                && executor.binding().mayBeMongos()
                                && result instanceof SendResult.ServerError deadlineError
                        ? OutcomeRecorder.routerDeadline(
                                deadlineError.error() instanceof com.mongodb.MongoCommandException commandError
                                        ? commandError.getErrorMessage()
                                        : deadlineError.error().getMessage())
                        : "nothing proves whether the write was applied (" + result + ")"
                                + noSameCopyResend(executor.binding());
        outcome.set(RecordedIndexOutcome.unknown(0, reason, RetrySafety.ofNewCopy(plan, 0, collection.registry())));
    }

    /** Why a lost reply is not resolved by a resend of the same copy, when there is none; else empty. */
    static String noSameCopyResend(ClientBinding binding) {
        return binding.sendsTxnNumber()
                ? ""
                : "; sent without a txnNumber (" + binding.noTxnNumberReason() + "), as the driver: no resend of the"
                        + " same copy exists, so it was not retried and its outcome cannot be learned from the server";
    }

    /** The document the server returned (before or after the write, as asked), or null. */
    private @Nullable T value(SendResult.Reply answered) {
        BsonDocument reply = answered.reply().document();
        if (!reply.isDocument("value")) {
            return null;
        }
        return codec.decode(
                new BsonDocumentReader(reply.getDocument("value")),
                DecoderContext.builder().build());
    }
}
