package io.github.mongowriteguard.internal.plan;

import com.mongodb.MongoClientSettings;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.codecs.BinaryCodec;
import org.bson.codecs.BooleanCodec;
import org.bson.codecs.DateCodec;
import org.bson.codecs.Decimal128Codec;
import org.bson.codecs.DocumentCodec;
import org.bson.codecs.DoubleCodec;
import org.bson.codecs.IntegerCodec;
import org.bson.codecs.LongCodec;
import org.bson.codecs.ObjectIdCodec;
import org.bson.codecs.StringCodec;
import org.bson.codecs.configuration.CodecConfigurationException;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.types.Binary;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;
import org.jspecify.annotations.Nullable;

/**
 * The one definition of a plain value: a value whose BSON the guard knows without asking a codec, so that the planner
 * converts and measures it ({@link DocumentShortcuts}) and the encoder writes it by hand, each giving the bytes the
 * driver's codecs give.
 *
 * <p>As Java values: {@code null}, {@code Integer}, {@code Long}, {@code Double}, {@code Boolean}, {@code String},
 * {@code ObjectId}, {@code Decimal128}, a {@code Date}, a {@code Binary} and a {@code Document} (those three of exactly
 * that class: a subclass may have a codec of its own), and a list of the JDK's own classes; a document's or a list's
 * values are plain in turn, which whoever walks it checks. Only under a registry that encodes each of these classes with
 * the driver's standard codec ({@link #standardCodecs}). As BSON values: the driver's own value class for each of
 * those BSON types ({@code BsonInt32}, ..., {@code BsonDocument}, {@code BsonArray}), which the driver writes with its
 * fixed codecs whatever the collection's registry. (A tree the driver encodes itself needs no plain values: its size
 * is known for every BSON type but two, {@code BsonTreeSize} in the encoder.)
 *
 * <p>Public for the guard's command encoder only: not an API.
 */
public final class PlainValue {
    /** The driver's own codec class for lists (not public API, so compared by class). */
    private static final Class<?> DEFAULT_LIST_CODEC =
            MongoClientSettings.getDefaultCodecRegistry().get(ArrayList.class).getClass();

    private PlainValue() {}

    /**
     * The BSON type the driver's standard codecs write for {@code value}, or null when it is not a plain value.
     *
     * @param value a Java value, null included
     * @return its BSON type ({@link BsonType#NULL} for null), or null
     */
    public static @Nullable BsonType of(@Nullable Object value) {
        if (value == null) {
            return BsonType.NULL;
        }
        Class<?> type = value.getClass();
        if (type == Integer.class) {
            return BsonType.INT32;
        } else if (type == String.class) {
            return BsonType.STRING;
        } else if (type == Long.class) {
            return BsonType.INT64;
        } else if (type == ObjectId.class) {
            return BsonType.OBJECT_ID;
        } else if (type == Double.class) {
            return BsonType.DOUBLE;
        } else if (type == Boolean.class) {
            return BsonType.BOOLEAN;
        } else if (type == Decimal128.class) {
            return BsonType.DECIMAL128;
        } else if (type == Date.class) {
            return BsonType.DATE_TIME;
        } else if (type == Binary.class) {
            return BsonType.BINARY;
        } else if (type == Document.class) {
            return BsonType.DOCUMENT;
        } else if (value instanceof List && type.getClassLoader() == null) {
            // A list class of the application's may have a codec of its own (the driver looks a value's codec up by
            // its class); the JDK's lists (ArrayList, List.of, ...) are written as an array by the driver's codec.
            return BsonType.ARRAY;
        }
        return null;
    }

    /**
     * The BSON type of {@code value} when it is a plain BSON value (the driver's own class for one of the plain types),
     * else null.
     *
     * @param value a BSON value
     * @return its BSON type, or null
     */
    public static @Nullable BsonType ofBson(BsonValue value) {
        Class<?> type = value.getClass();
        if (type == BsonInt32.class) {
            return BsonType.INT32;
        } else if (type == BsonString.class) {
            return BsonType.STRING;
        } else if (type == BsonInt64.class) {
            return BsonType.INT64;
        } else if (type == BsonObjectId.class) {
            return BsonType.OBJECT_ID;
        } else if (type == BsonDouble.class) {
            return BsonType.DOUBLE;
        } else if (type == BsonBoolean.class) {
            return BsonType.BOOLEAN;
        } else if (type == BsonDecimal128.class) {
            return BsonType.DECIMAL128;
        } else if (type == BsonDateTime.class) {
            return BsonType.DATE_TIME;
        } else if (type == BsonBinary.class) {
            return BsonType.BINARY;
        } else if (type == BsonNull.class) {
            return BsonType.NULL;
        } else if (type == BsonDocument.class) {
            return BsonType.DOCUMENT;
        } else if (type == BsonArray.class) {
            return BsonType.ARRAY;
        }
        return null;
    }

    /**
     * Whether {@code registry} encodes every plain Java class with the driver's standard codec (the codec's own class,
     * not a subclass: an application's codec that extends one writes as it likes), strings as BSON strings.
     *
     * @param registry a collection's codec registry
     * @return true when the plain values of {@link #of} are written as the driver writes them under this registry
     */
    public static boolean standardCodecs(CodecRegistry registry) {
        try {
            return registry.get(Document.class).getClass() == DocumentCodec.class
                    && registry.get(Integer.class).getClass() == IntegerCodec.class
                    && registry.get(Long.class).getClass() == LongCodec.class
                    && registry.get(Double.class).getClass() == DoubleCodec.class
                    && registry.get(Boolean.class).getClass() == BooleanCodec.class
                    && registry.get(ObjectId.class).getClass() == ObjectIdCodec.class
                    && registry.get(Decimal128.class).getClass() == Decimal128Codec.class
                    && registry.get(Date.class).getClass() == DateCodec.class
                    && registry.get(Binary.class).getClass() == BinaryCodec.class
                    && registry.get(String.class).getClass() == StringCodec.class
                    && ((StringCodec) registry.get(String.class)).getRepresentation() == BsonType.STRING
                    && registry.get(ArrayList.class).getClass() == DEFAULT_LIST_CODEC;
        } catch (CodecConfigurationException missingCodec) {
            return false;
        }
    }
}
