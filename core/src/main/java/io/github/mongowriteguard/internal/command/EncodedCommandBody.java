package io.github.mongowriteguard.internal.command;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import org.bson.BsonBinaryReader;
import org.bson.BsonBinaryWriter;
import org.bson.BsonElement;
import org.bson.RawBsonDocument;
import org.bson.io.BasicOutputBuffer;

/**
 * A command the guard encoded itself: {@code {<command>: <collection>, ordered: .., <statements>: [...]}}, followed by
 * the per-send fields of the last {@link #withSendFields} call, which writes them in place after {@code bodyEnd}.
 */
final class EncodedCommandBody implements CommandBody {
    /** {@code {}}: the document the per-send fields are piped onto. */
    private static final byte[] EMPTY_DOCUMENT = {5, 0, 0, 0, 0};
    /** Enough for {@code maxTimeMS}, {@code txnNumber}, a usual write concern and the guard's comment. */
    private static final int TAIL_SIZE = 256;

    private byte[] bytes;
    /** Where the statements array ends: the per-send fields, then the document's terminating byte, are written here. */
    private final int bodyEnd;

    EncodedCommandBody(byte[] bytes, int bodyEnd) {
        this.bytes = bytes;
        this.bodyEnd = bodyEnd;
    }

    /**
     * The statements' bytes as encoded, then the per-send fields, as {@code BsonBinaryWriter.pipe} appends extra
     * elements. The fields are written in place after the statements (the statements are not copied), so the document
     * returned is valid until the next call: send it before building the next one.
     */
    @Override
    public RawBsonDocument withSendFields(List<BsonElement> sendFields) {
        int plain = PlainSendFields.size(sendFields);
        if (plain >= 0) {
            // the usual fields (numbers, the guard's comment): their bytes by hand, without a writer or a buffer
            int size = bodyEnd + plain + 1;
            if (size > bytes.length) {
                bytes = Arrays.copyOf(bytes, size);
            }
            bytes[PlainSendFields.write(sendFields, bytes, bodyEnd)] = 0;
            return sized(size);
        }
        // Only the fields are written here, as the pipe of an empty document with them as extra elements writes them;
        // their bytes then replace what follows the statements.
        BasicOutputBuffer tail = new BasicOutputBuffer(TAIL_SIZE);
        try (BsonBinaryWriter writer = new BsonBinaryWriter(tail);
                BsonBinaryReader reader = new BsonBinaryReader(ByteBuffer.wrap(EMPTY_DOCUMENT))) {
            writer.pipe(reader, sendFields);
        }
        int tailLength = tail.getPosition() - 4; // the fields and the terminating byte, without the length prefix
        int size = bodyEnd + tailLength;
        if (size > bytes.length) {
            bytes = Arrays.copyOf(bytes, size);
        }
        System.arraycopy(tail.getInternalBuffer(), 4, bytes, bodyEnd, tailLength);
        return sized(size);
    }

    /** The document of {@code size} bytes from the start, its length prefix set. */
    private RawBsonDocument sized(int size) {
        bytes[0] = (byte) size;
        bytes[1] = (byte) (size >>> 8);
        bytes[2] = (byte) (size >>> 16);
        bytes[3] = (byte) (size >>> 24);
        return new RawBsonDocument(bytes, 0, size);
    }
}
