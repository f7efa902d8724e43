package io.github.mongowriteguard.internal.command;

import io.github.mongowriteguard.bulk.WriteKind;
import io.github.mongowriteguard.internal.plan.PlannedBulk;
import io.github.mongowriteguard.internal.plan.WriteRecord;
import java.util.Optional;
import org.bson.BsonBinaryWriter;
import org.bson.BsonDocument;
import org.bson.BsonDocumentWrapper;
import org.bson.BsonDocumentWriter;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.BsonDocumentWrapperCodec;
import org.bson.codecs.Codec;
import org.bson.codecs.DocumentCodec;
import org.bson.codecs.EncoderContext;
import org.bson.codecs.RawBsonDocumentCodec;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;

/**
 * Writes one statement into a command, field by field as the driver encodes it (driver-core
 * {@code SplittablePayload}): update {@code q, u, multi (when true), upsert (when true), collation, arrayFilters, hint,
 * sort}; delete {@code q, limit, collation, hint}; documents to insert with their {@code _id} first, replacements in
 * their own field order. Filters are the copies the plan took.
 *
 * @param <T> the collection's document class
 */
final class StatementWriter<T> {
    static final BsonDocumentCodec BSON_CODEC = new BsonDocumentCodec();
    /** The codecs the driver's command registry gives the two {@code BsonDocument} forms it does not walk field by field. */
    private static final BsonDocumentWrapperCodec WRAPPER_CODEC = new BsonDocumentWrapperCodec(BSON_CODEC);

    private static final RawBsonDocumentCodec RAW_CODEC = new RawBsonDocumentCodec();
    static final EncoderContext CONTEXT = EncoderContext.builder().build();
    /** As the driver encodes documents to insert and replacements: {@code _id} first. */
    static final EncoderContext COLLECTIBLE =
            EncoderContext.builder().isEncodingCollectibleDocument(true).build();

    private final Class<T> documentClass;
    private final CodecRegistry registry;
    private final Codec<T> codec;
    /** Whether the collection's codec writes {@code _id} first by itself under {@link #COLLECTIBLE}. */
    private final boolean codecPutsIdFirst;

    /** Which statements are written by hand. */
    private final StatementRoute route;

    StatementWriter(Class<T> documentClass, CodecRegistry registry, StatementRoute route) {
        this.documentClass = documentClass;
        this.registry = registry;
        this.codec = registry.get(documentClass);
        this.codecPutsIdFirst = codec.getClass() == DocumentCodec.class || codec.getClass() == BsonDocumentCodec.class;
        this.route = route;
    }

    /** With the route of the measured thresholds. */
    StatementWriter(Class<T> documentClass, CodecRegistry registry) {
        this(documentClass, registry, new StatementRoute(documentClass, registry));
    }

    /**
     * Writes the statement of write {@code index} at the buffer's position straight into its bytes when its route in a
     * command of bytes is {@link StatementRoute.Route#HAND_BYTES} and its values are plain ({@link PlainStatementBytes});
     * false, with the buffer as it was, when it must go through {@link #write}.
     */
    boolean writePlain(CommandBuffer buffer, int index, PlannedBulk plan) {
        if (route.of(plan, index, false) != StatementRoute.Route.HAND_BYTES) {
            return false;
        }
        int start = buffer.getPosition();
        if (PlainStatementBytes.write(buffer, index, plan)) {
            return true;
        }
        buffer.truncateToPosition(start);
        return false;
    }

    /** Writes the statement of write {@code index} as the next element of the statements array. */
    @SuppressWarnings("unchecked")
    void write(BsonBinaryWriter writer, int index, PlannedBulk plan) {
        WriteRecord<T> write = (WriteRecord<T>) plan.write(index);
        // An UpdateMany/DeleteMany pinned by _id is sent as multi: false / limit: 1 (PlannedBulk.sentAs).
        WriteKind kind = plan.sentAs(index);
        if (kind == WriteKind.INSERT_ONE) {
            Optional<BsonValue> appended = plan.appendedId(index);
            if (appended.isPresent()) {
                writeWithAppendedId(writer, write.document(), appended.get());
            } else {
                writeDocument(writer, write.document());
            }
            return;
        }
        writer.writeStartDocument();
        writer.writeName("q");
        plan.writeFilter(index, writer);
        if (kind == WriteKind.DELETE_ONE || kind == WriteKind.DELETE_MANY) {
            writer.writeInt32("limit", kind.isMulti() ? 0 : 1);
            collationAndHint(writer, write);
            writer.writeEndDocument();
            return;
        }
        writer.writeName("u");
        if (kind == WriteKind.REPLACE_ONE) {
            codec.encode(writer, write.document(), CONTEXT); // the driver keeps a replacement's field order
        } else if (write.update() != null) {
            if (!plan.writeConvertedUpdate(index, writer)) {
                encodeAsTheDriver(writer, toBson(write.update()));
            }
        } else {
            writer.writeStartArray();
            write.pipeline().forEach(stage -> encodeAsTheDriver(writer, toBson(stage)));
            writer.writeEndArray();
        }
        if (kind.isMulti()) {
            writer.writeBoolean("multi", true);
        }
        if (write.upsert()) {
            writer.writeBoolean("upsert", true);
        }
        if (write.collation() != null) {
            writer.writeName("collation");
            BSON_CODEC.encode(writer, write.collation().asDocument(), CONTEXT);
        }
        if (write.arrayFilters() != null) {
            writer.writeStartArray("arrayFilters");
            write.arrayFilters().forEach(filter -> encodeAsTheDriver(writer, toBson(filter)));
            writer.writeEndArray();
        }
        writeHint(writer, write);
        if (write.sort() != null) {
            writer.writeName("sort");
            encodeAsTheDriver(writer, toBson(write.sort()));
        }
        writer.writeEndDocument();
    }

    private void collationAndHint(BsonBinaryWriter writer, WriteRecord<T> write) {
        if (write.collation() != null) {
            writer.writeName("collation");
            BSON_CODEC.encode(writer, write.collation().asDocument(), CONTEXT);
        }
        writeHint(writer, write);
    }

    private void writeHint(BsonBinaryWriter writer, WriteRecord<T> write) {
        if (write.hint() != null) {
            writer.writeName("hint");
            encodeAsTheDriver(writer, toBson(write.hint()));
        } else if (write.hintString() != null) {
            writer.writeString("hint", write.hintString());
        }
    }

    /**
     * A document to insert, as the driver writes it: read through the collection's codec, then written with its
     * {@code _id} first. Codecs that do that themselves write straight into the command.
     */
    private void writeDocument(BsonBinaryWriter writer, T document) {
        if (codecPutsIdFirst) {
            codec.encode(writer, document, COLLECTIBLE);
        } else if (document instanceof BsonDocument bson) {
            @SuppressWarnings("unchecked")
            Codec<BsonDocument> own = (Codec<BsonDocument>) registry.get(bson.getClass());
            own.encode(writer, bson, COLLECTIBLE);
        } else {
            BSON_CODEC.encode(writer, BsonDocumentWrapper.asBsonDocument(document, registry), COLLECTIBLE);
        }
    }

    /**
     * A document whose object cannot hold the {@code _id} the guard assigned (a record with a null id): its fields as
     * the codec writes them, then {@code _id}, where the driver's {@code IdHoldingBsonWriter} writes the ObjectId it
     * generates (at the end of the top-level document); mongod moves it first when it stores the document.
     */
    private void writeWithAppendedId(BsonBinaryWriter writer, T document, BsonValue id) {
        BsonDocument fields = new BsonDocument();
        codec.encode(new BsonDocumentWriter(fields), document, COLLECTIBLE);
        if (!fields.containsKey("_id")) {
            fields.append("_id", id);
        }
        BSON_CODEC.encode(writer, fields, CONTEXT);
    }

    /**
     * Writes a document as the driver writes a statement's parts (driver-core {@code SplittablePayload}: the codec its
     * fixed {@code BsonValueCodecProvider} registry gives the document's class): a {@code BsonDocumentWrapper}, what
     * {@code toBsonDocument} makes of a {@code Document} or a POJO, through the wrapped object's own encoder, so without
     * first building the tree that walking it field by field would; a raw document piped; any other field by field.
     */
    private static void encodeAsTheDriver(BsonBinaryWriter writer, BsonDocument document) {
        if (document instanceof BsonDocumentWrapper<?> wrapper) {
            WRAPPER_CODEC.encode(writer, wrapper, CONTEXT);
        } else if (document instanceof RawBsonDocument raw) {
            RAW_CODEC.encode(writer, raw, CONTEXT);
        } else {
            BSON_CODEC.encode(writer, document, CONTEXT);
        }
    }

    private BsonDocument toBson(Bson bson) {
        return bson instanceof BsonDocument document ? document : bson.toBsonDocument(documentClass, registry);
    }
}
