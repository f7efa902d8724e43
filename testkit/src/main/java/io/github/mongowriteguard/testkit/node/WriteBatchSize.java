package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.engine.StorageEngine;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The server's count check when it parses a write command (mongodb/mongo {@code src/mongo/db/ops/write_ops_parsers.cpp}
 * {@code checkOpCountForCommand}, run by the {@code insert}, {@code update} and {@code delete} parsers on mongod and
 * mongos alike): a command carries 1 to {@code write_ops::kMaxWriteBatchSize} (100,000) statements, and as many
 * {@code stmtIds} as statements when it has them; otherwise it fails with {@code InvalidLength} (16) before it runs.
 */
final class WriteBatchSize {
    /** {@code write_ops::kMaxWriteBatchSize}, also {@code hello}'s {@code maxWriteBatchSize}. */
    static final int MAX_WRITE_BATCH_SIZE = 100_000;

    private WriteBatchSize() {}

    /** The error reply for a write command with too few or too many statements, or null (also for other commands). */
    static BsonDocument refusal(BsonDocument command) {
        String field = switch (command.getFirstKey()) {
            case "insert" -> "documents";
            case "update" -> "updates";
            case "delete" -> "deletes";
            default -> null;
        };
        BsonValue statements = field == null ? null : command.get(field);
        if (statements == null || !statements.isArray()) {
            return null;
        }
        int count = statements.asArray().size();
        if (count == 0 || count > MAX_WRITE_BATCH_SIZE) {
            return StorageEngine.error(
                    16,
                    "InvalidLength",
                    "Write batch sizes must be between 1 and " + MAX_WRITE_BATCH_SIZE + ". Got " + count
                            + " operations.");
        }
        BsonValue stmtIds = command.get("stmtIds");
        if (stmtIds != null && stmtIds.isArray() && stmtIds.asArray().size() != count) {
            return StorageEngine.error(
                    16, "InvalidLength", "Number of statement ids must match the number of batch entries");
        }
        return null;
    }
}
