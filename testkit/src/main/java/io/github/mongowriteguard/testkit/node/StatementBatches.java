package io.github.mongowriteguard.testkit.node;

import java.util.ArrayList;
import java.util.List;

import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * The statements of a batched write ({@code documents}, {@code updates}, {@code deletes}) as mongod's retryable
 * write path sees them: a range of statements can run on its own, and the replies of consecutive ranges
 * combine into the reply of the whole batch (counts added, statement indexes kept).
 */
final class StatementBatches {
    private static final List<String> FIELDS = List.of("documents", "updates", "deletes");

    private StatementBatches() {
    }

    /** The field holding the statements, or null for a single-statement write ({@code findAndModify}). */
    static String field(BsonDocument command) {
        for (String field : FIELDS) {
            if (command.containsKey(field) && command.get(field).isArray()) {
                return field;
            }
        }
        return null;
    }

    static int count(BsonDocument command) {
        String field = field(command);
        return field == null ? 1 : command.getArray(field).size();
    }

    /** The command with only statements {@code [from, to)}. */
    static BsonDocument slice(BsonDocument command, int from, int to) {
        String field = field(command);
        BsonDocument copy = command.clone();
        copy.put(field, new BsonArray(new ArrayList<>(command.getArray(field).subList(from, to))));
        return copy;
    }

    /** A successful reply for no statements. */
    static BsonDocument empty(BsonDocument command) {
        BsonDocument reply = EmulatedNode.ok().append("n", new BsonInt32(0));
        if (command.getFirstKey().equals("update")) {
            reply.append("nModified", new BsonInt32(0));
        }
        return reply;
    }

    /** Renumbers the statement indexes in a reply for statements that started at {@code offset}. */
    static BsonDocument shift(BsonDocument reply, int offset) {
        if (offset == 0) {
            return reply;
        }
        for (String field : List.of("writeErrors", "upserted")) {
            if (reply.containsKey(field)) {
                for (BsonValue entry : reply.getArray(field)) {
                    BsonDocument document = entry.asDocument();
                    document.put("index", new BsonInt32(document.getNumber("index").intValue() + offset));
                }
            }
        }
        return reply;
    }

    /** The reply for an earlier range followed by the reply for the next one. */
    static BsonDocument merge(BsonDocument earlier, BsonDocument later) {
        if (earlier == null) {
            return later;
        }
        BsonDocument merged = later.clone();
        for (String count : List.of("n", "nModified")) {
            if (earlier.containsKey(count) || later.containsKey(count)) {
                merged.put(count, new BsonInt32(earlier.getNumber(count, new BsonInt32(0)).intValue()
                    + later.getNumber(count, new BsonInt32(0)).intValue()));
            }
        }
        for (String list : List.of("upserted", "writeErrors")) {
            if (earlier.containsKey(list) || later.containsKey(list)) {
                BsonArray all = new BsonArray();
                all.addAll(earlier.getArray(list, new BsonArray()));
                all.addAll(later.getArray(list, new BsonArray()));
                merged.put(list, all);
            }
        }
        return merged;
    }

    /** Adds a write error for statement {@code index}. */
    static BsonDocument withWriteError(BsonDocument reply, int index, int code, String codeName, String message) {
        BsonArray errors = reply.getArray("writeErrors", new BsonArray());
        errors.add(new BsonDocument("index", new BsonInt32(index)).append("code", new BsonInt32(code))
            .append("codeName", new BsonString(codeName)).append("errmsg", new BsonString(message)));
        reply.put("writeErrors", errors);
        return reply;
    }

    static boolean cleanSuccess(BsonDocument reply) {
        return reply.get("ok", new BsonInt32(0)).asNumber().doubleValue() == 1 && !reply.containsKey("writeErrors")
            && !reply.containsKey("writeConcernError");
    }
}
