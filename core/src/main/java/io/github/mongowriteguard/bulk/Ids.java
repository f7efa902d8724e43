package io.github.mongowriteguard.bulk;

import org.jspecify.annotations.Nullable;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

/** Showing and copying {@code _id} values. */
final class Ids {

    private static final JsonWriterSettings RELAXED = JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).build();
    private static final int MAX_SHOWN = 60;

    private Ids() {
    }

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

