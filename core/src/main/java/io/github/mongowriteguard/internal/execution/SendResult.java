package io.github.mongowriteguard.internal.execution;

import com.mongodb.MongoException;
import io.github.mongowriteguard.copies.CopyRecord;
import io.github.mongowriteguard.internal.Retryable;
import io.github.mongowriteguard.internal.command.CommandReply;
import io.github.mongowriteguard.internal.server.ErrorCodes;
import io.github.mongowriteguard.internal.server.RetryClassifier;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.jspecify.annotations.Nullable;

/**
 * What one send of a write command came back with: one record per kind of ending, each carrying only what that ending
 * has (a reply, an error, the copy still running), read by {@code instanceof} patterns. The questions the send loop
 * asks of every ending whose answer differs by ending ({@link #code()}, {@link #worthRetrying()}) are abstract, so a
 * new kind of ending does not compile until it answers them; only a reply or a server error can prove an outcome, hit
 * the deadline or report a lost answer.
 */
sealed interface SendResult extends Retryable {

    /** The server answered with {@code ok: 1} (statement write errors included); its reply, parsed once. */
    record Reply(CommandReply reply) implements SendResult {
        /**
         * All statements succeeded or failed for reasons of their own: the reply shows what the copy did. A transient
         * statement error (a deadline, an interruption) shows nothing about an earlier send, which may have held the
         * session the resend waited for.
         */
        @Override
        public boolean provesOutcome() {
            return !reply.anyErrorCode(code -> RetryClassifier.isTransient(code, false));
        }

        /** Through mongos, which turns a failed child batch into one write error per statement. */
        @Override
        public boolean hitDeadline() {
            return reply.anyErrorCode(code -> code == ErrorCodes.MAX_TIME_MS_EXPIRED);
        }

        @Override
        public boolean lostAnswer() {
            return reply.anyErrorCode(ErrorCodes::isLostAnswer);
        }

        @Override
        public boolean worthRetrying() {
            if (reply.anyErrorCode(code -> RetryClassifier.isTransient(code, false))) {
                return true;
            }
            // A retryable write-concern error (PrimarySteppedDown while waiting for the majority, ...): the
            // retryable-writes specification resends, so the new primary returns the recorded result or applies it.
            BsonDocument writeConcernError = reply.writeConcernError();
            return writeConcernError != null
                    && RetryClassifier.isTransient(
                            writeConcernError
                                    .getNumber("code", new BsonInt32(0))
                                    .intValue(),
                            reply.errorLabels().contains("RetryableWriteError"));
        }

        @Override
        public int code() {
            return 0;
        }

        @Override
        public String toString() {
            return "REPLY";
        }
    }

    /** An ending with an error: the server's for the whole command, or the client's. */
    sealed interface Failure extends SendResult {
        MongoException error();

        @Override
        default int code() {
            return error().getCode();
        }
    }

    /** The server answered with an error for the whole command. */
    record ServerError(MongoException error) implements Failure {
        /** A top-level {@code MaxTimeMSExpired}. */
        @Override
        public boolean hitDeadline() {
            return error.getCode() == ErrorCodes.MAX_TIME_MS_EXPIRED;
        }

        @Override
        public boolean worthRetrying() {
            return RetryClassifier.isTransient(error.getCode(), error.hasErrorLabel("RetryableWriteError"));
        }

        @Override
        public String toString() {
            return describe("SERVER_ERROR", error);
        }
    }

    /** The client stopped waiting (socket timeout, closed connection): the server may still run the copy. */
    record GaveUp(MongoException error) implements Failure {
        @Override
        public boolean worthRetrying() {
            return true;
        }

        @Override
        public String toString() {
            return describe("GAVE_UP", error);
        }
    }

    /** No server could be selected: nothing was sent. */
    record NoServer(MongoException error) implements Failure {
        @Override
        public boolean worthRetrying() {
            return true;
        }

        @Override
        public String toString() {
            return describe("NO_SERVER", error);
        }
    }

    /**
     * The overlap gate refused the next attempt: a copy still runs.
     *
     * @param last        the last send's result, which the refused attempt would have retried
     * @param runningCopy the copy that still runs
     */
    record Refused(SendResult last, CopyRecord runningCopy) implements SendResult {
        /** The send loop has stopped: the gate allowed no further attempt. */
        @Override
        public boolean worthRetrying() {
            return false;
        }

        @Override
        public int code() {
            return last.code();
        }

        @Override
        public String toString() {
            return describe("REFUSED", errorOf(last));
        }
    }

    /**
     * The overlap gate could not see whether a copy still runs, and the next attempt would be a new copy.
     *
     * @param last the last send's result, which the attempt not made would have retried
     */
    record Blind(SendResult last) implements SendResult {
        /** The send loop has stopped: the gate allowed no further attempt. */
        @Override
        public boolean worthRetrying() {
            return false;
        }

        @Override
        public int code() {
            return last.code();
        }

        @Override
        public String toString() {
            return describe("BLIND", errorOf(last));
        }
    }

    static SendResult reply(BsonDocument reply) {
        return new Reply(CommandReply.of(reply));
    }

    static SendResult serverError(MongoException error) {
        return new ServerError(error);
    }

    static SendResult gaveUp(MongoException error) {
        return new GaveUp(error);
    }

    static SendResult noServer(MongoException error) {
        return new NoServer(error);
    }

    /** This result, with the gate's refusal of the next attempt. */
    default SendResult refused(CopyRecord copy) {
        return new Refused(this, copy);
    }

    /** This result, with the gate blind to whether the copy still runs. */
    default SendResult blind() {
        return new Blind(this);
    }

    /**
     * Whether this answer shows what the copy did, even if an earlier send got no answer: only a {@link Reply} can.
     */
    default boolean provesOutcome() {
        return false;
    }

    /**
     * True when the server stopped the command at its deadline: a top-level {@code MaxTimeMSExpired}, or (through
     * mongos) statement errors with that code.
     */
    default boolean hitDeadline() {
        return false;
    }

    /** A reply in which mongos says it lost a shard's answer for some statement: the shard may have applied it. */
    default boolean lostAnswer() {
        return false;
    }

    /** The error's code, 0 for a reply. */
    int code();

    /** True when sending the same command again is useful (safety is decided by the caller: no multi-document writes). */
    @Override
    boolean worthRetrying();

    /** The error the result ended with (a refusal's or a blind gate's: the last send's), or null after a reply. */
    static @Nullable MongoException errorOf(SendResult result) {
        if (result instanceof Failure failure) {
            return failure.error();
        }
        if (result instanceof Refused refused) {
            return errorOf(refused.last());
        }
        if (result instanceof Blind blind) {
            return errorOf(blind.last());
        }
        return null;
    }

    private static String describe(String ending, @Nullable MongoException error) {
        return ending + (error == null ? "" : " " + error.getClass().getSimpleName() + " " + error.getCode());
    }
}
