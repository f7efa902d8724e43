package io.github.mongowriteguard.internal.execution;

import com.mongodb.MongoException;
import io.github.mongowriteguard.internal.command.CommandReply;
import io.github.mongowriteguard.internal.server.ErrorCodes;
import io.github.mongowriteguard.internal.server.RetryClassifier;
import java.util.Set;

/**
 * Whether a server error proves that the send it answers applied nothing, decided per error code from the server
 * source. Only then may a guarded call throw the driver's exception for it; otherwise the write is UNKNOWN. The table,
 * also in the README:
 *
 * <table>
 * <caption>What a server error proves about the send it answers</caption>
 * <tr><th>error</th><th>proves nothing was applied</th><th>why (mongodb/mongo)</th></tr>
 * <tr><td>any error labelled {@code NoWritesPerformed}</td><td>yes</td><td>{@code src/mongo/db/error_labels.cpp}
 *     {@code isErrorWithNoWritesPerformed}: the client's last op time did not move while the command ran</td></tr>
 * <tr><td>{@code NotWritablePrimary} (10107), {@code NotPrimaryNoSecondaryOk} (13435),
 *     {@code NotPrimaryOrSecondary} (13436)</td><td>yes</td><td>as a whole-command error they come from the check
 *     before the command runs ({@code service_entry_point_common.cpp}); inside the statements' loop a not-primary
 *     error is a statement write error ({@code write_ops_exec.cpp} {@code handleError})</td></tr>
 * <tr><td>{@code StaleConfig} (13388), {@code StaleEpoch} (150), {@code StaleDbVersion} (249)</td><td>yes</td>
 *     <td>the shard checks the routing version before it writes the statement; {@code handleError} records it and
 *     stops the batch</td></tr>
 * <tr><td>an interruption (24, 50, 262, 279, 11600, 11601, 11602)</td><td>only for one single-document
 *     statement on a {@code mongod}</td><td>{@code handleError} fails the whole batch on an interruption ("These have
 *     always failed the whole batch") after the statements before it committed; a multi-document write commits
 *     document by document. One statement writes in one {@code WriteUnitOfWork}: an interruption inside it rolls it
 *     back, and none is checked after its commit ({@code finishCurOp} ignores every error, "We don't want a successful
 *     op to fail"; a write-concern wait that ends at the deadline is a {@code writeConcernError}, not the command's
 *     error)</td></tr>
 * <tr><td>{@code MaxTimeMSExpired} (50) or {@code Interrupted} (11601) from mongos</td><td>no</td><td>
 *     {@code src/mongo/s/async_requests_sender.cpp}: at the operation's deadline, or when it is killed
 *     ({@code killOp}, {@code killSessions}), the router stops waiting and gives every outstanding shard request the
 *     interrupt status; {@code src/mongo/s/write_ops/batch_write_exec.cpp} turns it into that write error ("Write results
 *     unavailable from ...") for the child batch's statements, while the shard may still apply them</td></tr>
 * <tr><td>{@code PrimarySteppedDown} (189), {@code ShutdownInProgress} (91), any other retryable code or
 *     {@code RetryableWriteError} label, a network error mongos reports</td><td>no</td><td>{@code error_codes.yml}:
 *     the not-primary category "includes all codes that indicate that the node ... was not primary at some point
 *     during command processing, regardless of whether some write may have happened"; a stepdown while the write
 *     waits for its write concern, or a lost shard answer</td></tr>
 * <tr><td>any other code (validation, authorization, parsing, ...)</td><td>yes</td><td>every other error inside the
 *     statements' loop is a statement write error, so a whole-command error with it came before the
 *     statements</td></tr>
 * </table>
 *
 * A fail point's error ({@code failCommand}) is answered before the command runs, but it carries no
 * {@code NoWritesPerformed} (the op time before the run is not taken yet), so nothing tells it from a real one of the
 * same code: the table decides by code.
 */
final class RefusalProof {
    /**
     * Codes raised before anything is written: the not-primary check before the command runs, and the routing checks
     * ({@code StaleConfig} 13388, {@code StaleEpoch} 150, {@code StaleDbVersion} 249) a shard makes before it writes a
     * statement, after which {@code handleError} stops the batch.
     */
    private static final Set<Integer> BEFORE_THE_WRITE = Set.of(10107, 13435, 13436, 13388, 150, 249);

    /**
     * Codes mongos' own operation ends with while it waits for its shards: its deadline ({@code MaxTimeMSExpired} 50)
     * and a kill of it ({@code Interrupted} 11601: {@code killOp}, or {@code killSessions}, which kills mongos' own
     * operations of the sessions, {@code src/mongo/s/kill_sessions_remote.cpp}). {@code AsyncRequestsSender::next}
     * gives that status to every outstanding child batch ({@code src/mongo/s/async_requests_sender.cpp}) while the
     * shard may still apply it, so through mongos they prove nothing even for one single-document statement.
     */
    private static final Set<Integer> ROUTER_INTERRUPTIONS = Set.of(ErrorCodes.MAX_TIME_MS_EXPIRED, 11601);

    private RefusalProof() {}

    /**
     * Whether a whole-command error proves this send applied nothing.
     *
     * @param oneSingleDocumentStatement whether the command is one statement that writes at most one document
     */
    static boolean provesNothingApplied(MongoException error, boolean oneSingleDocumentStatement, boolean mayBeMongos) {
        return provesNothingApplied(
                error.getCode(),
                error.hasErrorLabel("NoWritesPerformed"),
                error.hasErrorLabel("RetryableWriteError"),
                oneSingleDocumentStatement,
                mayBeMongos);
    }

    /**
     * Whether an error with {@code code} proves the send (or, for a statement error, the statement's batch) applied
     * nothing.
     *
     * @param mayBeMongos whether mongos may have answered: its {@code MaxTimeMSExpired} proves nothing about a shard
     */
    static boolean provesNothingApplied(
            int code,
            boolean noWritesPerformed,
            boolean retryableWriteError,
            boolean oneSingleDocumentStatement,
            boolean mayBeMongos) {
        if (noWritesPerformed || BEFORE_THE_WRITE.contains(code)) {
            return true;
        }
        if (mayBeMongos && ROUTER_INTERRUPTIONS.contains(code)) {
            return false;
        }
        if (ErrorCodes.isInterruption(code)) {
            return oneSingleDocumentStatement;
        }
        return !retryableWriteError && !ErrorCodes.isLostAnswer(code) && !RetryClassifier.isTransient(code, false);
    }

    /**
     * Whether an earlier send of the copy may have applied something no later answer proved: a send without an answer,
     * a reply that ran statements, or an error that does not prove it applied nothing. A resend's refusal (a
     * {@code NotWritablePrimary} from the node that is no longer primary) says nothing about what an earlier send did.
     */
    static boolean anEarlierSendMayHaveApplied(
            CopySender.Sent sent, boolean oneSingleDocumentStatement, boolean mayBeMongos) {
        if (sent.unanswered()) {
            return true;
        }
        for (SendResult earlier : sent.earlier()) {
            if (earlier instanceof SendResult.ServerError serverError
                    && !provesNothingApplied(serverError.error(), oneSingleDocumentStatement, mayBeMongos)) {
                return true;
            }
            if (earlier instanceof SendResult.Reply reply
                    && ranAStatement(reply.reply(), oneSingleDocumentStatement, mayBeMongos)) {
                return true;
            }
        }
        return false;
    }

    /** A reply in which some statement wrote ({@code n > 0}), or failed with an error that does not prove it did not. */
    private static boolean ranAStatement(CommandReply reply, boolean oneSingleDocumentStatement, boolean mayBeMongos) {
        if (reply.n() > 0) {
            return true;
        }
        return reply.anyErrorCode(
                code -> !provesNothingApplied(code, false, false, oneSingleDocumentStatement, mayBeMongos));
    }
}
