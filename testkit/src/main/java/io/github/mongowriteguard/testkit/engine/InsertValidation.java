package io.github.mongowriteguard.testkit.engine;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.function.UnaryOperator;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * What mongod checks of each document to insert before storing it ({@code src/mongo/db/ops/insert.cpp},
 * {@code fixDocumentForInsert}), where the engine behind the emulator is more lenient:
 * <ul>
 *   <li>nesting: a document may nest at most {@code BSONDepth::getMaxDepthForUserStorage()} levels, the default
 *       {@code kDefaultMaxAllowableDepth} (200) minus {@code kExtraSystemDepthLevels} (20) = 180
 *       ({@code src/mongo/bson/bson_depth.h}); deeper is {@code Overflow} (15) "cannot insert document because it
 *       exceeds 180 levels of nesting" ({@code validateDepth}, counting without recursion);</li>
 *   <li>a top-level field name starting with {@code $} is {@code BadValue} (2) "Document can't have $ prefixed field
 *       names: $x".</li>
 * </ul>
 * Each refusal is a write error of its statement; an ORDERED insert stops there, an UNORDERED one goes on.
 */
final class InsertValidation {
    /** {@code BSONDepth::getMaxDepthForUserStorage()} with the default {@code maxBSONDepth}. */
    static final int MAX_USER_STORAGE_DEPTH = 200 - 20;

    private InsertValidation() {}

    /** The write error {@code document} gets, or null when mongod stores it. */
    static BsonDocument refusal(BsonDocument document) {
        if (deeperThan(document, MAX_USER_STORAGE_DEPTH)) {
            return error(
                    15,
                    "Overflow",
                    "cannot insert document because it exceeds " + MAX_USER_STORAGE_DEPTH + " levels of nesting");
        }
        for (String name : document.keySet()) {
            if (name.startsWith("$")) {
                return error(2, "BadValue", "Document can't have $ prefixed field names: " + name);
            }
        }
        return null;
    }

    /**
     * Runs an {@code insert} command: straight through {@code engine} when every document may be stored (neither the
     * checks above nor {@code validator} refuse it), else statement by statement, each refused document a write error
     * at its index.
     */
    static BsonDocument run(
            BsonDocument command, UnaryOperator<BsonDocument> validator, UnaryOperator<BsonDocument> engine) {
        BsonValue documents = command.get("documents");
        if (documents == null || !documents.isArray()) {
            return engine.apply(command);
        }
        BsonArray all = documents.asArray();
        BsonDocument[] refusals = new BsonDocument[all.size()];
        boolean any = false;
        for (int i = 0; i < all.size(); i++) {
            if (all.get(i).isDocument()) {
                refusals[i] = refusal(all.get(i).asDocument());
                if (refusals[i] == null) {
                    refusals[i] = validator.apply(all.get(i).asDocument()); // the collection's validator, if any
                }
                any |= refusals[i] != null;
            }
        }
        if (!any) {
            return engine.apply(command);
        }
        boolean ordered = !command.containsKey("ordered")
                || command.get("ordered").asBoolean().getValue();
        int n = 0;
        BsonArray writeErrors = new BsonArray();
        for (int i = 0; i < all.size(); i++) {
            BsonDocument error = refusals[i];
            if (error == null) {
                BsonDocument single = command.clone();
                single.put("documents", new BsonArray(java.util.List.of(all.get(i))));
                BsonDocument reply = engine.apply(single);
                if (reply.get("ok", new BsonInt32(0)).asNumber().doubleValue() != 1) {
                    return reply;
                }
                n += reply.get("n", new BsonInt32(0)).asNumber().intValue();
                BsonArray errors = reply.getArray("writeErrors", new BsonArray());
                error = errors.isEmpty() ? null : errors.get(0).asDocument().clone();
            }
            if (error != null) {
                error.put("index", new BsonInt32(i));
                writeErrors.add(error);
                if (ordered) {
                    break;
                }
            }
        }
        return new BsonDocument("n", new BsonInt32(n))
                .append("writeErrors", writeErrors)
                .append("ok", new BsonDouble(1));
    }

    /** Whether {@code document} nests more than {@code limit} levels (itself the first), counted without recursion. */
    static boolean deeperThan(BsonDocument document, int limit) {
        ArrayDeque<Iterator<BsonValue>> frames = new ArrayDeque<>();
        frames.push(document.values().iterator());
        while (!frames.isEmpty()) {
            Iterator<BsonValue> frame = frames.peek();
            if (!frame.hasNext()) {
                frames.pop();
                continue;
            }
            BsonValue value = frame.next();
            if (value.isDocument() || value.isArray()) {
                if (frames.size() == limit) {
                    return true; // validateDepth: exactly at the limit, descending would exceed it
                }
                frames.push(
                        value.isDocument()
                                ? value.asDocument().values().iterator()
                                : value.asArray().iterator());
            }
        }
        return false;
    }

    private static BsonDocument error(int code, String codeName, String message) {
        return new BsonDocument("code", new BsonInt32(code))
                .append("codeName", new BsonString(codeName))
                .append("errmsg", new BsonString(message));
    }
}
