package io.github.mongowriteguard.bulk;

import com.mongodb.client.model.Collation;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.bulk.WriteFacts.Unkeyed;
import io.github.mongowriteguard.exception.InvalidBulkException;
import io.github.mongowriteguard.exception.InvalidBulkException.Problem;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonBinaryReader;
import org.bson.BsonBinaryWriter;
import org.bson.BsonBinaryWriterSettings;
import org.bson.BsonDocument;
import org.bson.BsonSerializationException;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.BsonWriterSettings;
import org.bson.codecs.BsonValueCodec;
import org.bson.codecs.Codec;
import org.bson.codecs.DecoderContext;
import org.bson.codecs.EncoderContext;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;
import org.bson.io.BasicOutputBuffer;
import org.jspecify.annotations.Nullable;

/**
 * Step 1 of planning: reads every write model once, checks it, and records its {@link WriteFacts}. Changes nothing:
 * when it throws, the caller's models are as they were.
 *
 * <p>One instance per {@code plan} call: it reuses one encoding buffer, so it is not thread-safe.
 */
final class WriteInspector<T> {

    /** The server's limit for one document (maxBsonObjectSize). */
    static final int MAX_DOCUMENT_SIZE_BYTES = 16 * 1024 * 1024;

    /** Documents measured by arithmetic within this distance of the limit are encoded to be exact. */
    private static final int SHORTCUT_MARGIN_BYTES = 1024 * 1024;

    /** DBRef fields, which the driver allows at the top of a replacement document although they start with '$'. */
    private static final Set<String> DBREF_FIELDS = Set.of("$ref", "$id", "$db");

    // Not "collectible": a POJO codec generates a missing _id into the object while encoding a collectible document,
    // and this step must change nothing. The size is the same either way.
    private static final EncoderContext MEASURING = EncoderContext.builder().build();
    private static final DecoderContext DECODER = DecoderContext.builder().build();
    private static final BsonValueCodec BSON_VALUE_CODEC = new BsonValueCodec();

    private final Class<T> documentClass;
    private final CodecRegistry codecRegistry;
    private final Codec<T> codec;
    private final DocumentShortcuts shortcuts;
    private final SingleDocumentById singleDocumentById;
    private final BasicOutputBuffer buffer = new BasicOutputBuffer(1024);

    WriteInspector(
            Class<T> documentClass,
            CodecRegistry codecRegistry,
            Codec<T> codec,
            DocumentShortcuts shortcuts,
            SingleDocumentById singleDocumentById) {
        this.documentClass = documentClass;
        this.codecRegistry = codecRegistry;
        this.codec = codec;
        this.shortcuts = shortcuts;
        this.singleDocumentById = singleDocumentById;
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
        WriteRecord<? extends T> write = WriteRecord.of(model);
        if (write == null) {
            throw invalid(
                    index,
                    model.getClass().getSimpleName(),
                    Problem.UNSUPPORTED_MODEL,
                    "this model class is not supported by the guard; use InsertOne, ReplaceOne, UpdateOne, UpdateMany,"
                            + " DeleteOne or DeleteMany models");
        }
        WriteKind kind = write.kind();
        checkHintAndSort(index, kind, write);
        return switch (kind) {
            case INSERT_ONE -> inspectInsert(index, write);
            case REPLACE_ONE -> inspectReplace(index, write);
            case UPDATE_ONE -> {
                BsonDocument update = checkUpdate(index, kind, write.update(), write.pipeline());
                checkArrayFilters(index, kind, write.arrayFilters());
                yield withConvertedUpdate(keyedByFilter(index, write, -1), write, update);
            }
            case DELETE_ONE -> keyedByFilter(index, write, -1);
            case UPDATE_MANY -> {
                BsonDocument update = checkUpdate(index, kind, write.update(), write.pipeline());
                checkArrayFilters(index, kind, write.arrayFilters());
                yield withConvertedUpdate(multiByFilter(index, write), write, update);
            }
            case DELETE_MANY -> multiByFilter(index, write);
        };
    }

    private WriteFacts inspectInsert(int index, WriteRecord<? extends T> insert) {
        T document = insert.document();
        if (document == null) {
            throw invalid(
                    index,
                    WriteKind.INSERT_ONE.modelName(),
                    Problem.NULL_ELEMENT,
                    "the document to insert is null; remove the write");
        }
        MeasuredDocument encoded = measure(index, WriteKind.INSERT_ONE, document, NestingDepth.DOCUMENT);
        WriteFacts facts = new WriteFacts(index, insert, null, false, Unkeyed.NO, encoded.size);
        if (!encoded.hasId()) {
            facts.needsId = true; // keyed once BulkPlanner assigns the _id
        } else {
            facts.id = encoded.id();
        }
        return facts;
    }

    private WriteFacts inspectReplace(int index, WriteRecord<? extends T> replace) {
        T replacement = replace.document();
        if (replacement == null) {
            throw invalid(
                    index,
                    WriteKind.REPLACE_ONE.modelName(),
                    Problem.NULL_ELEMENT,
                    "the replacement document is null; pass the whole new document, or use DeleteOneModel");
        }
        MeasuredDocument encoded = measure(index, WriteKind.REPLACE_ONE, replacement, NestingDepth.STATEMENT_PART);
        if (encoded.firstOperator != null) {
            throw invalid(
                    index,
                    WriteKind.REPLACE_ONE.modelName(),
                    Problem.REPLACEMENT_WITH_OPERATORS,
                    "the replacement document has the top-level field '" + encoded.firstOperator
                            + "', and a replacement cannot hold update operators; use UpdateOneModel to apply operators,"
                            + " or remove the '$' fields to replace the whole document");
        }
        return keyedByFilter(index, replace, encoded.size);
    }

    /**
     * Keeps the update document the planner converted from a builder (such as {@code Updates.inc}), so that the encoder
     * sends it instead of converting the builder a second time, as the driver converts each update once per bulk.
     */
    private static WriteFacts withConvertedUpdate(
            WriteFacts facts, WriteRecord<?> write, @Nullable BsonDocument converted) {
        if (converted != null && converted != write.update()) {
            facts.convertedUpdate = converted;
        }
        return facts;
    }

    /**
     * Checks an update document or pipeline.
     *
     * @return the update document converted to BSON where checking it converted it, or null (a pipeline, a {@code
     *     Document} or {@code BsonDocument}, which are read without converting them)
     */
    private @Nullable BsonDocument checkUpdate(
            int index, WriteKind kind, @Nullable Bson update, @Nullable List<? extends Bson> pipeline) {
        if (update == null) {
            if (pipeline == null) {
                throw invalid(
                        index,
                        kind.modelName(),
                        Problem.NULL_ELEMENT,
                        "the update is null; pass an update document such as {$set: {...}} or a pipeline");
            }
            if (pipeline.isEmpty()) {
                throw invalid(
                        index,
                        kind.modelName(),
                        Problem.UPDATE_WITHOUT_OPERATORS,
                        "the update pipeline is empty, which the driver refuses too (\"Invalid pipeline for an update."
                                + " The pipeline may not be empty.\"); give it a stage such as {$set: {...}}");
            }
            int stage = 0;
            for (Bson step : pipeline) {
                if (step == null) {
                    throw invalid(
                            index,
                            kind.modelName(),
                            Problem.NULL_ELEMENT,
                            "stage " + stage + " of the update pipeline is null; remove it");
                }
                checkDepthOnly(index, kind, "update pipeline stage " + stage, step, NestingDepth.STATEMENT_ELEMENT);
                stage++;
            }
            return null; // a pipeline's stages ($set, $unset, $replaceWith, ...) are checked by the server
        }
        BsonDocument converted = null;
        Set<String> fields = shortcuts.updateFields(update);
        if (fields == null) {
            converted = checkDepth(index, kind, "update", update, NestingDepth.STATEMENT_PART);
            fields = converted.keySet();
        } else if (NestingDepth.exceeds(update, NestingDepth.STATEMENT_PART)) { // a Document or BsonDocument: walked
            throw NestingDepth.tooDeep(index, kind.modelName(), "update", NestingDepth.STATEMENT_PART);
        }
        if (fields.isEmpty()) {
            throw invalid(
                    index,
                    kind.modelName(),
                    Problem.UPDATE_WITHOUT_OPERATORS,
                    "the update document is empty; give it an update operator such as {$set: {...}},"
                            + " or use DeleteOneModel/ReplaceOneModel");
        }
        for (String field : fields) {
            if (!field.startsWith("$")) {
                throw invalid(
                        index,
                        kind.modelName(),
                        Problem.UPDATE_WITHOUT_OPERATORS,
                        "the update document has the field '" + field + "', which is not an update operator;"
                                + " wrap the fields in {$set: {...}}, or use ReplaceOneModel to replace the whole document");
            }
        }
        return converted;
    }

    private void checkArrayFilters(int index, WriteKind kind, @Nullable List<? extends Bson> arrayFilters) {
        if (arrayFilters == null) {
            return;
        }
        int position = 0;
        for (Bson filter : arrayFilters) {
            if (filter != null) {
                checkDepthOnly(index, kind, "array filter " + position, filter, NestingDepth.STATEMENT_ELEMENT);
            }
            position++;
        }
    }

    /** A statement's {@code hint} and {@code sort} documents sit where its filter does: the same nesting limit. */
    private void checkHintAndSort(int index, WriteKind kind, WriteRecord<? extends T> write) {
        if (write.hint() != null) {
            checkDepthOnly(index, kind, "hint", write.hint(), NestingDepth.STATEMENT_PART);
        }
        if (write.sort() != null) {
            checkDepthOnly(index, kind, "sort", write.sort(), NestingDepth.STATEMENT_PART);
        }
    }

    private WriteFacts keyedByFilter(int index, WriteRecord<? extends T> write, long documentSize) {
        BsonDocument encoded = encodeFilter(index, write.kind(), write.filter());
        return keyedByEncodedFilter(index, write, encoded, idEquality(encoded), documentSize);
    }

    /** As {@link #keyedByFilter}, for a filter already encoded and its {@code _id} equality already read. */
    private WriteFacts keyedByEncodedFilter(
            int index,
            WriteRecord<? extends T> write,
            BsonDocument encoded,
            @Nullable BsonValue id,
            long documentSize) {
        boolean otherConditions = encoded.size() > 1;
        if (id == null) {
            return new WriteFacts(index, write, encoded, otherConditions, Unkeyed.FILTER_NOT_ID_EQUALITY, documentSize);
        }
        Collation collation = write.collation();
        if (collation != null && !"simple".equals(collation.getLocale())) {
            return new WriteFacts(index, write, encoded, otherConditions, Unkeyed.COLLATION, documentSize);
        }
        // A filter that is only {_id: id} is not kept: WriteFacts rebuilds it from the id.
        boolean idOnly = !otherConditions && encoded.get("_id") == id;
        WriteFacts facts =
                new WriteFacts(index, write, idOnly ? null : encoded, otherConditions, Unkeyed.NO, documentSize);
        facts.id = id;
        return facts;
    }

    /**
     * An UpdateMany/DeleteMany: keyed and sent as a single-document statement when its filter pins {@code _id} with
     * the simple collation and the collection allows it ({@link SingleDocumentById}); unkeyed otherwise.
     */
    private WriteFacts multiByFilter(int index, WriteRecord<? extends T> write) {
        BsonDocument encoded = encodeFilter(index, write.kind(), write.filter());
        BsonValue id = idEquality(encoded);
        Collation collation = write.collation();
        if (id == null || (collation != null && !"simple".equals(collation.getLocale()))) {
            return new WriteFacts(index, write, encoded, encoded.size() > 1, Unkeyed.MULTI_DOCUMENT, -1);
        }
        String kept = singleDocumentById.refusal(id, write.upsert(), encoded);
        if (kept != null) {
            WriteFacts facts =
                    new WriteFacts(index, write, encoded, encoded.size() > 1, Unkeyed.MULTI_DOCUMENT_KEPT, -1);
            facts.keptBecause = kept;
            return facts;
        }
        WriteFacts facts = keyedByEncodedFilter(index, write, encoded, id, -1); // the filter is read once
        facts.singleDocument = true;
        return facts;
    }

    /** The filter as a private copy: the caller may change its own filter object after planning. */
    private BsonDocument encodeFilter(int index, WriteKind kind, @Nullable Bson filter) {
        if (filter == null) {
            throw invalid(
                    index,
                    kind.modelName(),
                    Problem.NULL_ELEMENT,
                    "the filter is null; pass a filter such as Filters.eq(\"_id\", id), or Filters.empty() for all documents");
        }
        BsonDocument copy = shortcuts.filter(filter); // null past the driver's nesting limit too
        if (copy != null) {
            return copy;
        }
        BsonDocument encoded = checkDepth(index, kind, "filter", filter, NestingDepth.STATEMENT_PART);
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

    /**
     * Size, {@code _id} and first {@code $} field of a document. A plain {@code Document} is measured by arithmetic when
     * it clearly fits (encoding costs most of the planning time); anything else, or anything near the limit, is
     * encoded with the collection's codec.
     */
    private MeasuredDocument measure(int index, WriteKind kind, T document, int depthLimit) {
        MeasuredDocument measured = shortcuts.measure(document, depthLimit);
        if (measured == null || measured.size > MAX_DOCUMENT_SIZE_BYTES - SHORTCUT_MARGIN_BYTES) {
            try {
                measured = encode(document, depthLimit);
            } catch (BsonSerializationException e) {
                if (NestingDepth.isDepthError(e)) {
                    throw NestingDepth.tooDeep(index, kind.modelName(), "document", depthLimit);
                }
                throw e;
            }
        }
        if (measured.size > MAX_DOCUMENT_SIZE_BYTES) {
            throw invalid(index, kind.modelName(), Problem.DOCUMENT_TOO_LARGE, tooLarge(measured.size));
        }
        return measured;
    }

    private MeasuredDocument encode(T document, int depthLimit) {
        buffer.truncateToPosition(0);
        // The codec writes as deep as the driver would let it at this place in the command, and no deeper.
        try (BsonBinaryWriter writer =
                new BsonBinaryWriter(new BsonWriterSettings(depthLimit), new BsonBinaryWriterSettings(), buffer)) {
            codec.encode(writer, document, MEASURING);
        }
        int size = buffer.getPosition();
        // Walk the top level only; nested values are skipped by their length prefix.
        BsonValue id = null;
        String firstOperator = null;
        try (BsonBinaryReader reader = new BsonBinaryReader(ByteBuffer.wrap(buffer.getInternalBuffer(), 0, size))) {
            reader.readStartDocument();
            while (reader.readBsonType() != BsonType.END_OF_DOCUMENT) {
                String name = reader.readName();
                if (id == null && "_id".equals(name)) {
                    id = BSON_VALUE_CODEC.decode(reader, DECODER);
                    continue;
                }
                if (firstOperator == null && isOperator(name)) {
                    firstOperator = name;
                }
                reader.skipValue();
            }
        }
        return MeasuredDocument.encoded(size, id, firstOperator);
    }

    /**
     * {@code part} as BSON, refused with the driver's exception when it nests deeper than {@code limit} levels (the
     * driver's limit at its place in the command): counted without recursion, before anything recurses into it.
     */
    private BsonDocument checkDepth(int index, WriteKind kind, String part, Bson value, int limit) {
        if (NestingDepth.exceeds(value, limit)) {
            throw NestingDepth.tooDeep(index, kind.modelName(), part, limit);
        }
        BsonDocument encoded;
        try {
            encoded = value instanceof BsonDocument document
                    ? document
                    : value.toBsonDocument(documentClass, codecRegistry);
        } catch (BsonSerializationException e) {
            if (NestingDepth.isDepthError(e)) {
                throw NestingDepth.tooDeep(index, kind.modelName(), part, limit);
            }
            throw e;
        }
        if (encoded != value && NestingDepth.exceeds(encoded, limit)) {
            throw NestingDepth.tooDeep(index, kind.modelName(), part, limit);
        }
        return encoded;
    }

    /** {@link #checkDepth} where the BSON is not needed: a {@code Document} or {@code BsonDocument} is only walked. */
    private void checkDepthOnly(int index, WriteKind kind, String part, Bson value, int limit) {
        if (!(value instanceof java.util.Map)) {
            checkDepth(index, kind, part, value, limit);
        } else if (NestingDepth.exceeds(value, limit)) {
            throw NestingDepth.tooDeep(index, kind.modelName(), part, limit);
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
