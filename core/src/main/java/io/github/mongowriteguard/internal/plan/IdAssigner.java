package io.github.mongowriteguard.internal.plan;

import java.util.Objects;
import org.bson.BsonDocument;
import org.bson.BsonDocumentWriter;
import org.bson.BsonObjectId;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.codecs.Codec;
import org.bson.codecs.CollectibleCodec;
import org.bson.codecs.DocumentCodec;
import org.bson.codecs.EncoderContext;
import org.bson.codecs.ObjectIdCodec;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.types.ObjectId;
import org.jspecify.annotations.Nullable;

/**
 * Gives a document to insert an {@code _id} before the bulk is planned.
 *
 * <p>Why before: an insert whose {@code _id} the driver generates at send time gets a new {@code _id} on every
 * application retry, so each retry adds one more document. With the {@code _id} in the document, a retry of the
 * same document is a duplicate-key error instead of a second copy, and the planner can key the insert like any
 * other write.
 *
 * <p>The default, {@link #fromCodec(Class, CodecRegistry)}, asks the collection's codec, as the driver does on insert:
 * an {@link ObjectId} for {@code Document} and {@code BsonDocument}, the id generator of a POJO codec.
 * <pre>{@code
 * IdAssigner<Order> ids = order -> {             // a custom one: ids from the business key
 *     order.setId(order.getOrderNumber());
 *     return new BsonString(order.getOrderNumber());
 * };
 * BulkPlanner<Order> planner = BulkPlanner.of(Order.class, registry, ids);
 * }</pre>
 *
 * <p>Package-private: the planner asks {@link #fromCodec}; its tests give ids of their own.
 *
 * @param <T> the collection's document class
 */
@FunctionalInterface
interface IdAssigner<T> {

    /**
     * Puts an {@code _id} into {@code document}, which has none, and returns it. The planner calls this only for
     * documents without an {@code _id}, after every check that does not need the new ids has passed. An exception
     * thrown here propagates out of {@link BulkPlanner#plan}; documents already given an id keep it.
     *
     * @param document the caller's document to insert, without {@code _id}; changed in place
     * @return the {@code _id} now in the document, or {@code null} to leave the document without one (the driver or
     *         the server will then generate it when the write is sent)
     */
    @Nullable
    BsonValue assignId(T document);

    /**
     * For a document {@link #assignId} left without {@code _id} because the object cannot hold one (a record, an
     * immutable class, a codec that writes no {@code _id}): the {@code _id} the guard sends after the document's own
     * fields, as the driver's {@code IdHoldingBsonWriter} adds one (driver-core
     * {@code com.mongodb.internal.connection.IdHoldingBsonWriter}: a new ObjectId written at the end of a top-level
     * document that has none), so that every send of the write carries the same {@code _id} and the outcome reports
     * it as the driver's {@code insertedId}.
     *
     * @param document the caller's document, without {@code _id}, unchanged
     * @return the {@code _id} to send with it, or {@code null} to send it without one (the default)
     */
    @Nullable
    default BsonValue idToAppend(T document) {
        return null;
    }

    /**
     * Assigns ids the way the driver does on insert, through the collection's codec:
     * <ul>
     *   <li>a {@link CollectibleCodec} ({@code Document}, {@code BsonDocument}):
     *       {@link CollectibleCodec#generateIdIfAbsentFromDocument};</li>
     *   <li>any other codec (the driver's POJO codec is one): the codec is asked to encode the document as a document to
     *       insert, which is when a POJO codec puts a generated id into the object's id property.</li>
     * </ul>
     * When the document cannot keep the id (a record, an immutable type, a codec that generates none),
     * {@link #idToAppend} gives a new ObjectId that the guard sends after the document's fields, where the driver's
     * {@code IdHoldingBsonWriter} puts the one it generates.
     *
     * @param <T>           the document class
     * @param documentClass the class of the bulk's documents
     * @param codecRegistry the registry holding the codec of {@code documentClass}
     * @return the assigner
     * @throws org.bson.codecs.configuration.CodecConfigurationException if the registry has no codec for the class
     */
    static <T> IdAssigner<T> fromCodec(Class<T> documentClass, CodecRegistry codecRegistry) {
        Objects.requireNonNull(documentClass, "documentClass");
        Objects.requireNonNull(codecRegistry, "codecRegistry");
        Codec<T> codec = codecRegistry.get(documentClass);
        if (!(codec instanceof CollectibleCodec)) {
            return new IdAssigner<T>() {
                @Override
                public @Nullable BsonValue assignId(T document) {
                    BsonValue first = idWrittenByCodec(codec, document);
                    // Encoding twice tells whether the id stayed in the object or was generated afresh each time.
                    return first != null && first.equals(idWrittenByCodec(codec, document)) ? first : null;
                }

                @Override
                public @Nullable BsonValue idToAppend(T document) {
                    // A codec that writes no _id even for a document to insert (a record with a null id): the driver
                    // adds a new ObjectId while encoding; the guard picks it now, once. A codec that writes a new _id
                    // on every encoding is left as it is.
                    return idWrittenByCodec(codec, document) == null ? new BsonObjectId() : null;
                }
            };
        }
        CollectibleCodec<T> collectible = (CollectibleCodec<T>) codec;
        boolean standardObjectIds =
                codec instanceof DocumentCodec && codecRegistry.get(ObjectId.class) instanceof ObjectIdCodec;
        return document -> {
            T withId = collectible.generateIdIfAbsentFromDocument(document);
            // The bulk sends the caller's instance: an id in a copy would not reach the server.
            if (withId != document || !collectible.documentHasId(document)) {
                return null;
            }
            if (standardObjectIds && document instanceof Document) {
                Object id = ((Document) document).get("_id");
                if (id instanceof ObjectId) {
                    return new BsonObjectId((ObjectId) id); // what getDocumentId gives, without encoding
                }
            }
            return collectible.getDocumentId(document);
        };
    }

    private static <T> @Nullable BsonValue idWrittenByCodec(Codec<T> codec, T document) {
        BsonDocument written = new BsonDocument();
        codec.encode(
                new BsonDocumentWriter(written),
                document,
                EncoderContext.builder().isEncodingCollectibleDocument(true).build());
        return written.get("_id");
    }

    /**
     * Leaves documents without {@code _id} as they are: the driver generates the id when the write is sent.
     *
     * @param <T> the document class
     * @return an assigner that assigns nothing
     */
    static <T> IdAssigner<T> none() {
        return document -> null;
    }
}
