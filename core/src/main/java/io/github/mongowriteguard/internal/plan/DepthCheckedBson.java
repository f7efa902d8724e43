package io.github.mongowriteguard.internal.plan;

import io.github.mongowriteguard.bulk.WriteKind;
import org.bson.BsonDocument;
import org.bson.BsonSerializationException;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;

/**
 * A caller's filter, update, hint, sort, pipeline stage or array filter turned into BSON as the driver turns it
 * ({@link Bson#toBsonDocument} with the collection's document class and codecs), refused with the driver's own
 * exception ({@link NestingDepth#tooDeep}) when it nests deeper than the driver writes at its place in the statement.
 */
final class DepthCheckedBson {

    private final Class<?> documentClass;
    private final CodecRegistry codecRegistry;

    DepthCheckedBson(Class<?> documentClass, CodecRegistry codecRegistry) {
        this.documentClass = documentClass;
        this.codecRegistry = codecRegistry;
    }

    /**
     * {@code part} as BSON, refused with the driver's exception when it nests deeper than {@code limit} levels (the
     * driver's limit at its place in the command): counted without recursion, before anything recurses into it.
     */
    BsonDocument checkDepth(int index, WriteKind kind, String part, Bson value, int limit) {
        if (NestingDepth.exceeds(value, limit)) {
            throw NestingDepth.tooDeep(index, kind.modelName(), part, limit);
        }
        BsonDocument encoded;
        try {
            encoded = value instanceof BsonDocument document
                    ? document
                    : value.toBsonDocument(documentClass, codecRegistry);
        } catch (BsonSerializationException e) {
            if (NestingDepth.isDepthError(e)) {
                throw NestingDepth.tooDeep(index, kind.modelName(), part, limit);
            }
            throw e;
        }
        if (encoded != value && NestingDepth.exceeds(encoded, limit)) {
            throw NestingDepth.tooDeep(index, kind.modelName(), part, limit);
        }
        return encoded;
    }

    /** {@link #checkDepth} where the BSON is not needed: a {@code Document} or {@code BsonDocument} is only walked. */
    void checkDepthOnly(int index, WriteKind kind, String part, Bson value, int limit) {
        if (!(value instanceof java.util.Map)) {
            checkDepth(index, kind, part, value, limit);
        } else if (NestingDepth.exceeds(value, limit)) {
            throw NestingDepth.tooDeep(index, kind.modelName(), part, limit);
        }
    }
}
