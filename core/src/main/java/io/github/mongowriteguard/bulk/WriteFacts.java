package io.github.mongowriteguard.bulk;

import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;

/**
 * What the planner knows about one write, read once from its model. Filled by {@link WriteInspector} and, for
 * inserts without {@code _id}, completed by {@link BulkPlanner} after ids are assigned; never changed after planning
 * and never handed out (a {@link WriteDecision} copies what it shows).
 */
final class WriteFacts {

    /** Why a write is not keyed. */
    enum Unkeyed {
        NO("keyed"),
        MULTI_DOCUMENT("can change many documents"),
        FILTER_NOT_ID_EQUALITY("its filter is not an _id equality"),
        COLLATION("its collation can make different _id strings equal");

        final String explanation;

        Unkeyed(String explanation) {
            this.explanation = explanation;
        }
    }

    final int index;
    final WriteKind kind;
    /** The caller's write, read once. */
    final WriteRecord<?> write;
    /**
     * The encoded filter, a private copy; null for inserts, and for a filter that is nothing but {@code {_id: id}},
     * which {@link #filter()} rebuilds from {@link #id} (a plan of 100,000 writes then holds 100,000 fewer documents).
     */
    @Nullable
    private final BsonDocument filter;
    /** Whether the filter has conditions besides the _id equality (e.g. the shard key). */
    final boolean otherConditions;

    final Unkeyed unkeyed;
    /** Encoded size of an insert or replacement document, -1 for other writes. */
    final long documentSize;

    /** The _id the write is keyed by; null when unkeyed or for an insert left without _id. */
    @Nullable
    BsonValue id;
    /** Grouping key; null when unkeyed, or for an insert whose _id is not assigned yet. */
    @Nullable
    IdKey key;
    /** Dense number of the key ({@link KeyTable}), -1 while unknown or unkeyed. */
    int keyNumber = -1;
    /** An insert that had no _id when the planner read it. */
    boolean needsId;

    WriteFacts(
            int index,
            WriteRecord<?> write,
            @Nullable BsonDocument filter,
            boolean otherConditions,
            Unkeyed unkeyed,
            long documentSize) {
        this.index = index;
        this.write = write;
        this.kind = write.kind();
        this.filter = filter;
        this.otherConditions = otherConditions;
        this.unkeyed = unkeyed;
        this.documentSize = documentSize;
    }

    /** The filter as planned; null for inserts. */
    @Nullable
    BsonDocument filter() {
        if (filter == null && kind != WriteKind.INSERT_ONE && id != null) {
            return new BsonDocument("_id", id);
        }
        return filter;
    }

    /** The filter the plan kept: null for inserts and for a filter that is nothing but {@code {_id: id}}. */
    @Nullable
    BsonDocument storedFilter() {
        return filter;
    }

    boolean isKeyed() {
        return unkeyed == Unkeyed.NO;
    }
}
