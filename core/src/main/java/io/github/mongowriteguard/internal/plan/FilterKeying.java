package io.github.mongowriteguard.internal.plan;

import com.mongodb.client.model.Collation;
import io.github.mongowriteguard.bulk.WriteKind;
import io.github.mongowriteguard.exception.InvalidBulkException.Problem;
import io.github.mongowriteguard.internal.plan.WriteFacts.Unkeyed;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * Reads a write's filter once and keys the write by it: the filter's private copy (what the guard sends), the
 * {@code _id} it pins by equality, and whether that makes the write keyed (a simple collation; for an
 * {@code UpdateMany} / {@code DeleteMany}, the collection's leave to send it as a single-document statement,
 * {@link SingleDocumentById}), or why not ({@link Unkeyed}).
 */
final class FilterKeying {

    private final DepthCheckedBson bson;
    private final DocumentShortcuts shortcuts;
    private final SingleDocumentById singleDocumentById;

    FilterKeying(DepthCheckedBson bson, DocumentShortcuts shortcuts, SingleDocumentById singleDocumentById) {
        this.bson = bson;
        this.shortcuts = shortcuts;
        this.singleDocumentById = singleDocumentById;
    }

    /** Reads the filter of {@code write} into it and keys it by the filter; returns {@code write}. */
    WriteFacts keyedByFilter(WriteFacts write) {
        BsonDocument encoded = encodeFilter(write.index, write.kind, write.filter());
        return keyedByEncodedFilter(write, encoded, idEquality(encoded));
    }

    /** As {@link #keyedByFilter}, for a filter already encoded and its {@code _id} equality already read. */
    private WriteFacts keyedByEncodedFilter(WriteFacts write, BsonDocument encoded, @Nullable BsonValue id) {
        boolean otherConditions = encoded.size() > 1;
        if (id == null) {
            write.filtered(encoded, otherConditions, Unkeyed.FILTER_NOT_ID_EQUALITY);
            return write;
        }
        Collation collation = write.collation();
        if (collation != null && !"simple".equals(collation.getLocale())) {
            write.filtered(encoded, otherConditions, Unkeyed.COLLATION);
            return write;
        }
        // A filter that is only {_id: id} is not kept: WriteFacts rebuilds it from the id.
        boolean idOnly = !otherConditions && encoded.get("_id") == id;
        write.filtered(idOnly ? null : encoded, otherConditions, Unkeyed.NO);
        write.keyBy(id);
        return write;
    }

    /**
     * An UpdateMany/DeleteMany: keyed and sent as a single-document statement when its filter pins {@code _id} with
     * the simple collation and the collection allows it ({@link SingleDocumentById}); unkeyed otherwise.
     */
    WriteFacts multiByFilter(WriteFacts write) {
        BsonDocument encoded = encodeFilter(write.index, write.kind, write.filter());
        BsonValue id = idEquality(encoded);
        Collation collation = write.collation();
        if (id == null || (collation != null && !"simple".equals(collation.getLocale()))) {
            write.filtered(encoded, encoded.size() > 1, Unkeyed.MULTI_DOCUMENT);
            return write;
        }
        String kept = singleDocumentById.refusal(id, write.upsert(), encoded);
        if (kept != null) {
            write.filtered(encoded, encoded.size() > 1, Unkeyed.MULTI_DOCUMENT_KEPT);
            write.keptBecause = kept;
            return write;
        }
        keyedByEncodedFilter(write, encoded, id); // the filter is read once
        write.singleDocument = true;
        return write;
    }

    /** The filter as a private copy: the caller may change its own filter object after planning. */
    private BsonDocument encodeFilter(int index, WriteKind kind, @Nullable Bson filter) {
        if (filter == null) {
            throw WriteInspector.invalid(
                    index,
                    kind.modelName(),
                    Problem.NULL_ELEMENT,
                    "the filter is null; pass a filter such as Filters.eq(\"_id\", id), or Filters.empty() for all documents");
        }
        BsonDocument copy = shortcuts.filter(filter); // null past the driver's nesting limit too
        if (copy != null) {
            return copy;
        }
        BsonDocument encoded = bson.checkDepth(index, kind, "filter", filter, NestingDepth.STATEMENT_PART);
        if (encoded == filter) {
            return encoded.clone(); // the caller's own object
        }
        // A new document, or a wrapper around the caller's document that encodes it on first read: read it now, so
        // that later changes to the caller's filter do not reach the plan.
        encoded.size();
        return encoded;
    }

    /**
     * The {@code _id} value that {@code filter} pins by equality: {@code {_id: v}} or {@code {_id: {$eq: v}}}, other
     * fields allowed. {@code null} for anything else, including a regular expression (a pattern match, not equality)
     * and an array (an {@code _id} is never an array, so it matches elements, not one document).
     */
    @Nullable
    static BsonValue idEquality(BsonDocument filter) {
        return equality(filter, "_id");
    }

    /** The value {@code filter} pins {@code field} to by equality, as {@link #idEquality} for {@code _id}. */
    @Nullable
    static BsonValue equality(BsonDocument filter, String field) {
        BsonValue value = filter.get(field);
        if (value == null) {
            return null;
        }
        if (value.isDocument() && hasOperator(value.asDocument())) {
            BsonDocument operators = value.asDocument();
            if (operators.size() != 1 || !operators.containsKey("$eq")) {
                return null;
            }
            value = operators.get("$eq");
        }
        if (value.isArray() || value.isRegularExpression()) {
            return null;
        }
        return value;
    }

    private static boolean hasOperator(BsonDocument document) {
        for (Map.Entry<String, BsonValue> field : document.entrySet()) { // the entry set the codec reads anyway
            if (field.getKey().startsWith("$")) {
                return true;
            }
        }
        return false;
    }
}
