package io.github.mongowriteguard.internal.plan;

import io.github.mongowriteguard.bulk.WriteKind;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.BsonWriter;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.BsonTypeCodecMap;
import org.bson.codecs.BsonValueCodecProvider;
import org.bson.codecs.Codec;
import org.bson.codecs.EncoderContext;

/**
 * Writes the parts of a statement that the plan holds into the command being encoded: a write's filter (the private
 * copy the planner took, or {@code {_id: id}} rebuilt from the {@code _id} for a filter that was nothing else) and an
 * update the planner converted from a builder. Written as the driver's {@link BsonDocumentCodec} writes a
 * {@code BsonDocument}, which is what the driver sends for these parts; the encoder calls it through
 * {@link PlannedBulk#writeFilter} and {@link PlannedBulk#writeConvertedUpdate}.
 */
final class PlannedStatementWriter {

    private static final BsonDocumentCodec DOCUMENT_CODEC = new BsonDocumentCodec();
    /** What {@link #DOCUMENT_CODEC} writes a field's value with: the codec of the value's BSON type, from its registry. */
    private static final BsonTypeCodecMap VALUE_CODECS =
            new BsonTypeCodecMap(BsonValueCodecProvider.getBsonTypeClassMap(), DOCUMENT_CODEC.getCodecRegistry());

    private static final EncoderContext ENCODER_CONTEXT =
            EncoderContext.builder().build();

    private PlannedStatementWriter() {}

    /** {@link PlannedBulk#writeFilter}: the filter of {@code write} as the value of the writer's current field. */
    static void writeFilter(WriteFacts write, BsonWriter writer) {
        BsonDocument filter = write.storedFilter();
        if (filter == null && write.kind != WriteKind.INSERT_ONE && write.id != null) {
            // {_id: id}, the filter the plan did not keep, written as the codec writes that document, without building
            // it
            writer.writeStartDocument();
            writer.writeName("_id");
            writeValue(writer, write.id);
            writer.writeEndDocument();
            return;
        }
        if (filter == null) {
            throw new IllegalArgumentException("write " + write.index + " is an insert; it has no filter");
        }
        DOCUMENT_CODEC.encode(writer, filter, ENCODER_CONTEXT);
    }

    /** {@link PlannedBulk#writeConvertedUpdate}: the converted update of {@code write}, or false when it has none. */
    static boolean writeConvertedUpdate(WriteFacts write, BsonWriter writer) {
        BsonDocument update = write.convertedUpdate;
        if (update == null) {
            return false;
        }
        DOCUMENT_CODEC.encode(writer, update, ENCODER_CONTEXT);
        return true;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static void writeValue(BsonWriter writer, BsonValue value) {
        Codec codec = VALUE_CODECS.get(value.getBsonType());
        ENCODER_CONTEXT.encodeWithChildContext(codec, writer, value);
    }
}
