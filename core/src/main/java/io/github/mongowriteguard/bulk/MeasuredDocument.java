package io.github.mongowriteguard.bulk;

import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;

/**
 * What the planner needs from an insert or replacement document: its BSON size, top-level _id and '$' field.
 *
 * <p>The _id is held as read: BSON when the document was encoded, the plain Java value when {@link DocumentShortcuts}
 * measured it. A replacement's _id is only compared with its filter's, which needs no BSON copy of it.
 */
final class MeasuredDocument {

    /** Encoded size in bytes. */
    final long size;
    /** The first top-level field starting with '$' (DBRef fields aside), or null. */
    @Nullable
    final String firstOperator;

    private final boolean hasId;

    @Nullable
    private final BsonValue bsonId;

    @Nullable
    private final Object javaId;

    private MeasuredDocument(
            long size,
            @Nullable String firstOperator,
            boolean hasId,
            @Nullable BsonValue bsonId,
            @Nullable Object javaId) {
        this.size = size;
        this.firstOperator = firstOperator;
        this.hasId = hasId;
        this.bsonId = bsonId;
        this.javaId = javaId;
    }

    /** A document read from its encoding; {@code id} null when it has no _id. */
    static MeasuredDocument encoded(long size, @Nullable BsonValue id, @Nullable String firstOperator) {
        return new MeasuredDocument(size, firstOperator, id != null, id, null);
    }

    /** A plain {@code Document} measured by {@link DocumentShortcuts}; {@code id} is its _id value, which may be null. */
    static MeasuredDocument plain(long size, boolean hasId, @Nullable Object id, @Nullable String firstOperator) {
        return new MeasuredDocument(size, firstOperator, hasId, null, id);
    }

    boolean hasId() {
        return hasId;
    }

    /** The top-level _id as BSON, or null when the document has none. */
    @Nullable
    BsonValue id() {
        if (!hasId) {
            return null;
        }
        return bsonId != null ? bsonId : DocumentShortcuts.toBson(javaId);
    }
}
