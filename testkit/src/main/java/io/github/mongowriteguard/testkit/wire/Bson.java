package io.github.mongowriteguard.testkit.wire;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.bson.BsonBinaryReader;
import org.bson.BsonBinaryWriter;
import org.bson.BsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.DecoderContext;
import org.bson.codecs.EncoderContext;
import org.bson.io.BasicOutputBuffer;

/** BSON bytes to and from {@link BsonDocument}, with the driver's own codec. */
public final class Bson {
    private static final BsonDocumentCodec CODEC = new BsonDocumentCodec();

    private Bson() {}

    /**
     * Encodes a document as BSON bytes.
     *
     * @param document the document
     * @return its bytes
     */
    public static byte[] encode(BsonDocument document) {
        try (BasicOutputBuffer buffer = new BasicOutputBuffer();
                BsonBinaryWriter writer = new BsonBinaryWriter(buffer)) {
            CODEC.encode(writer, document, EncoderContext.builder().build());
            return buffer.toByteArray();
        }
    }

    /**
     * Decodes one document from BSON bytes.
     *
     * @param bytes the bytes of one document
     * @return the document
     */
    public static BsonDocument decode(byte[] bytes) {
        return decode(ByteBuffer.wrap(bytes));
    }

    /**
     * Decodes one document starting at the buffer's position and advances the position past it.
     *
     * @param buffer the buffer, positioned at a document
     * @return the document
     */
    public static BsonDocument decode(ByteBuffer buffer) {
        ByteBuffer slice = buffer.slice().order(ByteOrder.LITTLE_ENDIAN);
        int length = slice.getInt(0);
        slice.limit(length);
        try (BsonBinaryReader reader = new BsonBinaryReader(slice)) {
            BsonDocument document =
                    CODEC.decode(reader, DecoderContext.builder().build());
            buffer.position(buffer.position() + length);
            return document;
        }
    }
}
