package io.github.mongowriteguard.testkit.node;

import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;

/**
 * The error labels a 4.4+ server attaches itself (before 4.4 the driver derives them): a retryable write that
 * fails with a retryable error code, at the top level or in its write-concern error, gets
 * {@code RetryableWriteError} ({@code ErrorCodes::isRetriableError}: the {@code RetriableError} category of mongodb/mongo
 * {@code src/mongo/base/error_codes.yml}; ReadConcernMajorityNotAvailableYet (134) is in it too, and 6.0 adds
 * InternalTransactionNotSupported (358) with internal transactions). From 6.0, {@code NoWritesPerformed} follows it
 * when the command wrote nothing ({@code error_labels.cpp} {@code ErrorLabelBuilder::build}).
 */
final class ErrorLabels {
    static final Set<Integer> RETRYABLE_CODES =
            Set.of(6, 7, 89, 91, 134, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436);
    private static final Set<String> RETRYABLE_WRITE_COMMANDS =
            Set.of("insert", "update", "delete", "findAndModify", "findandmodify");

    private ErrorLabels() {}

    static boolean isRetryableWrite(BsonDocument command) {
        return command.containsKey("txnNumber")
                && !command.containsKey("autocommit")
                && RETRYABLE_WRITE_COMMANDS.contains(command.getFirstKey());
    }

    /**
     * Adds {@code RetryableWriteError} (and from 6.0 {@code NoWritesPerformed} when {@code noWritesPerformed}) to
     * {@code reply} where a mongod of {@code version} would.
     */
    static void addServerLabels(
            BsonDocument command,
            BsonDocument reply,
            io.github.mongowriteguard.testkit.server.ServerVersion version,
            boolean noWritesPerformed) {
        // error_labels.cpp isRetryableWriteError: any command with txnNumber and without autocommit (8.0's bulkWrite
        // included), not only the write commands.
        if (!command.containsKey("txnNumber") || command.containsKey("autocommit")) {
            return;
        }
        boolean retryable = reply.containsKey("code")
                && reply.getNumber("ok").doubleValue() == 0
                && isRetriable(reply.getNumber("code").intValue(), version);
        if (reply.containsKey("writeConcernError")) {
            BsonDocument wce = reply.getDocument("writeConcernError");
            retryable |=
                    wce.containsKey("code") && isRetriable(wce.getNumber("code").intValue(), version);
        }
        if (retryable) {
            add(reply, "RetryableWriteError");
            if (noWritesPerformed && version.atLeast(io.github.mongowriteguard.testkit.server.ServerVersion.V6_0)) {
                add(reply, "NoWritesPerformed");
            }
        }
    }

    /**
     * The labels of a transaction's command ({@code autocommit} present), {@code ErrorLabelBuilder::build} in
     * mongodb/mongo {@code src/mongo/db/error_labels.cpp}: {@code TransientTransactionError} for WriteConflict (112),
     * LockTimeout (24), the snapshot errors, and {@code NoSuchTransaction} (251, on commit or abort only without a
     * write-concern error) or any retryable code on other statements; otherwise {@code RetryableWriteError} for a
     * retryable code (or write-concern error code) of {@code commitTransaction}/{@code abortTransaction}, never to an
     * internal client. {@code UnknownTransactionCommitResult} is the driver's own label, not the server's.
     */
    static void addTransactionLabels(
            BsonDocument command,
            BsonDocument reply,
            io.github.mongowriteguard.testkit.server.ServerVersion version,
            boolean internalClient) {
        if (!command.containsKey("autocommit") || !command.containsKey("txnNumber")) {
            return;
        }
        boolean failed = reply.containsKey("code") && reply.getNumber("ok").doubleValue() == 0;
        boolean commitOrAbort = command.getFirstKey().equals("commitTransaction")
                || command.getFirstKey().equals("abortTransaction");
        boolean hasWce = reply.containsKey("writeConcernError");
        if (failed) {
            int code = reply.getNumber("code").intValue();
            boolean transient_ = TRANSIENT_CODES.contains(code)
                    || (commitOrAbort ? code == 251 && !hasWce : isRetriable(code, version) || code == 251);
            if (transient_) {
                add(reply, "TransientTransactionError");
                return;
            }
        }
        if (commitOrAbort && !internalClient) {
            boolean retryable = failed && isRetriable(reply.getNumber("code").intValue(), version);
            if (hasWce) {
                BsonDocument wce = reply.getDocument("writeConcernError");
                retryable |= wce.containsKey("code")
                        && isRetriable(wce.getNumber("code").intValue(), version);
            }
            if (retryable) {
                add(reply, "RetryableWriteError");
            }
        }
    }

    /**
     * The codes {@code isTransientTransactionError} (mongodb/mongo {@code src/mongo/db/error_labels.cpp}) names or takes
     * by category ({@code src/mongo/base/error_codes.yml}): WriteConflict (112), LockTimeout (24),
     * PreparedTransactionInProgress (267), ShardCannotRefreshDueToLocksHeld (343), StaleDbVersion (249); the
     * {@code SnapshotError} category SnapshotTooOld (239), SnapshotUnavailable (246), StaleChunkHistory (250),
     * MigrationConflict (272); the {@code NeedRetargettingError} category StaleConfig (13388), StaleEpoch (150). The
     * retryable codes and NoSuchTransaction are added where they apply. (241 is ConversionFailure, not one of them.)
     */
    private static final Set<Integer> TRANSIENT_CODES = Set.of(112, 24, 267, 343, 249, 239, 246, 250, 272, 13388, 150);

    /**
     * {@code isTransientTransactionError(code, false, false)} of {@code error_labels.cpp}: a statement error (not
     * commit or abort) after which the whole transaction may be retried.
     */
    static boolean isTransientTransactionError(
            int code, io.github.mongowriteguard.testkit.server.ServerVersion version) {
        return TRANSIENT_CODES.contains(code) || isRetriable(code, version) || code == 251;
    }

    static boolean isRetriable(int code, io.github.mongowriteguard.testkit.server.ServerVersion version) {
        return RETRYABLE_CODES.contains(code)
                || (code == 358 && version.atLeast(io.github.mongowriteguard.testkit.server.ServerVersion.V6_0));
    }

    static void add(BsonDocument reply, String label) {
        BsonArray labels = reply.containsKey("errorLabels") ? reply.getArray("errorLabels") : new BsonArray();
        if (!labels.contains(new BsonString(label))) {
            labels.add(new BsonString(label));
        }
        reply.put("errorLabels", labels);
    }
}
