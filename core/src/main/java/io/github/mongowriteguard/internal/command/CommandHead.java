package io.github.mongowriteguard.internal.command;

import java.util.ArrayList;
import java.util.List;
import org.bson.BsonBinaryWriter;
import org.bson.BsonBinaryWriterSettings;
import org.bson.BsonBoolean;
import org.bson.BsonElement;
import org.bson.BsonString;
import org.bson.BsonType;
import org.bson.BsonWriterSettings;

/**
 * The fields of a write command before its statements, in the driver's order: {@code <command>: <collection>,
 * ordered, bypassDocumentValidation (when set), let (when set)}. Written by the guard into its own bytes
 * ({@link #write}) or handed to the driver as values ({@link #elements}): the same fields either way.
 */
record CommandHead(String collection, StatementBucket bucket, boolean ordered, CommandOptions options) {

    /**
     * Writes the fields at the buffer's position, as a {@code BsonBinaryWriter} writes them inside the command document:
     * each element's type byte, name and value by hand; {@code let}'s value by a writer of its own, as a top-level
     * document (the same bytes as an embedded one) under the nesting limit the driver applies one level down.
     */
    void write(CommandBuffer buffer) {
        buffer.writeByte(BsonType.STRING.getValue());
        buffer.writeCString(bucket.kind.commandName());
        buffer.writeString(collection);
        writeBoolean(buffer, "ordered", ordered);
        if (options.bypassDocumentValidation() != null) {
            writeBoolean(buffer, "bypassDocumentValidation", options.bypassDocumentValidation());
        }
        if (options.let() != null) {
            buffer.writeByte(BsonType.DOCUMENT.getValue());
            buffer.writeCString("let");
            try (BsonBinaryWriter writer = new BsonBinaryWriter(
                    new BsonWriterSettings(EncodedCommandWriter.DRIVER_MAX_DEPTH - 1),
                    new BsonBinaryWriterSettings(),
                    buffer)) {
                StatementWriter.BSON_CODEC.encode(writer, options.let(), StatementWriter.CONTEXT);
            }
        }
    }

    private static void writeBoolean(CommandBuffer buffer, String name, boolean value) {
        buffer.writeByte(BsonType.BOOLEAN.getValue());
        buffer.writeCString(name);
        buffer.writeByte(value ? 1 : 0);
    }

    /** The same fields as {@link #write} writes, as values, with room for the statements and the per-send fields. */
    List<BsonElement> elements() {
        List<BsonElement> elements = new ArrayList<>(9);
        elements.add(new BsonElement(bucket.kind.commandName(), new BsonString(collection)));
        elements.add(new BsonElement("ordered", BsonBoolean.valueOf(ordered)));
        if (options.bypassDocumentValidation() != null) {
            elements.add(new BsonElement(
                    "bypassDocumentValidation", BsonBoolean.valueOf(options.bypassDocumentValidation())));
        }
        if (options.let() != null) {
            elements.add(new BsonElement("let", options.let()));
        }
        return elements;
    }
}
