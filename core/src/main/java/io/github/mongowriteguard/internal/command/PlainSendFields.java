package io.github.mongowriteguard.internal.command;

import io.github.mongowriteguard.internal.plan.PlainValue;
import java.util.List;
import org.bson.BsonElement;
import org.bson.BsonType;
import org.bson.BsonValue;

/**
 * The per-send fields of a command ({@code maxTimeMS}, {@code txnNumber}, the guard's {@code comment}) written as BSON
 * bytes by hand when every one is a plain value ({@link PlainValue}) of three types: a 32- or 64-bit integer, or a
 * string of ASCII characters, under an ASCII name. Those are the bytes a {@code BsonBinaryWriter} writes for them; a field of any other kind (a write
 * concern document, a caller's comment that is a document or not ASCII) is left to the writer ({@link #size} says
 * -1). Every guarded command adds these fields, so writing them costs no writer, reader or buffer per send.
 */
final class PlainSendFields {
    private PlainSendFields() {}

    /**
     * The bytes the fields take as elements of a document (type byte, name, terminating zero, value), or -1 when one
     * of them is not plain.
     */
    static int size(List<BsonElement> fields) {
        int size = 0;
        for (int i = 0; i < fields.size(); i++) {
            BsonElement field = fields.get(i);
            int name = asciiLength(field.getName(), false);
            int value = valueSize(field.getValue());
            if (name < 0 || value < 0) {
                return -1;
            }
            size += 1 + name + 1 + value;
        }
        return size;
    }

    /**
     * Writes the fields at {@code at}; {@code target} has room for {@link #size} bytes from there.
     *
     * @return the position after the last field
     */
    static int write(List<BsonElement> fields, byte[] target, int at) {
        int position = at;
        for (int i = 0; i < fields.size(); i++) {
            BsonElement field = fields.get(i);
            BsonValue value = field.getValue();
            target[position++] = (byte) value.getBsonType().getValue();
            position = writeAscii(field.getName(), target, position);
            target[position++] = 0;
            switch (value.getBsonType()) {
                case INT32 -> position = writeInt(value.asInt32().getValue(), target, position);
                case INT64 -> position = writeLong(value.asInt64().getValue(), target, position);
                case STRING -> {
                    String text = value.asString().getValue();
                    position = writeInt(text.length() + 1, target, position);
                    position = writeAscii(text, target, position);
                    target[position++] = 0;
                }
                default -> throw new IllegalArgumentException("not a plain send field: " + field.getName());
            }
        }
        return position;
    }

    private static int valueSize(BsonValue value) {
        BsonType type = PlainValue.ofBson(value);
        if (type == BsonType.INT32) {
            return 4;
        }
        if (type == BsonType.INT64) {
            return 8;
        }
        if (type == BsonType.STRING) {
            int length = asciiLength(value.asString().getValue(), true);
            return length < 0 ? -1 : 4 + length + 1;
        }
        return -1;
    }

    /**
     * The length of {@code text} when each of its characters is one byte in UTF-8 (1 to 127; a name, a C string, may
     * not hold a zero, which the writer refuses), else -1.
     */
    private static int asciiLength(String text, boolean zeroAllowed) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c >= 0x80 || (c == 0 && !zeroAllowed)) {
                return -1;
            }
        }
        return text.length();
    }

    private static int writeAscii(String text, byte[] target, int at) {
        for (int i = 0; i < text.length(); i++) {
            target[at + i] = (byte) text.charAt(i);
        }
        return at + text.length();
    }

    private static int writeInt(int value, byte[] target, int at) {
        target[at] = (byte) value;
        target[at + 1] = (byte) (value >>> 8);
        target[at + 2] = (byte) (value >>> 16);
        target[at + 3] = (byte) (value >>> 24);
        return at + 4;
    }

    private static int writeLong(long value, byte[] target, int at) {
        writeInt((int) value, target, at);
        return writeInt((int) (value >>> 32), target, at + 4);
    }
}
