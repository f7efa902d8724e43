package io.github.mongowriteguard.internal.execution;

import com.mongodb.ClientBulkWriteException;
import com.mongodb.MongoException;
import com.mongodb.MongoNamespace;
import com.mongodb.MongoTimeoutException;
import com.mongodb.MongoWriteException;
import com.mongodb.ServerAddress;
import com.mongodb.WriteConcernResult;
import com.mongodb.WriteError;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.bulk.WriteConcernError;
import com.mongodb.client.model.bulk.ClientBulkWriteResult;
import io.github.mongowriteguard.copies.CopyRecord;
import io.github.mongowriteguard.exception.CopyStillRunningException;
import io.github.mongowriteguard.exception.GuardedBulkWriteException;
import io.github.mongowriteguard.exception.GuardedWriteConcernException;
import io.github.mongowriteguard.exception.GuardedWriteException;
import io.github.mongowriteguard.exception.ServerDeadlineExceededException;
import io.github.mongowriteguard.exception.WriteOutcomeUnknownException;
import io.github.mongowriteguard.internal.command.CommandReply;
import io.github.mongowriteguard.internal.server.ErrorCodes;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;

/**
 * The one place that turns a guarded call's outcome into what the driver's method would throw (driver-sync
 * {@code MongoCollectionImpl}: a bulk throws {@code MongoBulkWriteException} or the failed command's exception; a
 * single-write method turns the bulk exception into {@code MongoWriteException} or {@code MongoWriteConcernException}),
 * typed where the guard knows more (a copy still running, an unknown outcome, its own deadline). Every guard exception
 * carries the complete outcome. What each guarded method throws, by its {@link ThrowPolicy}:
 *
 * <ul>
 *   <li>{@code bulkWrite}, {@code insertMany} ({@link ThrowPolicy#BULK}): {@link #throwIfNotComplete};
 *   <li>{@code insertOne}, {@code replaceOne}, {@code updateOne}, {@code updateMany}, {@code deleteOne},
 *       {@code deleteMany} ({@link ThrowPolicy#SINGLE_WRITE}): {@link #throwIfNotApplied};
 *   <li>the client-level {@code bulkWrite} ({@link ThrowPolicy#CLIENT_BULK}): {@link #throwIfClientBulkNotComplete};
 *   <li>{@code findOneAndDelete}, {@code findOneAndReplace}, {@code findOneAndUpdate}:
 *       {@link #throwIfFindAndModifyNotApplied} (from the reply of its one command);
 *   <li>the guard's own {@code execute}, of a collection or a client ({@link ThrowPolicy#OUTCOME_ONLY}): nothing for
 *       what the writes came to, every failure is in the outcome.
 * </ul>
 *
 * <p>The driver's own exception, as it is, only when nothing in the call can have applied ({@link #mayHaveApplied}:
 * no write APPLIED or UNKNOWN, no multi-document write that failed part-way, no write-concern error), earlier commands
 * included; otherwise the guard's exception, which carries the outcome (the driver's bulk throws a failed command's
 * exception as it is even after earlier batches applied, and a single write's {@code MongoWriteException} or
 * {@code MongoWriteConcernException} after documents changed).
 *
 * <p>Bad input is refused before anything is sent ({@code InvalidBulkException}, {@code IllegalArgumentException}).
 * Every method here runs inside the call's observation, which records what it throws. Not API.
 */
final class DriverExceptions {
    private DriverExceptions() {}

    /** Throws what {@code policy} says for a collection's {@code outcome}, or nothing. */
    static void apply(ThrowPolicy policy, WriteOutcome<?> outcome, MongoNamespace namespace, long maxTimeMs) {
        apply(policy, outcome, namespace, maxTimeMs, false);
    }

    /**
     * Throws what {@code policy} says for {@code outcome}, or nothing: every guarded call's exception but a
     * {@code findOneAndX}'s ({@link #throwIfFindAndModifyNotApplied}) is decided here.
     *
     * @param where          what the call wrote to, for the messages: a namespace, or a client bulk's namespaces
     * @param verboseResults {@link ThrowPolicy#CLIENT_BULK} only: the partial result holds each write's own result
     */
    static void apply(
            ThrowPolicy policy, WriteOutcome<?> outcome, Object where, long maxTimeMs, boolean verboseResults) {
        // A switch expression, so that a new policy does not compile until it is applied here.
        Runnable check = switch (policy) {
            case OUTCOME_ONLY -> () -> {};
            case BULK -> () -> throwIfNotComplete(outcome, where, maxTimeMs);
            case SINGLE_WRITE -> () -> throwIfNotApplied(outcome, where, maxTimeMs);
            case CLIENT_BULK ->
                () -> throwIfClientBulkNotComplete(
                        outcome, where, maxTimeMs, ClientBulkResults.of(outcome, verboseResults));
        };
        check.run();
    }

    /** For {@code bulkWrite} and {@code insertMany}. */
    static void throwIfNotComplete(WriteOutcome<?> outcome, Object namespace, long maxTimeMs) {
        if (nothingToThrow(outcome)) {
            return;
        }
        throwIfUnknown(outcome, namespace);
        throwIfCommandFailed(outcome, namespace, maxTimeMs);
        throwIfNothingSent(outcome, namespace);
        List<BulkWriteError> errors = new ArrayList<>();
        for (IndexOutcome result : outcome.outcomes()) {
            if (result.status() == WriteStatus.FAILED) {
                errors.add(new BulkWriteError(result.errorCode(), result.message(), result.details(), result.index()));
            }
        }
        WriteConcernError writeConcernError = writeConcernError(outcome);
        if (!errors.isEmpty() || writeConcernError != null || outcome.commandError() != null) {
            GuardedBulkWriteException thrown = new GuardedBulkWriteException(
                    outcome, errors, writeConcernError, address(outcome), outcome.errorLabels());
            if (outcome.commandError() != null) {
                // A whole command failed after other writes of the call applied: its writes are FAILED with its code
                // among the errors above, and the driver's exception is the cause.
                thrown.initCause(outcome.commandError());
            }
            throw thrown;
        }
    }

    /** For the single-write methods: the one write's failure as the driver's single-write method throws it. */
    static void throwIfNotApplied(WriteOutcome<?> outcome, Object namespace, long maxTimeMs) {
        if (nothingToThrow(outcome)) {
            return;
        }
        throwIfUnknown(outcome, namespace);
        throwIfCommandFailed(outcome, namespace, maxTimeMs);
        throwIfNothingSent(outcome, namespace);
        IndexOutcome result = outcome.outcome(0);
        if (result.status() == WriteStatus.FAILED) {
            if (result.errorCode() == ErrorCodes.MAX_TIME_MS_EXPIRED) {
                throw new ServerDeadlineExceededException(
                        "the server stopped this write on " + namespace + " at its deadline (maxTimeMS=" + maxTimeMs
                                + "); it was not applied",
                        outcome);
            }
            WriteError error = new WriteError(result.errorCode(), result.message(), result.details());
            if (result.mayHaveChangedDocuments()) {
                // A multi-document write that failed part-way: what it changed stays changed.
                GuardedWriteException thrown =
                        new GuardedWriteException(outcome, error, address(outcome), outcome.errorLabels());
                if (outcome.commandError() != null) {
                    thrown.initCause(outcome.commandError());
                }
                throw thrown;
            }
            throw new MongoWriteException(error, address(outcome), outcome.errorLabels());
        }
        WriteConcernError writeConcernError = writeConcernError(outcome);
        if (writeConcernError != null) {
            // Applied on the primary: the guard's exception, with the outcome.
            throw new GuardedWriteConcernException(
                    outcome, writeConcernError, writeConcernResult(outcome), address(outcome), outcome.errorLabels());
        }
    }

    /**
     * For the client-level {@code bulkWrite} (driver-core {@code ClientBulkWriteOperation}: write errors and
     * write-concern errors in a {@code ClientBulkWriteException} with the caller's indices and, when some write was
     * applied, the partial result; a failed command before any write ran is thrown as it is, after one it is the
     * exception's cause).
     */
    static void throwIfClientBulkNotComplete(
            WriteOutcome<?> outcome, Object namespaces, long maxTimeMs, ClientBulkWriteResult result) {
        throwIfUnknown(outcome, namespaces);
        MongoException commandError = outcome.commandError();
        if (commandError != null && commandError.getCode() == ErrorCodes.MAX_TIME_MS_EXPIRED) {
            throwIfCommandFailed(outcome, namespaces, maxTimeMs);
        }
        throwIfNothingSent(outcome, namespaces);
        Map<Integer, WriteError> writeErrors = new TreeMap<>();
        for (IndexOutcome index : outcome.outcomes()) {
            if (index.status() == WriteStatus.FAILED) {
                writeErrors.put(index.index(), new WriteError(index.errorCode(), index.message(), index.details()));
            }
        }
        // A part-applied multi-document write counts as applied: the partial result says what it changed.
        boolean anyApplied = mayHaveApplied(outcome);
        WriteConcernError writeConcernError = writeConcernError(outcome);
        if (commandError != null && writeErrors.isEmpty() && !anyApplied) {
            throw commandError;
        }
        if (commandError != null || !writeErrors.isEmpty() || writeConcernError != null) {
            throw new ClientBulkWriteException(
                    commandError,
                    writeConcernError == null ? List.of() : List.of(writeConcernError),
                    writeErrors,
                    anyApplied ? result : null,
                    address(outcome));
        }
    }

    /**
     * For {@code findOneAndDelete}, {@code findOneAndReplace} and {@code findOneAndUpdate} (driver-sync
     * {@code MongoCollectionImpl} runs the driver's {@code FindAndModifyOperation}, which throws the command's
     * exception as it is, and a {@code MongoWriteConcernException} for a write-concern error): the one write's outcome,
     * recorded from {@code last}, the last send's result.
     */
    static void throwIfFindAndModifyNotApplied(
            WriteOutcome<?> outcome, SendResult last, String namespace, long maxTimeMs) {
        IndexOutcome write = outcome.outcome(0);
        if (write.status() == WriteStatus.APPLIED) {
            return;
        }
        if (write.writeConcernFailed() && last instanceof SendResult.Reply answered) {
            BsonDocument reply = answered.reply().document();
            BsonDocument lastError = reply.getDocument("lastErrorObject", new BsonDocument());
            throw new GuardedWriteConcernException(
                    outcome,
                    CommandReply.toWriteConcernError(reply.getDocument("writeConcernError")),
                    WriteConcernResult.acknowledged(
                            lastError.getNumber("n", new BsonInt32(0)).intValue(),
                            lastError
                                    .getBoolean("updatedExisting", BsonBoolean.FALSE)
                                    .getValue(),
                            lastError.get("upserted")),
                    outcome.serverAddress(),
                    answered.reply().errorLabels());
        }
        if (write.status() == WriteStatus.FAILED && last instanceof SendResult.Failure failure) {
            if (!write.wasSent()) {
                throw (MongoTimeoutException) failure.error();
            }
            if (failure.code() == ErrorCodes.MAX_TIME_MS_EXPIRED) {
                throw new ServerDeadlineExceededException(
                        "the server stopped this write on " + namespace + " at its deadline (maxTimeMS=" + maxTimeMs
                                + "); it was not applied",
                        outcome);
            }
            throw failure.error(); // what the driver throws: MongoCommandException and its subclasses
        }
        if (last instanceof SendResult.Refused refused) {
            throw new CopyStillRunningException(
                    "not retried on " + namespace + ": an earlier copy of this write is still"
                            + " running on the server (" + refused.runningCopy()
                            + "); starting another copy could apply it twice",
                    refused.runningCopy(),
                    outcome);
        }
        throw new WriteOutcomeUnknownException(
                "the outcome of this findAndModify on " + namespace + " is unknown: " + write.message(),
                outcome,
                SendResult.errorOf(last));
    }

    /**
     * The common outcome, in one pass: every write applied (or superseded), no command error, no write-concern error,
     * no copy still running. None of the checks below throws for it (nothing UNKNOWN, FAILED or not sent), so they are
     * not walked one by one.
     */
    private static boolean nothingToThrow(WriteOutcome<?> outcome) {
        return outcome.commandError() == null
                && outcome.writeConcernError() == null
                && outcome.stillRunning().isEmpty()
                && outcome.isComplete();
    }

    private static void throwIfUnknown(WriteOutcome<?> outcome, Object namespace) {
        if (!outcome.stillRunning().isEmpty()) {
            CopyRecord copy = outcome.stillRunning().get(0);
            throw new CopyStillRunningException(
                    "not retried on " + namespace + ": an earlier copy of this write is still"
                            + " running on the server and ignores its deadline (" + copy
                            + "); starting another copy could apply it twice."
                            + " Dead-letter the write; the running copy may still apply it",
                    copy,
                    outcome);
        }
        // Writes whose only doubt is a failed write concern are reported as the driver reports a write-concern error.
        // One loop, not two streams: asked on every bulkWrite, which mostly has no unknown write.
        long unknown = 0;
        String reason = "";
        for (IndexOutcome o : outcome.outcomes()) {
            if (o.status() == WriteStatus.UNKNOWN && !o.writeConcernFailed()) {
                if (unknown++ == 0) {
                    reason = o.message();
                }
            }
        }
        if (unknown > 0) {
            throw new WriteOutcomeUnknownException(
                    unknown + " of " + outcome.outcomes().size() + " writes on " + namespace
                            + " have an unknown outcome (" + reason + "); see outcome()",
                    outcome,
                    outcome.commandError());
        }
    }

    /**
     * A whole command failed: the driver's own exception, as the driver's bulk throws it (it sends nothing after), only
     * when nothing in the call can have applied. Otherwise nothing is thrown here, and the caller's policy throws the
     * guard's exception with the outcome and this error as its cause: the driver would hide what applied.
     */
    private static void throwIfCommandFailed(WriteOutcome<?> outcome, Object namespace, long maxTimeMs) {
        MongoException error = outcome.commandError();
        if (error == null) {
            return;
        }
        if (error.getCode() == ErrorCodes.MAX_TIME_MS_EXPIRED) {
            throw new ServerDeadlineExceededException(
                    "the server stopped this write on " + namespace + " at its deadline" + " (maxTimeMS=" + maxTimeMs
                            + "); it was not applied, and later writes were not sent"
                            + (mayHaveApplied(outcome) ? "; other writes of this call were applied" : "")
                            + "; see outcome()",
                    outcome);
        }
        if (!mayHaveApplied(outcome)) {
            throw error;
        }
    }

    /**
     * Whether anything in the call can have applied: a write APPLIED or UNKNOWN (a write-concern failure included), a
     * multi-document write that failed part-way, or a write-concern error. Only when none can may a driver-style
     * method throw a driver exception that carries no outcome.
     */
    static boolean mayHaveApplied(WriteOutcome<?> outcome) {
        if (outcome.writeConcernError() != null) {
            return true;
        }
        for (IndexOutcome result : outcome.outcomes()) {
            WriteStatus status = result.status();
            if (status == WriteStatus.APPLIED
                    || status == WriteStatus.UNKNOWN
                    || (status == WriteStatus.FAILED && result.mayHaveChangedDocuments())) {
                return true;
            }
        }
        return false;
    }

    /**
     * When no write of the call reached a server, throws what the driver throws then: a {@link MongoTimeoutException}.
     * Nothing was applied, so the caller (Spring Kafka's error handler, for one) may send it all again.
     */
    private static void throwIfNothingSent(WriteOutcome<?> outcome, Object namespace) {
        boolean anyNotSent = false;
        for (IndexOutcome result : outcome.outcomes()) {
            if (result.status() == WriteStatus.FAILED && !result.wasSent()) {
                anyNotSent = true;
            } else if (result.status() != WriteStatus.SKIPPED && result.status() != WriteStatus.SUPERSEDED) {
                return; // something was applied, failed on a server, or may still run: the outcome says what
            }
        }
        if (anyNotSent) {
            throw new MongoTimeoutException("none of the " + outcome.outcomes().size() + " writes on " + namespace
                    + " was sent: no attempt reached a server (none could be selected, or no connection was free, in time)."
                    + " Nothing was applied; sending them again is safe");
        }
    }

    private static WriteConcernError writeConcernError(WriteOutcome<?> outcome) {
        BsonDocument error = outcome.writeConcernError();
        if (error == null) {
            return null;
        }
        return CommandReply.toWriteConcernError(error);
    }

    /** As the driver's {@code translateBulkWriteResult} for one write. */
    private static WriteConcernResult writeConcernResult(WriteOutcome<?> outcome) {
        if (outcome.insertedCount() > 0 || outcome.deletedCount() > 0) {
            return WriteConcernResult.acknowledged(outcome.insertedCount() + outcome.deletedCount(), false, null);
        }
        return WriteConcernResult.acknowledged(
                outcome.matchedCount() + outcome.upserts().size(),
                outcome.matchedCount() > 0,
                outcome.upserts().isEmpty() ? null : outcome.upserts().get(0).getId());
    }

    private static ServerAddress address(WriteOutcome<?> outcome) {
        return outcome.serverAddress() != null ? outcome.serverAddress() : new ServerAddress();
    }
}
