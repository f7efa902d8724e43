package io.github.mongowriteguard.internal.command;

import io.github.mongowriteguard.internal.plan.DocumentShortcuts;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBinarySubType;
import org.bson.BsonDocument;
import org.bson.BsonRegularExpression;
import org.bson.BsonValue;

/**
 * The exact number of bytes {@code BsonBinaryWriter} writes for a {@code BsonDocument} tree, computed from its values
 * without encoding (and without copying a {@code BsonBinary}'s array), or -1 when the arithmetic is not sure of it:
 * a document or array of another class than {@code BsonDocument} / {@code BsonArray} (a wrapper, a raw document: the
 * driver would decode or encode them first), a {@code BsonBinary} subclass, a JavaScript-with-scope or DBPointer
 * value, a name or cstring holding a NUL character (the writer refuses it), a string with surrogates (whose encoding
 * the arithmetic does not follow), or nesting past {@code limit} levels.
 */
final class BsonTreeSize {
    private BsonTreeSize() {}

    /**
     * @param document the tree
     * @param limit    how many levels it may nest, itself included
     * @return its encoded size in bytes, or -1
     */
    static long of(BsonDocument document, int limit) {
        return document(document, 1, limit);
    }

    // BSON: document = int32 length, elements, 0x00; element = type byte, cstring name, value.
    private static long document(BsonDocument document, int depth, int limit) {
        if (depth > limit || document.getClass() != BsonDocument.class) {
            return -1;
        }
        long size = 4 + 1;
        for (Map.Entry<String, BsonValue> field : document.entrySet()) {
            long name = cstring(field.getKey());
            long value = value(field.getValue(), depth, limit);
            if (name < 0 || value < 0) {
                return -1;
            }
            size += 1 + name + value;
        }
        return size;
    }

    private static long array(BsonArray array, int depth, int limit) {
        if (depth > limit || array.getClass() != BsonArray.class) {
            return -1;
        }
        long size = 4 + 1;
        int position = 0;
        for (BsonValue element : array) {
            long value = value(element, depth, limit);
            if (value < 0) {
                return -1;
            }
            size += 1 + DocumentShortcuts.decimalDigits(position) + 1 + value; // element names are "0", "1", ...
            position++;
        }
        return size;
    }

    /** The value's bytes after its type byte and name; {@code depth} is the level of the document holding it. */
    private static long value(BsonValue value, int depth, int limit) {
        return switch (value.getBsonType()) {
            case DOUBLE, DATE_TIME, TIMESTAMP, INT64 -> 8;
            case INT32 -> 4;
            case DECIMAL128 -> 16;
            case OBJECT_ID -> 12;
            case BOOLEAN -> 1;
            case NULL, UNDEFINED, MIN_KEY, MAX_KEY -> 0;
            case STRING -> string(value.asString().getValue());
            case SYMBOL -> string(value.asSymbol().getSymbol());
            case JAVASCRIPT -> string(value.asJavaScript().getCode());
            case DOCUMENT -> document(value.asDocument(), depth + 1, limit);
            case ARRAY -> array(value.asArray(), depth + 1, limit);
            case BINARY -> binary(value.asBinary());
            case REGULAR_EXPRESSION -> regularExpression(value.asRegularExpression());
            case JAVASCRIPT_WITH_SCOPE, DB_POINTER, END_OF_DOCUMENT -> -1;
        };
    }

    /** int32 length, subtype byte, bytes; the old binary subtype (0x02) repeats the length inside (BsonBinaryWriter). */
    private static long binary(BsonBinary binary) {
        if (binary.getClass() != BsonBinary.class) {
            return -1;
        }
        return 4 + 1 + (binary.getType() == BsonBinarySubType.OLD_BINARY.getValue() ? 4 : 0) + binary.getData().length;
    }

    private static long regularExpression(BsonRegularExpression regex) {
        long pattern = cstring(regex.getPattern());
        long options = cstring(regex.getOptions());
        return pattern < 0 || options < 0 ? -1 : pattern + options;
    }

    /** int32 length, UTF-8 bytes, terminator. */
    private static long string(String text) {
        long length = DocumentShortcuts.utf8Length(text);
        return length < 0 ? -1 : 4 + length + 1;
    }

    /** UTF-8 bytes and terminator; -1 for a NUL character, which a cstring cannot hold. */
    private static long cstring(String text) {
        long length = text.indexOf(0) >= 0 ? -1 : DocumentShortcuts.utf8Length(text);
        return length < 0 ? -1 : length + 1;
    }
}
