package io.github.mongowriteguard.internal.command;

import org.jspecify.annotations.Nullable;
import java.util.HashMap;
import java.util.Map;

import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * The reply to one {@link WriteCommand}: counts, upserted ids and write errors by statement position, and the
 * write-concern error, read as mongod and mongos write them.
 */
public final class CommandReply {
    private final int n;
    private final int nModified;
    private final Map<Integer, BsonValue> upserted = new HashMap<>();
    private final Map<Integer, StatementError> errors = new HashMap<>();
    private final @Nullable BsonDocument writeConcernError;

    /** A write error of one statement. */
    public record StatementError(int code, String codeName, String message, BsonDocument details) {
    }

    private CommandReply(BsonDocument reply) {
        this.n = reply.get("n", new BsonInt32(0)).asNumber().intValue();
        this.nModified = reply.get("nModified", new BsonInt32(0)).asNumber().intValue();
        if (reply.containsKey("upserted")) {
            for (BsonValue value : reply.getArray("upserted")) {
                BsonDocument upsert = value.asDocument();
                upserted.put(upsert.getNumber("index").intValue(), upsert.get("_id"));
            }
        }
        if (reply.containsKey("writeErrors")) {
            for (BsonValue value : reply.getArray("writeErrors", new BsonArray())) {
                BsonDocument error = value.asDocument();
                errors.put(error.getNumber("index").intValue(), new StatementError(
                    error.get("code", new BsonInt32(8)).asNumber().intValue(),
                    error.getString("codeName", new BsonString("")).getValue(),
                    error.getString("errmsg", new BsonString("")).getValue(),
                    error.getDocument("errInfo", new BsonDocument())));
            }
        }
        this.writeConcernError = reply.containsKey("writeConcernError") ? reply.getDocument("writeConcernError") : null;
    }

    public static CommandReply of(BsonDocument reply) {
        return new CommandReply(reply);
    }

    /** Documents inserted, matched (updates, upserts included) or deleted, as the server counts {@code n}. */
    public int n() {
        return n;
    }

    public int nModified() {
        return nModified;
    }

    /** The {@code _id} of the document the statement at {@code position} upserted, or null. */
    public @Nullable BsonValue upsertedId(int position) {
        return upserted.get(position);
    }

    public int upsertedCount() {
        return upserted.size();
    }

    /** The write error of the statement at {@code position}, or null. */
    public @Nullable StatementError error(int position) {
        return errors.get(position);
    }

    public int errorCount() {
        return errors.size();
    }

    /** The statement positions that have a write error. */
    public java.util.Set<Integer> errorPositions() {
        return java.util.Collections.unmodifiableSet(errors.keySet());
    }

    /** The lowest statement position with a write error, or -1. */
    public int firstErrorPosition() {
        return errors.keySet().stream().mapToInt(Integer::intValue).min().orElse(-1);
    }

    /** The write-concern error, or null. */
    public @Nullable BsonDocument writeConcernError() {
        return writeConcernError;
    }
}
