package io.github.mongowriteguard.internal.command;

import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonElement;

/**
 * A command whose statements are BSON values ({@code BsonDocument} trees sharing the caller's values), encoded by the
 * driver straight into its pooled message buffer: {@code runCommand} encodes a plain {@code BsonDocument} with
 * {@code BsonDocumentCodec}, value by value (driver-core {@code CommandMessage.writeCommand} →
 * {@code BsonWriterHelper.encodeUsingRegistry}), and a {@code BsonBinary}'s array is written without being copied. A
 * command of the guard's own bytes is piped by the driver through a temporary array of its size
 * ({@code RawBsonDocumentCodec} → {@code BsonBinaryWriter.pipeDocument}): that copy is what this form saves.
 *
 * <p>The values are never changed once the command is built: every send, and every resend of its copy, encodes the
 * same bytes.
 */
record TreeCommandBody(List<BsonElement> head, String statementsField, BsonArray statements) implements CommandBody {

    @Override
    public BsonDocument withSendFields(List<BsonElement> sendFields) {
        BsonDocument command = new BsonDocument((head.size() + 1 + sendFields.size()) * 4 / 3 + 1);
        for (BsonElement element : head) {
            command.put(element.getName(), element.getValue());
        }
        command.put(statementsField, statements);
        for (BsonElement element : sendFields) {
            command.put(element.getName(), element.getValue());
        }
        return command;
    }
}
