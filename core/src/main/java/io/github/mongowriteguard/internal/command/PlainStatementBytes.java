package io.github.mongowriteguard.internal.command;

import io.github.mongowriteguard.bulk.WriteKind;
import io.github.mongowriteguard.internal.plan.DocumentShortcuts;
import io.github.mongowriteguard.internal.plan.PlannedBulk;
import io.github.mongowriteguard.internal.plan.WriteRecord;
import java.util.ArrayList;
import java.util.Date;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
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
import org.bson.codecs.DocumentCodec;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;
import org.bson.types.ObjectId;

/**
 * Writes the usual update, replace and delete statements straight into the command's bytes: the bytes
 * {@link StatementWriter} writes for them through a {@code BsonBinaryWriter} and the codecs, without the writer's state
 * checks and a codec lookup per field, which cost as much as the rest of planning and encoding a {@code Filters.eq}
 * write. The usual statement: no collation, hint, array filters or sort; a filter, converted update or update that is a
 * plain {@code BsonDocument} tree, and a replacement or update that is a plain {@code Document}, of
 * the scalars below, documents and lists.
 *
 * <p>Each element is written as {@code BsonBinaryWriter} writes it (type byte, name as a C string, value) with the same
 * {@code OutputBuffer} calls, so the bytes and the refusals (a name with a null character) are the writer's. Anything
 * else (another value type, a subclass, a document nested past {@link #MAX_LEVELS}) makes {@link #write} return false:
 * the caller drops what it wrote and writes the statement through {@link StatementWriter}, which writes every
 * statement the driver writes.
 */
final class PlainStatementBytes {
    /** Levels written here; deeper statements go through the writer, which applies the driver's nesting limit. */
    private static final int MAX_LEVELS = 64;

    /**
     * Whether a {@code Document} update is written here: the registry's codec for it and for the plain Java values is
     * the driver's standard one ({@link DocumentShortcuts#usesStandardCodecs()}).
     */
    private final boolean plainDocuments;
    /** Whether a replacement that is a {@code Document} is written here: also the collection's codec is that one. */
    private final boolean plainReplacements;

    PlainStatementBytes(Class<?> documentClass, CodecRegistry registry) {
        this.plainDocuments = new DocumentShortcuts(registry).usesStandardCodecs()
                && registry.get(Document.class).getClass() == DocumentCodec.class;
        this.plainReplacements = plainDocuments && registry.get(documentClass).getClass() == DocumentCodec.class;
    }

    /**
     * Writes the statement of write {@code index} as a document at the buffer's position; false when it is not a usual
     * statement, with some of its bytes possibly written (the caller truncates them).
     */
    boolean write(CommandBuffer out, int index, PlannedBulk plan) {
        WriteKind kind = plan.sentAs(index);
        WriteRecord<?> write = plan.write(index);
        if (kind == WriteKind.INSERT_ONE) {
            return false; // inserts go as trees (TreeCommands), or through the codec writer where a tree cannot be used
        }
        if (write.collation() != null
                || write.hint() != null
                || write.hintString() != null
                || write.arrayFilters() != null
                || write.sort() != null) {
            return false;
        }
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

    private boolean update(CommandBuffer out, WriteKind kind, WriteRecord<?> write, int index, PlannedBulk plan) {
        if (kind == WriteKind.REPLACE_ONE) {
            return plainReplacements
                    && write.document() instanceof Document replacement
                    && document(out, replacement, 2);
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
        return plainDocuments && update.getClass() == Document.class && document(out, (Document) update, 2);
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
        Class<?> type = value.getClass();
        if (type == BsonInt32.class) {
            element(out, BsonType.INT32, name, position);
            out.writeInt32(((BsonInt32) value).getValue());
        } else if (type == BsonInt64.class) {
            element(out, BsonType.INT64, name, position);
            out.writeInt64(((BsonInt64) value).getValue());
        } else if (type == BsonString.class) {
            element(out, BsonType.STRING, name, position);
            out.writeString(((BsonString) value).getValue());
        } else if (type == BsonObjectId.class) {
            element(out, BsonType.OBJECT_ID, name, position);
            out.writeObjectId(((BsonObjectId) value).getValue());
        } else if (type == BsonDouble.class) {
            element(out, BsonType.DOUBLE, name, position);
            out.writeDouble(((BsonDouble) value).getValue());
        } else if (type == BsonBoolean.class) {
            element(out, BsonType.BOOLEAN, name, position);
            out.writeByte(((BsonBoolean) value).getValue() ? 1 : 0);
        } else if (type == BsonDateTime.class) {
            element(out, BsonType.DATE_TIME, name, position);
            out.writeInt64(((BsonDateTime) value).getValue());
        } else if (type == BsonNull.class) {
            element(out, BsonType.NULL, name, position);
        } else if (type == BsonDocument.class) {
            element(out, BsonType.DOCUMENT, name, position);
            return tree(out, (BsonDocument) value, level + 1);
        } else if (type == BsonArray.class) {
            element(out, BsonType.ARRAY, name, position);
            return treeArray(out, (BsonArray) value, level + 1);
        } else {
            return false;
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

    private static boolean list(CommandBuffer out, ArrayList<?> list, int level) {
        if (level > MAX_LEVELS) {
            return false;
        }
        int start = out.getPosition();
        out.writeInt32(0);
        for (int i = 0, size = list.size(); i < size; i++) {
            if (!plainElement(out, null, i, list.get(i), level)) {
                return false;
            }
        }
        end(out, start);
        return true;
    }

    /** A plain Java value as the driver's standard codec for its class writes it. */
    private static boolean plainElement(CommandBuffer out, String name, int position, Object value, int level) {
        if (value == null) {
            element(out, BsonType.NULL, name, position);
            return true;
        }
        Class<?> type = value.getClass();
        if (type == Integer.class) {
            element(out, BsonType.INT32, name, position);
            out.writeInt32((Integer) value);
        } else if (type == String.class) {
            element(out, BsonType.STRING, name, position);
            out.writeString((String) value);
        } else if (type == Long.class) {
            element(out, BsonType.INT64, name, position);
            out.writeInt64((Long) value);
        } else if (type == Double.class) {
            element(out, BsonType.DOUBLE, name, position);
            out.writeDouble((Double) value);
        } else if (type == Boolean.class) {
            element(out, BsonType.BOOLEAN, name, position);
            out.writeByte((Boolean) value ? 1 : 0);
        } else if (type == ObjectId.class) {
            element(out, BsonType.OBJECT_ID, name, position);
            out.writeObjectId((ObjectId) value);
        } else if (type == Date.class) {
            element(out, BsonType.DATE_TIME, name, position);
            out.writeInt64(((Date) value).getTime());
        } else if (type == Document.class) {
            element(out, BsonType.DOCUMENT, name, position);
            return document(out, (Document) value, level + 1);
        } else if (type == ArrayList.class) {
            element(out, BsonType.ARRAY, name, position);
            return list(out, (ArrayList<?>) value, level + 1);
        } else {
            return false;
        }
        return true;
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
