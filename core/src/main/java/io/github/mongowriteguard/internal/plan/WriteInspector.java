package io.github.mongowriteguard.internal.plan;

import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.bulk.WriteKind;
import io.github.mongowriteguard.exception.InvalidBulkException;
import io.github.mongowriteguard.exception.InvalidBulkException.Problem;
import java.util.List;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.codecs.Codec;
import org.bson.codecs.configuration.CodecRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Step 1 of planning: reads every write model once, checks it, and records its {@link WriteFacts}. Changes nothing:
 * when it throws, the caller's models are as they were. By kind of model: inserts and replacements are measured
 * ({@link DocumentMeasurer}), updates checked ({@link UpdateChecks}), filters read and keyed ({@link FilterKeying}),
 * every caller's part bounded by the driver's nesting limit ({@link DepthCheckedBson}).
 *
 * <p>One instance per {@code plan} call: its measurer reuses one encoding buffer, so it is not thread-safe.
 */
final class WriteInspector<T> {

    /** The server's limit for one document (maxBsonObjectSize). */
    static final int MAX_DOCUMENT_SIZE_BYTES = 16 * 1024 * 1024;

    /** Documents measured by arithmetic within this distance of the limit are encoded to be exact. */
    private static final int SHORTCUT_MARGIN_BYTES = 1024 * 1024;

    /** DBRef fields, which the driver allows at the top of a replacement document although they start with '$'. */
    private static final Set<String> DBREF_FIELDS = Set.of("$ref", "$id", "$db");

    private final DepthCheckedBson bson;
    private final DocumentMeasurer<T> measurer;
    private final UpdateChecks updates;
    private final FilterKeying filters;

    WriteInspector(
            Class<T> documentClass,
            CodecRegistry codecRegistry,
            Codec<T> codec,
            DocumentShortcuts shortcuts,
            SingleDocumentById singleDocumentById) {
        this.bson = new DepthCheckedBson(documentClass, codecRegistry);
        this.measurer = new DocumentMeasurer<>(codec, shortcuts);
        this.updates = new UpdateChecks(bson, shortcuts);
        this.filters = new FilterKeying(bson, shortcuts, singleDocumentById);
    }

    WriteFacts[] inspectAll(List<? extends WriteModel<? extends T>> models) {
        WriteFacts[] facts = new WriteFacts[models.size()];
        int index = 0;
        for (WriteModel<? extends T> model : models) {
            facts[index] = inspect(index, model);
            index++;
        }
        return facts;
    }

    private WriteFacts inspect(int index, @Nullable WriteModel<? extends T> model) {
        if (model == null) {
            throw invalid(
                    index, "WriteModel", Problem.NULL_ELEMENT, "the write model is null; remove it from the list");
        }
        WriteKind kind = WriteRecord.kindOf(model);
        if (kind == null) {
            throw invalid(
                    index,
                    model.getClass().getSimpleName(),
                    Problem.UNSUPPORTED_MODEL,
                    "this model class is not supported by the guard; use InsertOne, ReplaceOne, UpdateOne, UpdateMany,"
                            + " DeleteOne or DeleteMany models");
        }
        WriteFacts write = new WriteFacts(index, model, kind);
        checkHintAndSort(index, kind, write);
        return switch (kind) {
            case INSERT_ONE -> inspectInsert(index, write);
            case REPLACE_ONE -> inspectReplace(index, write);
            case UPDATE_ONE -> {
                BsonDocument update = updates.checkUpdate(index, kind, write.update(), write.pipeline());
                updates.checkArrayFilters(index, kind, write.arrayFilters());
                yield withConvertedUpdate(filters.keyedByFilter(write), update);
            }
            case DELETE_ONE -> filters.keyedByFilter(write);
            case UPDATE_MANY -> {
                BsonDocument update = updates.checkUpdate(index, kind, write.update(), write.pipeline());
                updates.checkArrayFilters(index, kind, write.arrayFilters());
                yield withConvertedUpdate(filters.multiByFilter(write), update);
            }
            case DELETE_MANY -> filters.multiByFilter(write);
        };
    }

    @SuppressWarnings("unchecked")
    private WriteFacts inspectInsert(int index, WriteFacts insert) {
        T document = (T) insert.document();
        if (document == null) {
            throw invalid(
                    index,
                    WriteKind.INSERT_ONE.modelName(),
                    Problem.NULL_ELEMENT,
                    "the document to insert is null; remove the write");
        }
        MeasuredDocument encoded = measurer.measure(index, WriteKind.INSERT_ONE, document, NestingDepth.DOCUMENT);
        insert.documentSize = encoded.size; // at most 16 MiB: the measurer refuses larger documents
        if (!encoded.hasId()) {
            insert.needsId = true; // keyed once BulkPlanner assigns the _id
        } else {
            insert.keyBy(encoded.id());
        }
        return insert;
    }

    @SuppressWarnings("unchecked")
    private WriteFacts inspectReplace(int index, WriteFacts replace) {
        T replacement = (T) replace.document();
        if (replacement == null) {
            throw invalid(
                    index,
                    WriteKind.REPLACE_ONE.modelName(),
                    Problem.NULL_ELEMENT,
                    "the replacement document is null; pass the whole new document, or use DeleteOneModel");
        }
        MeasuredDocument encoded =
                measurer.measure(index, WriteKind.REPLACE_ONE, replacement, NestingDepth.STATEMENT_PART);
        if (encoded.firstOperator != null) {
            throw invalid(
                    index,
                    WriteKind.REPLACE_ONE.modelName(),
                    Problem.REPLACEMENT_WITH_OPERATORS,
                    "the replacement document has the top-level field '" + encoded.firstOperator
                            + "', and a replacement cannot hold update operators; use UpdateOneModel to apply operators,"
                            + " or remove the '$' fields to replace the whole document");
        }
        replace.documentSize = encoded.size; // at most 16 MiB: the measurer refuses larger documents
        return filters.keyedByFilter(replace);
    }

    /**
     * Keeps the update document the planner converted from a builder (such as {@code Updates.inc}), so that the encoder
     * sends it instead of converting the builder a second time, as the driver converts each update once per bulk.
     */
    private static WriteFacts withConvertedUpdate(WriteFacts facts, @Nullable BsonDocument converted) {
        if (converted != null && converted != facts.update()) {
            facts.convertedUpdate = converted;
        }
        return facts;
    }

    /** A statement's {@code hint} and {@code sort} documents sit where its filter does: the same nesting limit. */
    private void checkHintAndSort(int index, WriteKind kind, WriteRecord<?> write) {
        if (write.hint() != null) {
            bson.checkDepthOnly(index, kind, "hint", write.hint(), NestingDepth.STATEMENT_PART);
        }
        if (write.sort() != null) {
            bson.checkDepthOnly(index, kind, "sort", write.sort(), NestingDepth.STATEMENT_PART);
        }
    }

    /** A top-level field name that a replacement cannot have: starts with '$' and is not a DBRef field. */
    static boolean isOperator(String fieldName) {
        return fieldName.startsWith("$") && !DBREF_FIELDS.contains(fieldName);
    }

    static String tooLarge(long size) {
        return String.format(
                "the document is %,d bytes, over the 16 MiB BSON limit (%,d bytes);"
                        + " split it, or keep large content elsewhere (e.g. GridFS)",
                size, MAX_DOCUMENT_SIZE_BYTES);
    }

    static InvalidBulkException invalid(int index, String modelName, Problem problem, String detail) {
        return new InvalidBulkException(
                index,
                problem,
                "Invalid bulk write at index " + index + " (" + modelName + "): " + detail + ". Nothing was sent.");
    }
}
