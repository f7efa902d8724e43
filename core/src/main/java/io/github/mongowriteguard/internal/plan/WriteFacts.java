package io.github.mongowriteguard.internal.plan;

import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.bulk.WriteDecision;
import io.github.mongowriteguard.bulk.WriteKind;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;

/**
 * What the planner knows about one write, read once from its model: the write itself ({@link WriteRecord}, which this
 * is, so that a plan holds one object per write) and what planning learnt about it. Filled by {@link WriteInspector}
 * and, for inserts without {@code _id}, completed by {@link BulkPlanner} after ids are assigned; never changed after
 * planning. Handed out only as its {@link WriteRecord} ({@link PlannedBulk#write}); a {@link WriteDecision} copies what it
 * shows.
 */
final class WriteFacts extends WriteRecord<Object> {

    /** Why a write is not keyed. */
    enum Unkeyed {
        NO("keyed", "keyed", ""),
        MULTI_DOCUMENT(
                "can change many documents",
                "multi-document",
                "pin _id by equality in its filter ({_id: v}) to make it a single-document write"),
        MULTI_DOCUMENT_KEPT(
                "pins _id but is sent as the driver sends it, multi-document",
                "multi-document-kept",
                "see why above; a single-document model (UpdateOneModel, DeleteOneModel) by _id is keyed"),
        FILTER_NOT_ID_EQUALITY(
                "its filter is not an _id equality", "filter-not-id", "filter it by _id equality ({_id: v})"),
        COLLATION(
                "its collation can make different _id strings equal",
                "collation",
                "drop its non-simple collation (or give it the simple one)");

        final String explanation;
        /** A bounded metric tag value. */
        final String tag;
        /** What would make the write keyed. */
        final String remedy;

        Unkeyed(String explanation, String tag, String remedy) {
            this.explanation = explanation;
            this.tag = tag;
            this.remedy = remedy;
        }
    }

    final int index;
    /**
     * The encoded filter, a private copy; null for inserts, and for a filter that is nothing but {@code {_id: id}},
     * which {@link #plannedFilter()} rebuilds from {@link #id} (a plan of 100,000 writes then holds 100,000 fewer documents).
     */
    @Nullable
    private BsonDocument filter;
    /** Whether the filter has conditions besides the _id equality (e.g. the shard key). */
    boolean otherConditions;

    Unkeyed unkeyed = Unkeyed.NO;
    /**
     * Encoded size of an insert or replacement document, -1 for other writes. An int: a document over 16 MiB is refused
     * before its facts are made.
     */
    int documentSize = -1;

    /** The _id the write is keyed by; null when unkeyed or for an insert left without _id. Set by {@link #keyBy}. */
    @Nullable
    BsonValue id;
    /**
     * {@link IdKey#hash} of {@link #id}, taken when the id is set: the id was just read then, where {@link KeyTable},
     * which numbers the keys after every write is read, would read it again from memory long out of the cache.
     */
    int idHash;
    /**
     * An insert whose {@code _id} is generated when it is sent: keyed by a key of its own, which no other write can name
     * ({@link KeyTable}).
     */
    boolean freshKey;
    /** Dense number of the key ({@link KeyTable}), -1 while unknown or unkeyed. */
    int keyNumber = -1;
    /** An insert that had no _id when the planner read it. */
    boolean needsId;
    /** An insert whose object cannot hold its assigned {@link #id}: the id is sent after the document's fields. */
    boolean appendedId;
    /**
     * An UpdateMany/DeleteMany whose filter pins _id, keyed and sent as a single-document statement
     * ({@link SingleDocumentById}).
     */
    boolean singleDocument;
    /**
     * The update document as the planner converted it from a builder such as {@code Updates.inc}; null for a pipeline,
     * a {@code Document} or {@code BsonDocument} update (read when sent) and other kinds. Set while planning.
     */
    @Nullable
    BsonDocument convertedUpdate;
    /** Why a multi-document write that pins _id keeps the driver's form; null otherwise. */
    @Nullable
    String keptBecause;

    /** The write at {@code index}, of {@code kind} ({@link WriteRecord#kindOf}); its facts are set while inspecting. */
    WriteFacts(int index, WriteModel<?> model, WriteKind kind) {
        super(model, kind);
        this.index = index;
    }

    /** Keys the write by {@code id}. */
    void keyBy(BsonValue id) {
        this.id = id;
        this.idHash = IdKey.hash(id);
    }

    /** Sets what the write's filter told: kept once per write, while inspecting it. */
    void filtered(@Nullable BsonDocument filter, boolean otherConditions, Unkeyed unkeyed) {
        this.filter = filter;
        this.otherConditions = otherConditions;
        this.unkeyed = unkeyed;
    }

    /** The filter as planned, a private copy; null for inserts. ({@link #filter()} is the caller's filter.) */
    @Nullable
    BsonDocument plannedFilter() {
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

    /** Why the write is unkeyed, with what would make it keyed; for reasons and logs (no document values). */
    String unkeyedExplanation() {
        return keptBecause == null ? unkeyed.explanation : unkeyed.explanation + " (" + keptBecause + ")";
    }

    /** The kind the write is sent as: a pinned UpdateMany/DeleteMany goes as an updateOne/deleteOne statement. */
    WriteKind sentAs() {
        if (!singleDocument) {
            return kind;
        }
        return kind == WriteKind.UPDATE_MANY ? WriteKind.UPDATE_ONE : WriteKind.DELETE_ONE;
    }
}
