package io.github.mongowriteguard.internal.plan;

import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;

/**
 * What the planner needs from an insert or replacement document: its BSON size, top-level _id and '$' field.
 *
 * <p>The _id is held as read: BSON when the document was encoded, the plain Java value when {@link DocumentShortcuts}
 * measured it. A replacement's _id is only compared with its filter's, which needs no BSON copy of it.
 */
final class MeasuredDocument {

    /** {@link #id} of a document without an _id. */
    private static final Object NO_ID = new Object();

    /**
     * Encoded size in bytes; at most {@code Integer.MAX_VALUE} (a size past 16 MiB minus the shortcut margin is
     * measured again by encoding, so a larger one is never read). An int, so that the object is 24 bytes: one is made
     * per insert and replacement.
     */
    final int size;
    /** The first top-level field starting with '$' (DBRef fields aside), or null. */
    @Nullable
    final String firstOperator;

    /**
     * The _id as read: a {@link BsonValue} when the document was encoded, the plain Java value (possibly null, never a
     * {@code BsonValue}: {@link DocumentShortcuts} measures no such document) when measured; {@link #NO_ID} for none.
     */
    @Nullable
    private final Object id;

    private MeasuredDocument(long size, @Nullable String firstOperator, @Nullable Object id) {
        this.size = (int) Math.min(size, Integer.MAX_VALUE);
        this.firstOperator = firstOperator;
        this.id = id;
    }

    /** A document read from its encoding; {@code id} null when it has no _id. */
    static MeasuredDocument encoded(long size, @Nullable BsonValue id, @Nullable String firstOperator) {
        return new MeasuredDocument(size, firstOperator, id == null ? NO_ID : id);
    }

    /** A plain {@code Document} measured by {@link DocumentShortcuts}; {@code id} is its _id value, which may be null. */
    static MeasuredDocument plain(long size, boolean hasId, @Nullable Object id, @Nullable String firstOperator) {
        return new MeasuredDocument(size, firstOperator, hasId ? id : NO_ID);
    }

    boolean hasId() {
        return id != NO_ID;
    }

    /** The top-level _id as BSON, or null when the document has none. */
    @Nullable
    BsonValue id() {
        if (id == NO_ID) {
            return null;
        }
        return id instanceof BsonValue bson ? bson : DocumentShortcuts.toBson(id);
    }
}
