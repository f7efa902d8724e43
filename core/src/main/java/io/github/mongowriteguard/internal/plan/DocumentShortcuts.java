package io.github.mongowriteguard.internal.plan;

import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBinarySubType;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;
import org.bson.types.Binary;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;
import org.jspecify.annotations.Nullable;

/**
 * Reads the common filters, updates and documents ({@code new Document("_id", 5)}, {@code new Document("$set", ...)})
 * without the codec machinery, which costs more than the whole rest of planning. Gives exactly what encoding would
 * give, and {@code null} ("ask the codec") for anything it is not sure of.
 *
 * <p>Only plain values ({@link PlainValue}), and only when the registry encodes them with the driver's standard codecs,
 * checked once per planner: a registry that encodes, say, {@code String} differently gets the codec path.
 *
 * <p>Public for the guard's command encoder ({@link #documentToInsert}, {@link #replacement}) only: not an API.
 */
public final class DocumentShortcuts {

    private final boolean standardCodecs;

    /**
     * Shortcuts for the codecs of {@code registry}; none when it does not encode the plain types as the driver does.
     *
     * @param registry the collection's codec registry
     */
    public DocumentShortcuts(CodecRegistry registry) {
        this.standardCodecs = PlainValue.standardCodecs(registry);
    }

    /**
     * A private copy of {@code filter} as BSON, or {@code null} when only the codec can tell: a {@code BsonDocument} is
     * cloned, a {@code Document} of plain values ({@link PlainValue}) is converted
     * directly.
     */
    @Nullable
    BsonDocument filter(Bson filter) {
        if (filter instanceof BsonDocument) {
            // clone() recurses: only below the driver's limit (the caller refuses deeper ones)
            return NestingDepth.exceeds(filter, NestingDepth.STATEMENT_PART) ? null : ((BsonDocument) filter).clone();
        }
        if (!standardCodecs) {
            return null;
        }
        return filter.getClass() == Document.class ? document((Document) filter, 1, NestingDepth.STATEMENT_PART) : null;
    }

    /**
     * A document to insert as BSON values, {@code _id} first (where the driver's insert writes it: it encodes a
     * collectible document) and the other fields in their order; {@code null} when only the codec can tell (not a plain
     * {@code Document} of the types {@link #value} converts) or when it nests past {@code limit} levels. A
     * {@code Binary}'s bytes are copied once, as the driver's {@code BinaryCodec} copies them; nothing else is.
     *
     * @param document the document to insert
     * @param limit    the deepest nesting converted
     * @return the BSON values, or null when only the codec can tell
     */
    public @Nullable BsonDocument documentToInsert(Object document, int limit) {
        if (!standardCodecs || document.getClass() != Document.class || limit < 1) {
            return null;
        }
        Document fields = (Document) document;
        BsonDocument bson = new BsonDocument(fields.size() * 4 / 3 + 1);
        if (fields.containsKey("_id")) {
            BsonValue id = value(fields.get("_id"), 2, limit);
            if (id == null) {
                return null;
            }
            bson.put("_id", id);
        }
        for (Map.Entry<String, Object> field : fields.entrySet()) {
            if ("_id".equals(field.getKey())) {
                continue;
            }
            BsonValue value = value(field.getValue(), 2, limit);
            if (value == null || field.getKey() == null) {
                return null;
            }
            bson.put(field.getKey(), value);
        }
        return bson;
    }

    /**
     * A replacement as BSON values, its fields in their order (the driver encodes a replacement as it is, not as a
     * collectible document); {@code null} when only the codec can tell or when it nests past {@code limit} levels.
     * Converted as {@link #documentToInsert} converts.
     *
     * @param document the replacement document
     * @param limit    the deepest nesting converted
     * @return the BSON values, or null when only the codec can tell
     */
    public @Nullable BsonDocument replacement(Object document, int limit) {
        if (!standardCodecs || document.getClass() != Document.class) {
            return null;
        }
        return document((Document) document, 1, limit);
    }

    /** The top-level field names of an update document, or {@code null} when only the codec can tell. */
    @Nullable
    Set<String> updateFields(Bson update) {
        if (update instanceof BsonDocument) {
            return ((BsonDocument) update).keySet();
        }
        if (standardCodecs && update instanceof Document) {
            return ((Document) update).keySet(); // DocumentCodec writes the keys as they are
        }
        return null;
    }

    /**
     * The BSON value the standard codecs write for {@code value}, or {@code null} for anything but plain scalars and
     * {@code Document}s and lists of them, or for documents and lists that would nest past {@code limit} levels
     * ({@code depth} is the level of {@code value} when it is one).
     */
    @Nullable
    private static BsonValue value(@Nullable Object value, int depth, int limit) {
        BsonType type = PlainValue.of(value);
        if (type == null) {
            return null;
        }
        return switch (type) {
            case NULL -> BsonNull.VALUE;
            case INT32 -> new BsonInt32((Integer) value);
            case INT64 -> new BsonInt64((Long) value);
            case STRING -> new BsonString((String) value);
            case OBJECT_ID -> new BsonObjectId((ObjectId) value);
            case DOUBLE -> new BsonDouble((Double) value);
            case BOOLEAN -> BsonBoolean.valueOf((Boolean) value);
            case DECIMAL128 -> new BsonDecimal128((Decimal128) value);
            case DATE_TIME -> new BsonDateTime(((Date) value).getTime());
            case BINARY -> {
                Binary binary = (Binary) value;
                yield new BsonBinary(binary.getType(), binary.getData()); // as BinaryCodec writes it; getData copies
            }
            case DOCUMENT -> document((Document) value, depth, limit);
            case ARRAY -> array((List<?>) value, depth, limit);
            default -> null;
        };
    }

    @Nullable
    private static BsonArray array(List<?> list, int depth, int limit) {
        if (depth > limit) {
            return null;
        }
        BsonArray array = new BsonArray();
        for (Object element : list) {
            BsonValue converted = value(element, depth + 1, limit);
            if (converted == null) {
                return null;
            }
            array.add(converted);
        }
        return array;
    }

    @Nullable
    private static BsonDocument document(Document document, int depth, int limit) {
        if (depth > limit) {
            return null;
        }
        BsonDocument bson = new BsonDocument(document.size() * 4 / 3 + 1); // no rehash while filling
        for (Map.Entry<String, Object> field : document.entrySet()) {
            BsonValue value = value(field.getValue(), depth + 1, limit);
            if (value == null || field.getKey() == null) {
                return null; // a null name: the codec tells what it makes of it
            }
            bson.put(field.getKey(), value);
        }
        return bson;
    }

    /**
     * Size, {@code _id} and first {@code $} field of a {@code Document}, computed from its values without encoding, or
     * {@code null} when a value is not plain ({@link PlainValue}) (or a string holds surrogate pairs, whose encoding
     * the arithmetic does not follow), or when it nests deeper than {@code limit} levels (the codec then refuses it).
     */
    @Nullable
    MeasuredDocument measure(Object document) {
        return measure(document, NestingDepth.DOCUMENT);
    }

    /** {@link #measure(Object)} of a document that may nest at most {@code limit} levels. */
    @Nullable
    MeasuredDocument measure(Object document, int limit) {
        if (!standardCodecs || !(document instanceof Document)) {
            return null;
        }
        Document fields = (Document) document;
        long size = documentSize(fields, 1, limit); // -1 when a value, the _id included, is not plain
        if (size < 0) {
            return null;
        }
        String firstOperator = null;
        for (String name : fields.keySet()) {
            if (WriteInspector.isOperator(name)) {
                firstOperator = name;
                break;
            }
        }
        return MeasuredDocument.plain(size, fields.containsKey("_id"), fields.get("_id"), firstOperator);
    }

    /** {@link #value} for a value that {@link #measure} measured: never null. */
    static BsonValue toBson(@Nullable Object value) {
        BsonValue bson = value(value, 1, NestingDepth.DRIVER_MAX_DEPTH);
        if (bson == null) {
            throw new IllegalStateException(
                    "a measured value has a type the shortcuts do not convert: " + value.getClass());
        }
        return bson;
    }

    // BSON: document = int32 length, elements, 0x00; element = type byte, cstring name, value.
    // Recursion depth is bounded by limit: deeper values give -1 (the codec path then refuses them as the driver does).
    private static long documentSize(Map<?, ?> document, int depth, int limit) {
        if (depth > limit) {
            return -1;
        }
        long size = 4 + 1;
        for (Map.Entry<?, ?> field : document.entrySet()) {
            if (!(field.getKey() instanceof String)) {
                return -1;
            }
            long name = utf8Length((String) field.getKey());
            long value = valueSize(field.getValue(), depth + 1, limit);
            if (name < 0 || value < 0) {
                return -1;
            }
            size += 1 + name + 1 + value;
        }
        return size;
    }

    private static long arraySize(List<?> array, int depth, int limit) {
        if (depth > limit) {
            return -1;
        }
        long size = 4 + 1;
        int position = 0;
        for (Object element : array) {
            long value = valueSize(element, depth + 1, limit);
            if (value < 0) {
                return -1;
            }
            size += 1 + decimalDigits(position) + 1 + value; // element names are "0", "1", ...
            position++;
        }
        return size;
    }

    private static long valueSize(@Nullable Object value, int depth, int limit) {
        BsonType type = PlainValue.of(value);
        if (type == null) {
            return -1;
        }
        return switch (type) {
            case NULL -> 0;
            case INT32 -> 4;
            case INT64, DOUBLE, DATE_TIME -> 8;
            case STRING -> {
                long length = utf8Length((String) value);
                yield length < 0 ? -1 : 4 + length + 1;
            }
            case BOOLEAN -> 1;
            case OBJECT_ID -> 12;
            case DECIMAL128 -> 16;
            case BINARY -> {
                // int32 length, subtype byte; the old binary subtype (0x02) repeats the length inside
                // (BsonBinaryWriter)
                Binary binary = (Binary) value;
                yield 4 + 1 + (binary.getType() == BsonBinarySubType.OLD_BINARY.getValue() ? 4 : 0) + binary.length();
            }
            case DOCUMENT -> documentSize((Document) value, depth, limit);
            case ARRAY -> arraySize((List<?>) value, depth, limit);
            default -> -1;
        };
    }

    /**
     * UTF-8 length, as the BSON writers encode it; -1 for a string with surrogates.
     *
     * @param text a string
     * @return its UTF-8 length in bytes, or -1
     */
    public static long utf8Length(String text) {
        long length = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0x80) {
                length += 1;
            } else if (c < 0x800) {
                length += 2;
            } else if (Character.isSurrogate(c)) {
                return -1;
            } else {
                length += 3;
            }
        }
        return length;
    }

    /**
     * The length of {@code position} in decimal: the name of an array element.
     *
     * @param position an array index, 0 or more
     * @return its number of decimal digits
     */
    public static int decimalDigits(int position) {
        int digits = 1;
        for (int rest = position; rest >= 10; rest /= 10) {
            digits++;
        }
        return digits;
    }
}
