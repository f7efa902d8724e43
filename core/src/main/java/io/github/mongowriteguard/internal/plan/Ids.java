package io.github.mongowriteguard.internal.plan;

import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.BiPredicate;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;
import org.jspecify.annotations.Nullable;

/** Showing and copying {@code _id} values. */
final class Ids {

    private static final JsonWriterSettings RELAXED =
            JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).build();
    private static final int MAX_SHOWN = 60;

    private Ids() {}

    /** {@code 5}, {@code "abc"}, {@code {"$oid": "..."}}: relaxed extended JSON, cut at 60 characters. */
    static String format(@Nullable BsonValue id) {
        if (id == null) {
            return "(none)";
        }
        String json = new BsonDocument("v", id).toJson(RELAXED);
        // {"v": <value>}
        String value = json.substring(json.indexOf(':') + 1, json.length() - 1).trim();
        return value.length() <= MAX_SHOWN ? value : value.substring(0, MAX_SHOWN - 3) + "...";
    }

    /**
     * Walks two values side by side: documents field by field (the same names in the same order), arrays element by
     * element; any other pair of values is compared by {@code values}.
     */
    static boolean inOrder(BsonValue a, BsonValue b, BiPredicate<BsonValue, BsonValue> values) {
        if (a.isDocument() && b.isDocument()) {
            BsonDocument left = a.asDocument();
            BsonDocument right = b.asDocument();
            if (left.size() != right.size()) {
                return false;
            }
            Iterator<Map.Entry<String, BsonValue>> others = right.entrySet().iterator();
            for (Map.Entry<String, BsonValue> field : left.entrySet()) {
                Map.Entry<String, BsonValue> other = others.next();
                if (!field.getKey().equals(other.getKey()) || !inOrder(field.getValue(), other.getValue(), values)) {
                    return false;
                }
            }
            return true;
        }
        if (a.isArray() && b.isArray()) {
            List<BsonValue> left = a.asArray().getValues();
            List<BsonValue> right = b.asArray().getValues();
            if (left.size() != right.size()) {
                return false;
            }
            for (int i = 0; i < left.size(); i++) {
                if (!inOrder(left.get(i), right.get(i), values)) {
                    return false;
                }
            }
            return true;
        }
        return values.test(a, b);
    }

    /** A copy the receiver may change: documents and arrays are deep-copied, other BSON values are immutable. */
    static BsonValue copy(BsonValue id) {
        if (id.isDocument()) {
            return id.asDocument().clone();
        }
        if (id.isArray()) {
            return id.asArray().clone();
        }
        return id;
    }
}
