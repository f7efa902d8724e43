package io.github.mongowriteguard.internal.command;

import java.util.ArrayList;
import java.util.List;
import org.bson.BsonBinaryWriter;
import org.bson.BsonBoolean;
import org.bson.BsonElement;
import org.bson.BsonString;

/**
 * The fields of a write command before its statements, in the driver's order: {@code <command>: <collection>,
 * ordered, bypassDocumentValidation (when set), let (when set)}. Written by the guard into its own bytes
 * ({@link #write}) or handed to the driver as values ({@link #elements}): the same fields either way.
 */
record CommandHead(String collection, StatementBucket bucket, boolean ordered, CommandOptions options) {

    void write(BsonBinaryWriter writer) {
        writer.writeString(bucket.kind.commandName(), collection);
        writer.writeBoolean("ordered", ordered);
        if (options.bypassDocumentValidation() != null) {
            writer.writeBoolean("bypassDocumentValidation", options.bypassDocumentValidation());
        }
        if (options.let() != null) {
            writer.writeName("let");
            StatementWriter.BSON_CODEC.encode(writer, options.let(), StatementWriter.CONTEXT);
        }
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
