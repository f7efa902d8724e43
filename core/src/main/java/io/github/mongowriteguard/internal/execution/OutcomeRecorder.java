package io.github.mongowriteguard.internal.execution;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.bulk.BulkWriteInsert;
import com.mongodb.bulk.BulkWriteUpsert;
import io.github.mongowriteguard.internal.ClientBinding;
import io.github.mongowriteguard.internal.command.CommandReply;
import io.github.mongowriteguard.internal.command.WriteCommand;
import io.github.mongowriteguard.internal.outcome.RecordedIndexOutcome;
import io.github.mongowriteguard.internal.outcome.RecordedWriteOutcome;
import io.github.mongowriteguard.internal.plan.PlannedBulk;
import io.github.mongowriteguard.internal.server.ErrorCodes;
import io.github.mongowriteguard.internal.server.RetryClassifier;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.codecs.configuration.CodecRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Turns what the sends of one command came to into the outcome of each of its statements, claiming only what is
 * proven (the driver's {@code BulkWriteBatchCombiner}, with the guard's honesty rules):
 * <ul>
 *   <li>a statement the reply does not name failed is APPLIED; a write error is FAILED with the server's code, name and
 *       {@code errInfo};</li>
 *   <li>after a send that may have applied something (its answer was lost, or its error does not prove otherwise),
 *       only an answer that proves what the copy did counts: a transient error or a refusal of a resend leaves the
 *       statement UNKNOWN;</li>
 *   <li>an error that does not prove nothing was applied ({@link RefusalProof}: an interruption of several
 *       statements or of a multi-document write, a stepdown, a shutdown) leaves the statements UNKNOWN, not
 *       FAILED;</li>
 *   <li>a {@code MaxTimeMSExpired} (50) from mongos, for the statements of a child batch or for the whole command,
 *       proves nothing: mongos stops waiting at its deadline while the shard may still apply them
 *       ({@code src/mongo/s/async_requests_sender.cpp}, {@code src/mongo/s/write_ops/batch_write_exec.cpp}); the
 *       statements are UNKNOWN, and a held single-document copy settles them. From a {@code mongod} it keeps its
 *       meaning ({@link RefusalProof});</li>
 *   <li>a multi-document write is not atomic: its FAILED says it may have changed documents.</li>
 * </ul>
 * A whole command that failed, or whose outcome is unknown, stops the call: {@link #record} says why.
 */
final class OutcomeRecorder<T> {
    private final PlannedBulk plan;
    private final RecordedWriteOutcome.Builder<T> outcome;
    private final CodecRegistry registry;
    /** Recording a settle: every send is a resend of the copy. */
    private final boolean settling;
    /**
     * Recording a settle of a command whose earlier reply was recorded already (a write-concern error, or a reply
     * whose statements mongos failed at its deadline): its counts and ids are in the outcome, so the settle adds only
     * what its own reply has beyond them; null when none was recorded.
     */
    private final @Nullable CommandReply alreadyCounted;
    /** Whether the commands carried a {@code txnNumber}, for the reasons of unknown outcomes. */
    private final ClientBinding binding;
    /** The commands carry the caller's statement ids, which another process may have sent before. */
    private boolean callerStatementIds;

    OutcomeRecorder(PlannedBulk plan, RecordedWriteOutcome.Builder<T> outcome, CodecRegistry registry) {
        this(plan, outcome, registry, false, null, new ClientBinding(null, 0, null));
    }

    /**
     * A recorder whose reasons say when the commands carried no {@code txnNumber}.
     *
     * @param binding whether the commands carried a {@code txnNumber}, for the reasons of unknown outcomes
     */
    OutcomeRecorder(
            PlannedBulk plan, RecordedWriteOutcome.Builder<T> outcome, CodecRegistry registry, ClientBinding binding) {
        this(plan, outcome, registry, false, null, binding);
    }

    /**
     * @param settling       whether the sends recorded are a settle's (resends of a held copy)
     * @param alreadyCounted the earlier reply of the copy that was recorded with its counts and ids, or null
     */
    OutcomeRecorder(
            PlannedBulk plan,
            RecordedWriteOutcome.Builder<T> outcome,
            CodecRegistry registry,
            boolean settling,
            @Nullable CommandReply alreadyCounted) {
        this(plan, outcome, registry, settling, alreadyCounted, new ClientBinding(null, 0, null));
    }

    private OutcomeRecorder(
            PlannedBulk plan,
            RecordedWriteOutcome.Builder<T> outcome,
            CodecRegistry registry,
            boolean settling,
            @Nullable CommandReply alreadyCounted,
            ClientBinding binding) {
        this.plan = plan;
        this.outcome = outcome;
        this.registry = registry;
        this.settling = settling;
        this.alreadyCounted = alreadyCounted;
        this.binding = binding;
    }

    /**
     * Records the outcome of every statement of {@code command}.
     *
     * @return why the call must stop here (nothing more may be sent), or null
     */
    @Nullable
    String record(WriteCommand command, CopySender.Sent sent) {
        SendResult result = sent.result();
        if (result instanceof SendResult.Reply reply) {
            classify(
                    command,
                    reply.reply(),
                    sent.resent() || settling,
                    RefusalProof.anEarlierSendMayHaveApplied(
                            sent, oneSingleDocumentStatement(command), binding.mayBeMongos()));
            return outcomeOfCommand(command);
        }
        if (result instanceof SendResult.Refused refused) {
            return unknown(
                    command,
                    "not retried: an earlier copy is still running on the server (" + refused.runningCopy()
                            + "); it may still apply the write");
        }
        if (result instanceof SendResult.Blind) {
            return unknown(
                    command,
                    "not retried: an earlier copy timed out on the client, and the guard cannot see"
                            + " whether it still runs (currentOp is not permitted or failed); a new copy of a multi-document"
                            + " write could run beside it");
        }
        if (result instanceof SendResult.GaveUp gaveUp) {
            return unknown(
                    command,
                    command.retryable()
                            ? "the client stopped waiting ("
                                    + gaveUp.error().getClass().getSimpleName()
                                    + "): the server may still be applying it"
                                    + FindAndModifyExecutor.noSameCopyResend(binding)
                            : "the client stopped waiting ("
                                    + gaveUp.error().getClass().getSimpleName() + ") on a multi-document write:"
                                    + " an unknown number of documents may have been changed; it is not retried");
        }
        if (result instanceof SendResult.NoServer noServer) {
            if (!sent.reachedServer()) {
                for (int position = 0; position < command.size(); position++) {
                    outcome.set(RecordedIndexOutcome.notSent(
                            command.index(position),
                            noServer.code(),
                            "not sent: no attempt"
                                    + " reached a server ("
                                    + noServer.error().getClass().getSimpleName() + ": none could be selected,"
                                    + " or no connection was free, in time)"));
                }
                return "no server could be reached for the command of index " + command.index(0);
            }
            // An earlier attempt reached a server: handled as any failure of the whole command.
            return commandFailed(command, sent, noServer.error(), false);
        }
        if (result instanceof SendResult.ServerError serverError) {
            outcome.commandError(serverError.error());
            return commandFailed(command, sent, serverError.error(), true);
        }
        throw new IllegalStateException("no outcome rule for the send result " + result);
    }

    /**
     * The whole command failed: FAILED when the error proves nothing was applied, else UNKNOWN.
     *
     * @param fromServer whether the server answered with the error (else no server could be selected for the last send)
     */
    private String commandFailed(WriteCommand command, CopySender.Sent sent, MongoException error, boolean fromServer) {
        boolean single = oneSingleDocumentStatement(command);
        boolean mayBeMongos = binding.mayBeMongos();
        if (RefusalProof.anEarlierSendMayHaveApplied(sent, single, mayBeMongos)) {
            unknown(
                    command,
                    "an earlier send of this copy "
                            + (sent.unanswered() ? "timed out on the client" : "may have applied it")
                            + " and the last one failed with " + error.getCode()
                            + ", which proves nothing about the earlier send: it may have applied it, or may"
                            + " still be running");
        } else if (fromServer
                && callerStatementIds
                && (error.getCode() == ErrorCodes.TRANSACTION_TOO_OLD
                        || error.getCode() == ErrorCodes.INCOMPLETE_TRANSACTION_HISTORY)) {
            unknown(
                    command,
                    "the server cannot tell whether these statement ids already ran: "
                            + describe(error)
                            + (error.getCode() == ErrorCodes.TRANSACTION_TOO_OLD
                                    ? " (a later txnNumber already ran on this session id, e.g. another owner of the"
                                            + " ids moved ahead, or the ids went back)"
                                    : " (the statement history is gone from the oplog, or was not migrated)")
                            + "; an earlier copy with these ids may have applied them, so they are not sent again;"
                            + " read the documents to learn what applied");
        } else if (fromServer && mayBeMongos && error.getCode() == ErrorCodes.MAX_TIME_MS_EXPIRED) {
            unknown(
                    command,
                    routerDeadline(
                            error instanceof MongoCommandException commandError
                                    ? commandError.getErrorMessage()
                                    : error.getMessage()));
        } else if (fromServer && !RefusalProof.provesNothingApplied(error, single, mayBeMongos)) {
            unknown(
                    command,
                    "the server's " + describe(error) + " does not prove that nothing was applied ("
                            + (command.size() > 1 || !command.retryable()
                                    ? "what ran before the interruption or stepdown stays applied"
                                    : "a stepdown or shutdown may follow the write, while it waits for its"
                                            + " write concern")
                            + ")");
        } else {
            failAll(command, error);
        }
        return "the whole command of index " + command.index(0) + " failed (" + describe(error)
                + "), which stops the bulk as it stops the driver's";
    }

    /**
     * The commands carry the caller's statement ids ({@code StatementIds}): a {@code TransactionTooOld} (225) or an
     * {@code IncompleteTransactionHistory} (217) then says the server can no longer tell whether an earlier copy of
     * these ids (another process's, a crashed owner's) applied them, so they are UNKNOWN, never FAILED.
     */
    void callerStatementIds() {
        this.callerStatementIds = true;
    }

    /** A command of one statement that writes at most one document: it commits atomically. */
    private static boolean oneSingleDocumentStatement(WriteCommand command) {
        return command.size() == 1 && command.retryable();
    }

    /**
     * A reply can still leave statements unknown: the call stops as after a network error. Not for a write-concern
     * error, after which the driver's bulk goes on too.
     */
    private @Nullable String outcomeOfCommand(WriteCommand command) {
        for (int position = 0; position < command.size(); position++) {
            IndexOutcome result = outcome.get(command.index(position));
            if (result.status() == WriteStatus.UNKNOWN && !result.writeConcernFailed()) {
                return unknownStops(command);
            }
        }
        return null;
    }

    private void classify(WriteCommand command, CommandReply reply, boolean resent, boolean earlierDoubt) {
        int firstError = reply.firstErrorPosition();
        boolean single = oneSingleDocumentStatement(command);
        // mongos reports a failed child batch of an ORDERED command on its first statement only: the shard may have
        // applied it and the ones after it before an interruption or stepdown.
        boolean interruptedOrdered = command.ordered()
                && firstError >= 0
                && !RefusalProof.provesNothingApplied(
                        reply.error(firstError).code(), false, false, single, binding.mayBeMongos());
        boolean anyError = firstError >= 0;
        for (int position = 0; position < command.size(); position++) {
            int index = command.index(position);
            CommandReply.StatementError error = anyError ? reply.error(position) : null;
            if (error != null) {
                if (error.code() == ErrorCodes.DUPLICATE_KEY
                        && command.type() == WriteCommand.CommandType.INSERT
                        && plan.hasOwnAssignedId(index)
                        && resent) {
                    // The guard gave this insert its _id; only an earlier copy of this very write can have used it.
                    // (a settle's DuplicateKey on it likewise: the statement record did not answer it, so the
                    // document with that _id can only be this write's.)
                    outcome.set(RecordedIndexOutcome.applied(
                            index, "applied by an earlier copy (duplicate key on the _id the guard assigned)"));
                    if (!countedBefore(command, position)) {
                        recordIdOf(command, position, index, reply);
                    }
                    continue;
                }
                boolean transientError = RetryClassifier.isTransient(error.code(), false);
                if (ErrorCodes.isLostAnswer(error.code())) {
                    unknown(
                            index,
                            "mongos lost the shard's answer (" + error.code() + " " + error.codeName() + "): the"
                                    + " shard may have applied it");
                } else if (error.code() == ErrorCodes.MAX_TIME_MS_EXPIRED && binding.mayBeMongos()) {
                    unknown(index, routerDeadline(error.message()));
                } else if (earlierDoubt && transientError) {
                    unknown(
                            index,
                            "an earlier send of this copy may have applied it (no answer, or one that does not prove"
                                    + " otherwise); the last send's " + error.code() + " (" + error.codeName()
                                    + ") does not show what the earlier one did");
                } else if (!RefusalProof.provesNothingApplied(
                        error.code(), false, false, single, binding.mayBeMongos())) {
                    unknown(
                            index,
                            "the server's " + error.code() + " (" + error.codeName() + ") does not prove that it was"
                                    + " not applied: an interruption or stepdown fails the statements' batch after"
                                    + " what ran before it");
                } else if (!command.retryable()) {
                    // A multi-document write is not atomic: what it changed before the error (earlier in its scan, or
                    // on
                    // other shards, whose counts mongos adds to the reply's) stays changed.
                    outcome.set(RecordedIndexOutcome.failedMultiDocument(
                            index, error.code(), error.codeName(), error.message(), error.details()));
                } else {
                    outcome.set(RecordedIndexOutcome.failed(
                            index, error.code(), error.codeName(), error.message(), error.details(), transientError));
                }
            } else if (command.ordered() && firstError >= 0 && position > firstError) {
                if (interruptedOrdered
                        && reply.error(firstError).code() == ErrorCodes.MAX_TIME_MS_EXPIRED
                        && binding.mayBeMongos()) {
                    unknown(
                            index,
                            "in the batch of index " + command.index(firstError) + ": "
                                    + routerDeadline(reply.error(firstError).message()));
                } else if (interruptedOrdered) {
                    unknown(
                            index,
                            "the server failed the batch at index " + command.index(firstError) + " ("
                                    + reply.error(firstError).code()
                                    + "), which may have applied this write before the interruption point");
                } else {
                    outcome.set(RecordedIndexOutcome.skipped(
                            index,
                            command.index(firstError),
                            "not run: the bulk keeps the caller's order and stopped after index "
                                    + command.index(firstError) + " failed"));
                }
            } else {
                outcome.set(RecordedIndexOutcome.applied(index));
                if (!countedBefore(command, position)) {
                    recordIdOf(command, position, index, reply);
                }
                if (command.size() == 1 && command.type() != WriteCommand.CommandType.INSERT) {
                    // Alone in its command: the command's counts are this write's own (verbose client results).
                    outcome.statementCounts(
                            index,
                            new WriteOutcome.StatementCounts(
                                    command.type() == WriteCommand.CommandType.DELETE, reply.n(), reply.nModified()));
                }
            }
        }
        // A settle's reply replays what the recorded earlier reply counted already (write_ops_retryability.cpp answers
        // an executed statement from its record with its n and nModified): only the rest is added.
        int n = reply.n() - (alreadyCounted == null ? 0 : alreadyCounted.n());
        int nModified = reply.nModified() - (alreadyCounted == null ? 0 : alreadyCounted.nModified());
        int upserted = reply.upsertedCount() - (alreadyCounted == null ? 0 : alreadyCounted.upsertedCount());
        if (n > 0 || nModified > 0 || alreadyCounted == null) {
            // A switch expression, so that a new command type does not compile until its counts are said.
            RecordedWriteOutcome.Builder<T> counted = switch (command.type()) {
                case INSERT -> outcome.counts(n, 0, 0, 0);
                case UPDATE -> outcome.counts(0, n - upserted, nModified, 0);
                case DELETE -> outcome.counts(0, 0, 0, n);
            };
        }
        if (reply.writeConcernError() != null) {
            outcome.writeConcernError(reply.writeConcernError());
            // Applied on the primary, durability not confirmed: a failover before it replicates rolls it back.
            String reason = writeConcernFailedReason(reply.writeConcernError());
            for (int position = 0; position < command.size(); position++) {
                int index = command.index(position);
                if (outcome.get(index).status() == WriteStatus.APPLIED) {
                    outcome.set(RecordedIndexOutcome.writeConcernFailed(
                            index, reason, RetrySafety.ofNewCopy(plan, index, registry)));
                }
            }
        }
        if (reply.errorCount() > 0 || reply.writeConcernError() != null) {
            outcome.errorLabels(reply.errorLabels());
        }
    }

    /**
     * Whether the earlier reply a settle follows counted this statement (and recorded its id): it ran there, no error,
     * and not after an ORDERED command's failed statement.
     */
    private boolean countedBefore(WriteCommand command, int position) {
        if (alreadyCounted == null) {
            return false;
        }
        int firstError = alreadyCounted.firstErrorPosition();
        if (firstError < 0) {
            return true;
        }
        return alreadyCounted.error(position) == null && !(command.ordered() && position > firstError);
    }

    private void recordIdOf(WriteCommand command, int position, int index, CommandReply reply) {
        if (command.type() == WriteCommand.CommandType.INSERT) {
            plan.id(index).ifPresent(id -> outcome.insert(new BulkWriteInsert(index, id)));
        } else if (reply.upsertedId(position) != null) {
            outcome.upsert(new BulkWriteUpsert(index, reply.upsertedId(position)));
        }
    }

    private void failAll(WriteCommand command, MongoException error) {
        int code = error.getCode();
        String codeName = error instanceof MongoCommandException commandError ? commandError.getErrorCodeName() : "";
        boolean retrySafe =
                command.retryable() && RetryClassifier.isTransient(code, error.hasErrorLabel("RetryableWriteError"));
        for (int position = 0; position < command.size(); position++) {
            outcome.set(RecordedIndexOutcome.failed(
                    command.index(position), code, codeName, describe(error), null, retrySafe));
        }
    }

    /**
     * Records every statement of {@code command} as UNKNOWN for {@code reason}.
     *
     * @return why the call stops
     */
    String unknown(WriteCommand command, String reason) {
        for (int position = 0; position < command.size(); position++) {
            unknown(command.index(position), reason);
        }
        return unknownStops(command);
    }

    private static String unknownStops(WriteCommand command) {
        return "the outcome of the command of index " + command.index(0) + " is unknown, which stops the bulk as a"
                + " network error stops the driver's";
    }

    private void unknown(int index, String reason) {
        outcome.set(RecordedIndexOutcome.unknown(index, reason, RetrySafety.ofNewCopy(plan, index, registry)));
    }

    /**
     * Why a write is UNKNOWN after a {@code MaxTimeMSExpired} that mongos may have sent: it stops waiting for a shard at
     * its deadline and reports the shard's statements failed, while the shard may still apply them.
     *
     * @param message the server's message ("Write results unavailable from ..."), or null
     */
    static String routerDeadline(@Nullable String message) {
        return "mongos answered MaxTimeMSExpired (50" + (message == null || message.isEmpty() ? "" : ": " + message)
                + "): it stops waiting for the shard at its deadline, which may still apply the write or have applied"
                + " it";
    }

    /** Why a write the primary applied is UNKNOWN after a write-concern error. */
    static String writeConcernFailedReason(BsonDocument error) {
        return "applied on the primary, but its write concern failed ("
                + error.getNumber("code", new BsonInt32(0)).intValue()
                + " " + error.getString("codeName", new BsonString("")).getValue()
                + "): a failover before it replicates"
                + " rolls it back";
    }

    private static String describe(MongoException e) {
        if (e.getCode() == ErrorCodes.MAX_TIME_MS_EXPIRED) {
            return "the server stopped this write at its deadline (MaxTimeMSExpired)";
        }
        return e.getClass().getSimpleName() + " " + e.getCode() + ": " + e.getMessage();
    }
}
