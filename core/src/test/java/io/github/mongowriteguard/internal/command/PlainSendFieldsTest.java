package io.github.mongowriteguard.internal.command;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import org.bson.BsonBinaryReader;
import org.bson.BsonBinaryWriter;
import org.bson.BsonDocument;
import org.bson.BsonElement;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.io.BasicOutputBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class PlainSendFieldsTest {

    static List<List<BsonElement>> plainFields() {
        return List.of(
                List.of(),
                List.of(new BsonElement("maxTimeMS", new BsonInt64(30_000))),
                List.of(
                        new BsonElement("maxTimeMS", new BsonInt64(Long.MAX_VALUE)),
                        new BsonElement("txnNumber", new BsonInt64(-1)),
                        new BsonElement("comment", new BsonString("mwg:0123456789abcdef:1.1"))),
                List.of(
                        new BsonElement("n", new BsonInt32(Integer.MIN_VALUE)),
                        new BsonElement("comment", new BsonString("")),
                        new BsonElement("c", new BsonString("a \u0000 zero and \u007f"))));
    }

    @ParameterizedTest
    @MethodSource("plainFields")
    void plainFields_areTheBytesTheBinaryWriterPipes(List<BsonElement> fields) {
        byte[] expected = piped(fields);
        int size = PlainSendFields.size(fields);
        assertThat(size).isEqualTo(expected.length);

        byte[] written = new byte[size + 6];
        Arrays.fill(written, (byte) 0x55);
        int end = PlainSendFields.write(fields, written, 3);

        assertThat(end).isEqualTo(3 + size);
        assertThat(Arrays.copyOfRange(written, 3, end)).isEqualTo(expected);
        assertThat(written[2]).isEqualTo((byte) 0x55); // nothing written outside
        assertThat(written[end]).isEqualTo((byte) 0x55);
    }

    static List<List<BsonElement>> otherFields() {
        return List.of(
                List.of(new BsonElement("writeConcern", new BsonDocument("w", new BsonString("majority")))),
                List.of(
                        new BsonElement("maxTimeMS", new BsonInt64(1)),
                        new BsonElement("comment", new BsonDocument("caller", new BsonInt32(1)))),
                List.of(new BsonElement("comment", new BsonString("commentaire é"))),
                List.of(new BsonElement("commentaire-é", new BsonInt32(1))),
                List.of(new BsonElement("a\u0000b", new BsonInt32(1))));
    }

    /** A document, a non-ASCII string or name, a name with a zero: left to the writer, which knows them. */
    @ParameterizedTest
    @MethodSource("otherFields")
    void anyOtherField_isLeftToTheWriter(List<BsonElement> fields) {
        assertThat(PlainSendFields.size(fields)).isEqualTo(-1);
    }

    @Test
    void aCommandWithPlainFields_isTheDocumentWithThemAppended() {
        BsonDocument body = new BsonDocument("update", new BsonString("c")).append("ordered", new BsonInt32(1));
        List<BsonElement> fields = List.of(
                new BsonElement("maxTimeMS", new BsonInt64(5_000)),
                new BsonElement("txnNumber", new BsonInt64(7)),
                new BsonElement("comment", new BsonString("mwg:x:1.1")));
        byte[] encoded = bytesOf(body);
        int bodyEnd = encoded.length - 1; // the fields go where the terminating byte was
        EncodedCommandBody command = new EncodedCommandBody(encoded, bodyEnd);

        BsonDocument sent = command.withSendFields(fields);

        BsonDocument expected = body.clone();
        fields.forEach(field -> expected.put(field.getName(), field.getValue()));
        assertThat(sent).isEqualTo(expected);
        assertThat(sent.getFirstKey()).isEqualTo("update");
        assertThat(List.copyOf(sent.keySet()))
                .containsExactly("update", "ordered", "maxTimeMS", "txnNumber", "comment");
    }

    /** What {@code BsonBinaryWriter.pipe} writes for the fields as extra elements of an empty document, unframed. */
    private static byte[] piped(List<BsonElement> fields) {
        BasicOutputBuffer buffer = new BasicOutputBuffer();
        try (BsonBinaryWriter writer = new BsonBinaryWriter(buffer);
                BsonBinaryReader reader = new BsonBinaryReader(ByteBuffer.wrap(new byte[] {5, 0, 0, 0, 0}))) {
            writer.pipe(reader, fields);
        }
        byte[] document = buffer.toByteArray();
        return Arrays.copyOfRange(document, 4, document.length - 1); // without the length and the terminating byte
    }

    private static byte[] bytesOf(BsonDocument document) {
        BasicOutputBuffer buffer = new BasicOutputBuffer();
        try (BsonBinaryWriter writer = new BsonBinaryWriter(buffer)) {
            new org.bson.codecs.BsonDocumentCodec()
                    .encode(
                            writer,
                            document,
                            org.bson.codecs.EncoderContext.builder().build());
        }
        return buffer.toByteArray();
    }
}
