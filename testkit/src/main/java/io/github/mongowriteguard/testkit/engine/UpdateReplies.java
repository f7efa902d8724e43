package io.github.mongowriteguard.testkit.engine;

import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonValue;

/**
 * The reply of an {@code update} command run statement by statement: each statement's counts, upserts and write error
 * added at its index in the caller's command, as mongod's reply lists them.
 */
final class UpdateReplies {
    private int n;
    private int modified;
    private final BsonArray upserted = new BsonArray();
    private final BsonArray writeErrors = new BsonArray();

    /**
     * Adds the engine's reply to the statement at {@code index}: its write error (returned, with the index), or else its
     * counts and upserts (null returned).
     */
    BsonDocument add(int index, BsonDocument reply) {
        BsonArray errors = reply.getArray("writeErrors", new BsonArray());
        if (!errors.isEmpty()) {
            return error(index, errors.get(0).asDocument());
        }
        n += reply.get("n", new BsonInt32(0)).asNumber().intValue();
        modified += reply.get("nModified", new BsonInt32(0)).asNumber().intValue();
        for (BsonValue entry : reply.getArray("upserted", new BsonArray())) {
            upserted.add(entry.asDocument().clone().append("index", new BsonInt32(index)));
        }
        return null;
    }

    /** Adds {@code error} as the write error of the statement at {@code index}; returns it with the index. */
    BsonDocument error(int index, BsonDocument error) {
        BsonDocument indexed = error.clone().append("index", new BsonInt32(index));
        writeErrors.add(indexed);
        return indexed;
    }

    BsonDocument reply() {
        BsonDocument result = new BsonDocument("n", new BsonInt32(n)).append("nModified", new BsonInt32(modified));
        if (!upserted.isEmpty()) {
            result.append("upserted", upserted);
        }
        if (!writeErrors.isEmpty()) {
            result.append("writeErrors", writeErrors);
        }
        return result.append("ok", new BsonDouble(1));
    }
}
