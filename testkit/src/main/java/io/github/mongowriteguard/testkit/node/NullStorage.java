package io.github.mongowriteguard.testkit.node;

import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonNull;
import org.bson.BsonObjectId;
import org.bson.BsonValue;

/**
 * The answers of {@link io.github.mongowriteguard.testkit.server.Storage#NONE}: write commands answered by count from the
 * command alone, nothing stored. It keeps no state, so its cost does not grow with the writes it answered (a soak
 * of millions of writes measures the client's memory, not the emulator's). What it answers, per statement:
 * <ul>
 *   <li>insert: inserted ({@code n} counts it); no duplicate key is ever detected;</li>
 *   <li>update with {@code upsert: true}: upserted, with the replacement's {@code _id}, else the filter's {@code _id}
 *       when it is a plain value or {@code {$eq: value}}, else a new {@code ObjectId}, as mongod picks the upserted
 *       id (the replacement's, else the query's equality fields: mongodb/mongo
 *       {@code src/mongo/db/update/update_driver.cpp} {@code UpdateDriver::populateDocumentWithQueryFields}, else a
 *       generated one); {@code n: 1, nModified: 0};</li>
 *   <li>update without upsert: one document matched and modified, {@code n: 1, nModified: 1};</li>
 *   <li>delete: one document deleted, {@code n: 1};</li>
 *   <li>findAndModify: nothing matched ({@code value: null}); an upsert reports {@code upserted}.</li>
 * </ul>
 * Other commands return null: the node's (empty) storage engine runs them.
 */
final class NullStorage {
    private static final BsonInt32 ONE = new BsonInt32(1);
    private static final BsonInt32 ZERO = new BsonInt32(0);

    private NullStorage() {}

    /**
     * @param command a command without session or routing fields
     * @return the reply, or null when the command is not a write this class answers
     */
    static BsonDocument answer(BsonDocument command) {
        String name = command.getFirstKey();
        return switch (name) {
            case "insert" ->
                counted(command.getArray("documents", new BsonArray()).size());
            case "delete" ->
                counted(command.getArray("deletes", new BsonArray()).size());
            case "update" -> update(command.getArray("updates", new BsonArray()));
            case "findAndModify", "findandmodify" -> findAndModify(command);
            default -> null;
        };
    }

    private static BsonDocument counted(int n) {
        return new BsonDocument("n", new BsonInt32(n)).append("ok", new BsonDouble(1));
    }

    private static BsonDocument update(BsonArray statements) {
        int n = statements.size();
        int modified = 0;
        BsonArray upserted = null;
        for (int i = 0; i < n; i++) {
            BsonDocument statement = statements.get(i).asDocument();
            if (statement.getBoolean("upsert", BsonBoolean.FALSE).getValue()) {
                if (upserted == null) {
                    upserted = new BsonArray();
                }
                upserted.add(new BsonDocument("index", new BsonInt32(i))
                        .append("_id", upsertedId(statement.getDocument("q", new BsonDocument()), statement.get("u"))));
            } else {
                modified++;
            }
        }
        BsonDocument reply = new BsonDocument("n", new BsonInt32(n)).append("nModified", new BsonInt32(modified));
        if (upserted != null) {
            reply.append("upserted", upserted);
        }
        return reply.append("ok", new BsonDouble(1));
    }

    private static BsonDocument findAndModify(BsonDocument command) {
        BsonDocument lastError = new BsonDocument("n", ZERO).append("updatedExisting", BsonBoolean.FALSE);
        if (command.getBoolean("upsert", BsonBoolean.FALSE).getValue()
                && !command.getBoolean("remove", BsonBoolean.FALSE).getValue()) {
            lastError = new BsonDocument("n", ONE)
                    .append("updatedExisting", BsonBoolean.FALSE)
                    .append(
                            "upserted",
                            upsertedId(command.getDocument("query", new BsonDocument()), command.get("update")));
        }
        return new BsonDocument("lastErrorObject", lastError)
                .append("value", BsonNull.VALUE)
                .append("ok", new BsonDouble(1));
    }

    /** A replacement's {@code _id}, else the filter's plain {@code _id}, else a new one. */
    private static BsonValue upsertedId(BsonDocument filter, BsonValue update) {
        if (update != null && update.isDocument()) {
            BsonDocument document = update.asDocument();
            boolean replacement = document.isEmpty() || !document.getFirstKey().startsWith("$");
            if (replacement && document.containsKey("_id")) {
                return document.get("_id");
            }
        }
        BsonValue id = filter.get("_id");
        if (id != null
                && id.isDocument()
                && id.asDocument().size() == 1
                && id.asDocument().containsKey("$eq")) {
            return id.asDocument().get("$eq");
        }
        if (id != null
                && !(id.isDocument()
                        && !id.asDocument().isEmpty()
                        && id.asDocument().getFirstKey().startsWith("$"))) {
            return id;
        }
        return new BsonObjectId();
    }
}
