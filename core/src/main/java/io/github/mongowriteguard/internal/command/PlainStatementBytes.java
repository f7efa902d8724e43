package io.github.mongowriteguard.internal.command;

import io.github.mongowriteguard.bulk.WriteKind;
import io.github.mongowriteguard.internal.plan.PlainValue;
import io.github.mongowriteguard.internal.plan.PlannedBulk;
import io.github.mongowriteguard.internal.plan.WriteRecord;
import java.util.Date;
import java.util.List;
import java.util.Map;
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
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.bson.types.Binary;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;

/**
 * Writes update, replace and delete statements straight into the command's bytes: the bytes {@link StatementWriter}
 * writes for them through a {@code BsonBinaryWriter} and the codecs, without the writer's state checks and a codec
 * lookup per field, which cost as much as the rest of planning and encoding a {@code Filters.eq} write. Which
 * statements come here is {@link StatementRoute}'s choice (no collation, hint, array filters or sort; a filter,
 * converted update or update that is a {@code BsonDocument} tree, and a replacement or update that is a
 * {@code Document}); their values must be plain ({@link PlainValue}).
 *
 * <p>Each element is written as {@code BsonBinaryWriter} writes it (type byte, name as a C string, value) with the same
 * {@code OutputBuffer} calls, so the bytes and the refusals (a name with a null character) are the writer's. Anything
 * else (a value that is not plain, a document nested past {@link #MAX_LEVELS}) makes {@link #write} return false: the
 * caller drops what it wrote and writes the statement through {@link StatementWriter}, which writes every statement the
 * driver writes.
 */
final class PlainStatementBytes {
    /** Levels written here; deeper statements go through the writer, which applies the driver's nesting limit. */
    private static final int MAX_LEVELS = 64;

    private PlainStatementBytes() {}

    /**
     * Writes the statement of write {@code index}, an update, replacement or delete whose route is hand-written bytes,
     * as a document at the buffer's position; false when a value is not plain, with some of its bytes possibly written
     * (the caller truncates them).
     */
    static boolean write(CommandBuffer out, int index, PlannedBulk plan) {
        WriteKind kind = plan.sentAs(index);
        WriteRecord<?> write = plan.write(index);
        int start = out.getPosition();
        out.writeInt32(0);
        out.writeByte(BsonType.DOCUMENT.getValue());
        out.writeCString("q");
        if (!filter(out, index, plan)) {
            return false;
        }
        if (kind == WriteKind.DELETE_ONE || kind == WriteKind.DELETE_MANY) {
            out.writeByte(BsonType.INT32.getValue());
            out.writeCString("limit");
            out.writeInt32(kind.isMulti() ? 0 : 1);
        } else {
            out.writeByte(BsonType.DOCUMENT.getValue());
            out.writeCString("u");
            if (!update(out, kind, write, index, plan)) {
                return false;
            }
            if (kind.isMulti()) {
                trueField(out, "multi");
            }
            if (write.upsert()) {
                trueField(out, "upsert");
            }
        }
        end(out, start);
        return true;
    }

    private static boolean filter(CommandBuffer out, int index, PlannedBulk plan) {
        BsonDocument kept = plan.keptFilter(index);
        if (kept != null) {
            return tree(out, kept, 2);
        }
        BsonValue id = plan.keyedId(index);
        if (id == null) {
            return false;
        }
        int start = out.getPosition();
        out.writeInt32(0);
        if (!treeElement(out, "_id", id, 2)) {
            return false;
        }
        end(out, start);
        return true;
    }

    private static boolean update(
            CommandBuffer out, WriteKind kind, WriteRecord<?> write, int index, PlannedBulk plan) {
        if (kind == WriteKind.REPLACE_ONE) {
            return write.document() instanceof Document replacement && document(out, replacement, 2);
        }
        Bson update = write.update();
        if (update == null) {
            return false; // a pipeline
        }
        BsonDocument converted = plan.convertedUpdate(index);
        if (converted != null) {
            return tree(out, converted, 2);
        }
        if (update.getClass() == BsonDocument.class) {
            return tree(out, (BsonDocument) update, 2);
        }
        return update.getClass() == Document.class && document(out, (Document) update, 2);
    }

    /** A {@code BsonDocument} as {@code BsonDocumentCodec} writes it with the driver's value codecs. */
    private static boolean tree(CommandBuffer out, BsonDocument document, int level) {
        if (document.getClass() != BsonDocument.class || level > MAX_LEVELS) {
            return false;
        }
        int start = out.getPosition();
        out.writeInt32(0);
        for (Map.Entry<String, BsonValue> field : document.entrySet()) {
            if (!treeElement(out, field.getKey(), field.getValue(), level)) {
                return false;
            }
        }
        end(out, start);
        return true;
    }

    private static boolean treeArray(CommandBuffer out, BsonArray array, int level) {
        if (array.getClass() != BsonArray.class || level > MAX_LEVELS) {
            return false;
        }
        int start = out.getPosition();
        out.writeInt32(0);
        for (int i = 0, size = array.size(); i < size; i++) {
            if (!treeElement(out, null, i, array.get(i), level)) {
                return false;
            }
        }
        end(out, start);
        return true;
    }

    private static boolean treeElement(CommandBuffer out, String name, BsonValue value, int level) {
        return treeElement(out, name, -1, value, level);
    }

    /** One element of a document ({@code name}) or of an array (position {@code position}) at {@code level}. */
    private static boolean treeElement(CommandBuffer out, String name, int position, BsonValue value, int level) {
        BsonType type = PlainValue.ofBson(value);
        if (type == null) {
            return false;
        }
        element(out, type, name, position);
        switch (type) {
            case INT32 -> out.writeInt32(((BsonInt32) value).getValue());
            case INT64 -> out.writeInt64(((BsonInt64) value).getValue());
            case STRING -> out.writeString(((BsonString) value).getValue());
            case OBJECT_ID -> out.writeObjectId(((BsonObjectId) value).getValue());
            case DOUBLE -> out.writeDouble(((BsonDouble) value).getValue());
            case BOOLEAN -> out.writeByte(((BsonBoolean) value).getValue() ? 1 : 0);
            case DECIMAL128 -> decimal128(out, ((BsonDecimal128) value).getValue());
            case DATE_TIME -> out.writeInt64(((BsonDateTime) value).getValue());
            case BINARY -> binary(out, ((BsonBinary) value).getType(), ((BsonBinary) value).getData());
            case NULL -> {}
            case DOCUMENT -> {
                return tree(out, (BsonDocument) value, level + 1);
            }
            case ARRAY -> {
                return treeArray(out, (BsonArray) value, level + 1);
            }
            default -> {
                return false;
            }
        }
        return true;
    }

    /** A {@code Document} (not one to insert) as the driver's {@code DocumentCodec} writes it: its fields in order. */
    private static boolean document(CommandBuffer out, Document document, int level) {
        if (document.getClass() != Document.class || level > MAX_LEVELS) {
            return false;
        }
        int start = out.getPosition();
        out.writeInt32(0);
        for (Map.Entry<String, Object> field : document.entrySet()) {
            String name = field.getKey();
            if (name == null || !plainElement(out, name, -1, field.getValue(), level)) {
                return false;
            }
        }
        end(out, start);
        return true;
    }

    private static boolean list(CommandBuffer out, List<?> list, int level) {
        if (level > MAX_LEVELS) {
            return false;
        }
        int start = out.getPosition();
        out.writeInt32(0);
        int i = 0;
        for (Object value : list) {
            if (!plainElement(out, null, i++, value, level)) {
                return false;
            }
        }
        end(out, start);
        return true;
    }

    /** A plain Java value as the driver's standard codec for its class writes it. */
    private static boolean plainElement(CommandBuffer out, String name, int position, Object value, int level) {
        BsonType type = PlainValue.of(value);
        if (type == null) {
            return false;
        }
        element(out, type, name, position);
        switch (type) {
            case INT32 -> out.writeInt32((Integer) value);
            case STRING -> out.writeString((String) value);
            case INT64 -> out.writeInt64((Long) value);
            case DOUBLE -> out.writeDouble((Double) value);
            case BOOLEAN -> out.writeByte((Boolean) value ? 1 : 0);
            case OBJECT_ID -> out.writeObjectId((ObjectId) value);
            case DECIMAL128 -> decimal128(out, (Decimal128) value);
            case DATE_TIME -> out.writeInt64(((Date) value).getTime());
            case BINARY -> binary(out, ((Binary) value).getType(), ((Binary) value).getData());
            case NULL -> {}
            case DOCUMENT -> {
                return document(out, (Document) value, level + 1);
            }
            case ARRAY -> {
                return list(out, (List<?>) value, level + 1);
            }
            default -> {
                return false;
            }
        }
        return true;
    }

    /** As {@code BsonBinaryWriter} writes a decimal: its low 64 bits, then its high 64 bits. */
    private static void decimal128(CommandBuffer out, Decimal128 value) {
        out.writeInt64(value.getLow());
        out.writeInt64(value.getHigh());
    }

    /**
     * As {@code BsonBinaryWriter} writes binary data (what {@code BinaryCodec} and {@code BsonBinaryCodec} hand it):
     * the length, the subtype, for the old binary subtype (0x02) the length again inside, then the bytes.
     */
    private static void binary(CommandBuffer out, byte subtype, byte[] data) {
        boolean old = subtype == BsonBinarySubType.OLD_BINARY.getValue();
        out.writeInt32(data.length + (old ? 4 : 0));
        out.writeByte(subtype);
        if (old) {
            out.writeInt32(data.length);
        }
        out.writeBytes(data, 0, data.length);
    }

    /** An element's type byte and name: {@code name}, or the array position in decimal when {@code name} is null. */
    private static void element(CommandBuffer out, BsonType type, String name, int position) {
        out.writeByte(type.getValue());
        if (name != null) {
            out.writeCString(name);
        } else {
            out.writeArrayIndexName(position);
        }
    }

    private static void trueField(CommandBuffer out, String name) {
        out.writeByte(BsonType.BOOLEAN.getValue());
        out.writeCString(name);
        out.writeByte(1);
    }

    /** Ends the document that starts at {@code start}: its terminating byte, then its length. */
    private static void end(CommandBuffer out, int start) {
        out.writeByte(0);
        out.writeInt32(start, out.getPosition() - start);
    }
}
