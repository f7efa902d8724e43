package io.github.mongowriteguard.testkit.node;

import java.util.Set;

import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;

/**
 * The error labels a 4.4+ server attaches itself (before 4.4 the driver derives them): a retryable write that
 * fails with a retryable error code, at the top level or in its write-concern error, gets
 * {@code RetryableWriteError}. The codes are the retryable-writes specification's list.
 */
final class ErrorLabels {
    static final Set<Integer> RETRYABLE_CODES = Set.of(6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436);
    private static final Set<String> RETRYABLE_WRITE_COMMANDS = Set.of("insert", "update", "delete", "findAndModify", "findandmodify");

    private ErrorLabels() {
    }

    static boolean isRetryableWrite(BsonDocument command) {
        return command.containsKey("txnNumber") && !command.containsKey("autocommit")
            && RETRYABLE_WRITE_COMMANDS.contains(command.getFirstKey());
    }

    /** Adds {@code RetryableWriteError} to {@code reply} where a 4.4+ server would. */
    static void addServerLabels(BsonDocument command, BsonDocument reply) {
        if (!isRetryableWrite(command)) {
            return;
        }
        boolean retryable = reply.containsKey("code") && reply.getNumber("ok").doubleValue() == 0
            && RETRYABLE_CODES.contains(reply.getNumber("code").intValue());
        if (reply.containsKey("writeConcernError")) {
            BsonDocument wce = reply.getDocument("writeConcernError");
            retryable |= wce.containsKey("code") && RETRYABLE_CODES.contains(wce.getNumber("code").intValue());
        }
        if (retryable) {
            add(reply, "RetryableWriteError");
        }
    }

    static void add(BsonDocument reply, String label) {
        BsonArray labels = reply.containsKey("errorLabels") ? reply.getArray("errorLabels") : new BsonArray();
        if (!labels.contains(new BsonString(label))) {
            labels.add(new BsonString(label));
        }
        reply.put("errorLabels", labels);
    }
}
