package io.github.mongowriteguard.bulk;

import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;

/** What the planner needs from an insert or replacement document: its BSON size, top-level _id and '$' field. */
final class MeasuredDocument {

    /** Encoded size in bytes. */
    final long size;
    /** The top-level _id, or null when the document has none. */
    @Nullable
    final BsonValue id;
    /** The first top-level field starting with '$' (DBRef fields aside), or null. */
    @Nullable
    final String firstOperator;

    MeasuredDocument(long size, @Nullable BsonValue id, @Nullable String firstOperator) {
        this.size = size;
        this.id = id;
        this.firstOperator = firstOperator;
    }
}
