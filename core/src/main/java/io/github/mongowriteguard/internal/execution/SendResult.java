package io.github.mongowriteguard.internal.execution;

import com.mongodb.MongoException;
import io.github.mongowriteguard.copies.CopyRecord;
import io.github.mongowriteguard.internal.Retryable;
import io.github.mongowriteguard.internal.command.CommandReply;
import io.github.mongowriteguard.internal.server.ErrorCodes;
import io.github.mongowriteguard.retry.RetryClassifier;
import org.bson.BsonDocument;
import org.jspecify.annotations.Nullable;

/** What one send of a write command came back with. */
final class SendResult implements Retryable {

    enum Ending {
        /** The server answered with {@code ok: 1} (statement write errors included). */
        REPLY,
        /** The server answered with an error for the whole command. */
        SERVER_ERROR,
        /** The client stopped waiting (socket timeout, closed connection): the server may still run the copy. */
        GAVE_UP,
        /** No server could be selected: nothing was sent. */
        NO_SERVER,
        /** The overlap gate refused the next attempt: a copy still runs. */
        REFUSED,
        /** The overlap gate could not see whether a copy still runs, and the next attempt would be a new copy. */
        BLIND
    }

    final Ending ending;
    /** The server's reply, parsed once, for {@link Ending#REPLY} (kept when a refusal replaces the result). */
    final @Nullable CommandReply reply;

    final @Nullable MongoException error;
    final @Nullable CopyRecord runningCopy;

    private SendResult(
            Ending ending,
            @Nullable CommandReply reply,
            @Nullable MongoException error,
            @Nullable CopyRecord runningCopy) {
        this.ending = ending;
        this.reply = reply;
        this.error = error;
        this.runningCopy = runningCopy;
    }

    static SendResult reply(BsonDocument reply) {
        return new SendResult(Ending.REPLY, CommandReply.of(reply), null, null);
    }

    static SendResult serverError(MongoException error) {
        return new SendResult(Ending.SERVER_ERROR, null, error, null);
    }

    static SendResult gaveUp(MongoException error) {
        return new SendResult(Ending.GAVE_UP, null, error, null);
    }

    static SendResult noServer(MongoException error) {
        return new SendResult(Ending.NO_SERVER, null, error, null);
    }

    SendResult refused(CopyRecord copy) {
        return new SendResult(Ending.REFUSED, reply, error, copy);
    }

    SendResult blind() {
        return new SendResult(Ending.BLIND, reply, error, null);
    }

    /**
     * Whether this answer shows what the copy did, even if an earlier send got no answer: a reply whose statements
     * all succeeded or failed for reasons of their own. A resend of the same copy gets the recorded result of what
     * the first send applied; a transient error (a deadline, an interruption) shows nothing about the first send,
     * which may have held the session the resend waited for.
     */
    boolean provesOutcome() {
        if (ending != Ending.REPLY) {
            return false;
        }
        for (int position : reply.errorPositions()) {
            if (RetryClassifier.isTransient(reply.error(position).code(), false)) {
                return false;
            }
        }
        return true;
    }

    /**
     * True when the server stopped the command at its deadline: a top-level {@code MaxTimeMSExpired}, or (through
     * mongos, which turns a failed child batch into one write error per statement) statement errors with that code.
     */
    boolean hitDeadline() {
        if (ending == Ending.SERVER_ERROR) {
            return error.getCode() == ErrorCodes.MAX_TIME_MS_EXPIRED;
        }
        if (ending == Ending.REPLY) {
            return reply.errorPositions().stream()
                    .anyMatch(position -> reply.error(position).code() == ErrorCodes.MAX_TIME_MS_EXPIRED);
        }
        return false;
    }

    /** A reply in which mongos says it lost a shard's answer for some statement: the shard may have applied it. */
    boolean lostAnswer() {
        if (ending != Ending.REPLY) {
            return false;
        }
        for (int position : reply.errorPositions()) {
            if (ErrorCodes.isLostAnswer(reply.error(position).code())) {
                return true;
            }
        }
        return false;
    }

    int code() {
        return error == null ? 0 : error.getCode();
    }

    /** True when sending the same command again is useful (safety is decided by the caller: no multi-document writes). */
    @Override
    public boolean worthRetrying() {
        switch (ending) {
            case GAVE_UP:
            case NO_SERVER:
                return true;
            case SERVER_ERROR:
                return RetryClassifier.isTransient(error.getCode(), error.hasErrorLabel("RetryableWriteError"));
            case REPLY:
                for (int position : reply.errorPositions()) {
                    if (RetryClassifier.isTransient(reply.error(position).code(), false)) {
                        return true;
                    }
                }
                // A retryable write-concern error (PrimarySteppedDown while waiting for the majority, ...): the
                // retryable-writes specification resends, so the new primary returns the recorded result or applies it.
                org.bson.BsonDocument writeConcernError = reply.writeConcernError();
                return writeConcernError != null
                        && RetryClassifier.isTransient(
                                writeConcernError
                                        .getNumber("code", new org.bson.BsonInt32(0))
                                        .intValue(),
                                reply.errorLabels().contains("RetryableWriteError"));
            default:
                return false;
        }
    }

    @Override
    public String toString() {
        return ending + (error == null ? "" : " " + error.getClass().getSimpleName() + " " + error.getCode());
    }
}
