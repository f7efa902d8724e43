package io.github.mongowriteguard.internal.plan;

import io.github.mongowriteguard.bulk.WriteKind;
import io.github.mongowriteguard.exception.InvalidBulkException.Problem;
import java.nio.ByteBuffer;
import org.bson.BsonBinaryReader;
import org.bson.BsonBinaryWriter;
import org.bson.BsonBinaryWriterSettings;
import org.bson.BsonSerializationException;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.BsonWriterSettings;
import org.bson.codecs.BsonValueCodec;
import org.bson.codecs.Codec;
import org.bson.codecs.DecoderContext;
import org.bson.codecs.EncoderContext;
import org.bson.io.BasicOutputBuffer;
import org.jspecify.annotations.Nullable;

/**
 * Measures a document to insert or a replacement before anything is sent: its encoded size (refused over the server's
 * 16 MiB maxBsonObjectSize), its {@code _id} and its first top-level {@code $} field. A plain {@code Document} is
 * measured by arithmetic ({@link DocumentShortcuts}); anything else is encoded once with the collection's codec, no
 * deeper than the driver's writer would go at its place in the command.
 *
 * <p>One instance per {@code plan} call: it reuses one encoding buffer, so it is not thread-safe.
 *
 * @param <T> the collection's document class
 */
final class DocumentMeasurer<T> {

    /** Documents measured by arithmetic within this distance of the limit are encoded to be exact. */
    private static final int SHORTCUT_MARGIN_BYTES = 1024 * 1024;

    // Not "collectible": a POJO codec generates a missing _id into the object while encoding a collectible document,
    // and this step must change nothing. The size is the same either way.
    private static final EncoderContext MEASURING = EncoderContext.builder().build();
    private static final DecoderContext DECODER = DecoderContext.builder().build();
    private static final BsonValueCodec BSON_VALUE_CODEC = new BsonValueCodec();

    private final Codec<T> codec;
    private final DocumentShortcuts shortcuts;
    /** Made at the first document encoded: a plan of plain {@code Document}s, measured by arithmetic, needs none. */
    private @Nullable BasicOutputBuffer buffer;

    DocumentMeasurer(Codec<T> codec, DocumentShortcuts shortcuts) {
        this.codec = codec;
        this.shortcuts = shortcuts;
    }

    /**
     * Size, {@code _id} and first {@code $} field of a document. A plain {@code Document} is measured by arithmetic when
     * it clearly fits (encoding costs most of the planning time); anything else, or anything near the limit, is
     * encoded with the collection's codec.
     */
    MeasuredDocument measure(int index, WriteKind kind, T document, int depthLimit) {
        MeasuredDocument measured = shortcuts.measure(document, depthLimit);
        if (measured == null || measured.size > WriteInspector.MAX_DOCUMENT_SIZE_BYTES - SHORTCUT_MARGIN_BYTES) {
            try {
                measured = encode(document, depthLimit);
            } catch (BsonSerializationException e) {
                if (NestingDepth.isDepthError(e)) {
                    throw NestingDepth.tooDeep(index, kind.modelName(), "document", depthLimit);
                }
                throw e;
            }
        }
        if (measured.size > WriteInspector.MAX_DOCUMENT_SIZE_BYTES) {
            throw WriteInspector.invalid(
                    index, kind.modelName(), Problem.DOCUMENT_TOO_LARGE, WriteInspector.tooLarge(measured.size));
        }
        return measured;
    }

    private MeasuredDocument encode(T document, int depthLimit) {
        BasicOutputBuffer buffer = this.buffer;
        if (buffer == null) {
            buffer = new BasicOutputBuffer(1024);
            this.buffer = buffer;
        }
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
                if (firstOperator == null && WriteInspector.isOperator(name)) {
                    firstOperator = name;
                }
                reader.skipValue();
            }
        }
        return MeasuredDocument.encoded(size, id, firstOperator);
    }
}
