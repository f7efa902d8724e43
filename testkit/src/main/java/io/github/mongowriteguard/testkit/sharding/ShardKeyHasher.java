package io.github.mongowriteguard.testkit.sharding;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Map;
import java.util.Objects;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBinarySubType;
import org.bson.BsonDocument;
import org.bson.BsonJavaScriptWithScope;
import org.bson.BsonRegularExpression;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.types.Decimal128;

/**
 * MongoDB's hashed shard-key function, computed the way the server computes it, so that an emulated
 * sharded cluster puts a document on the same chunk (and therefore the same shard) as a real cluster.
 *
 * <p>{@link #hash(BsonValue)} returns what the server's {@code BSONElementHasher::hash64(element, 0)}
 * returns for that value: the key stored in a {@code {field: "hashed"}} index, the value that
 * {@code convertShardKeyToHashed(value)} and {@code {$toHashedIndexKey: value}} print, and the value
 * compared against chunk bounds of a hashed shard key. The semantics are those of current servers (read
 * from the 8.x-era {@code hasher.cpp} and {@code bsonelement.h}); the server keeps them stable on purpose,
 * because changing them would move documents already stored in hashed indexes and chunks. (Old 2.x
 * servers differed only in giving Timestamp the Date canonical type and in having no Decimal128.)
 *
 * <p>The algorithm (server file {@code src/mongo/db/hasher.cpp}): MD5 over the little-endian int32 seed,
 * then, for the value, its little-endian int32 <em>canonical type</em> (the sort-order class, so that all
 * four numeric types share one class, as do string and symbol) followed by its value bytes. Numbers are
 * first squashed to an int64 (see {@link #hash(BsonValue)}). Documents and arrays are hashed element by
 * element, each element contributing canonical type, field name with its NUL, and value, and they end
 * with an end-of-object element (four zero bytes). The result is the first 8 digest bytes read as a
 * little-endian long.
 *
 * <p>Usage, placing a document of a collection sharded on {@code {_id: "hashed"}}:
 *
 * <pre>{@code
 * NavigableMap<Long, String> shardByChunkMin = ...;   // chunk lower bound (inclusive) -> shard name
 * BsonDocument doc = BsonDocument.parse("{_id: {productId: 7, storeId: 3}, qty: 25}");
 * long key = ShardKeyHasher.hash(doc.get("_id"));      // the embedded _id document is hashed whole
 * String shard = shardByChunkMin.floorEntry(key).getValue();
 * }</pre>
 *
 * <p>For a compound shard key with one hashed field, e.g. {@code {region: 1, customerId: "hashed"}}, only
 * the hashed field's value goes through this function; the other fields are compared as they are. The
 * server has no "hash the whole shard-key document" operation, so neither does this class.
 */
public final class ShardKeyHasher {

    /** {@code BSONElementHasher::DEFAULT_HASH_SEED}; hashed sharding always uses it. */
    private static final int DEFAULT_SEED = 0;

    // Canonical types, from canonicalizeBSONType() in the server's bsontypes.h. They are the sort-order
    // classes, not the BSON wire type bytes, which is what makes 1, NumberLong(1) and 1.0 hash alike.
    private static final int CANONICAL_MIN_KEY = -1;
    private static final int CANONICAL_UNDEFINED_OR_EOO = 0;
    private static final int CANONICAL_NULL = 5;
    private static final int CANONICAL_NUMBER = 10;
    private static final int CANONICAL_STRING = 15;
    private static final int CANONICAL_OBJECT = 20;
    private static final int CANONICAL_ARRAY = 25;
    private static final int CANONICAL_BINARY = 30;
    private static final int CANONICAL_OBJECT_ID = 35;
    private static final int CANONICAL_BOOLEAN = 40;
    private static final int CANONICAL_DATE = 45;
    private static final int CANONICAL_TIMESTAMP = 47;
    private static final int CANONICAL_REGEX = 50;
    private static final int CANONICAL_DB_POINTER = 55;
    private static final int CANONICAL_CODE = 60;
    private static final int CANONICAL_CODE_WITH_SCOPE = 65;
    private static final int CANONICAL_MAX_KEY = 127;

    /** 2^63: the one double whose int64 conversion the server pins to Long.MIN_VALUE (SERVER-37183). */
    private static final double TWO_TO_THE_63 = 0x1p63;

    private static final BigDecimal LONG_MAX = BigDecimal.valueOf(Long.MAX_VALUE);
    private static final BigDecimal LONG_MIN = BigDecimal.valueOf(Long.MIN_VALUE);

    private ShardKeyHasher() {}

    /**
     * The hashed shard-key value of {@code value}, as the server computes it with the default seed 0.
     *
     * <p>Numbers of every type are hashed by the int64 they convert to, so {@code NumberInt(1)},
     * {@code NumberLong(1)}, {@code 1.0}, {@code 1.9} and {@code NumberDecimal("1")} all hash alike:
     * <ul>
     *   <li>doubles truncate toward zero; NaN becomes 0; values at or beyond +/-2^63 and the infinities
     *       clamp to {@code Long.MAX_VALUE} / {@code Long.MIN_VALUE}, except exactly 2^63, which becomes
     *       {@code Long.MIN_VALUE} (what the old undefined C++ cast produced on x86; the server keeps it
     *       so that hashes already stored on disk stay valid);</li>
     *   <li>Decimal128 values round half to even (not truncate, unlike doubles: {@code NumberDecimal("2.5")}
     *       hashes like 2 and {@code "3.5"} like 4); NaN becomes 0 and values outside the int64 range,
     *       infinities included, clamp.</li>
     * </ul>
     *
     * <p>Embedded documents are hashed whole, field names and field order included, with numbers inside
     * them squashed the same way; arrays nested inside a document are hashed too.
     *
     * <p>A document without the shard-key field is placed by the hash of {@code null}, so pass
     * {@link org.bson.BsonNull#VALUE} for a missing field. (Hashed indexes also hash collation keys
     * instead of strings when the index has a non-simple collation; a shard-key index never does.)
     *
     * @param value the value of the hashed shard-key field
     * @return the 64-bit hash the server would store and route by
     * @throws IllegalArgumentException if {@code value} is an array: the server refuses arrays as hashed
     *                                  index or shard-key values (error 16766, "hashed indexes do not
     *                                  currently support array values"), so no real cluster holds one
     */
    public static long hash(BsonValue value) {
        Objects.requireNonNull(value, "value");
        if (value.isArray()) {
            throw new IllegalArgumentException(
                    "hashed shard keys cannot be arrays: the server rejects them with error 16766 "
                            + "(hashed indexes do not currently support array values)");
        }
        return hash64(value, DEFAULT_SEED);
    }

    /**
     * The server's {@code BSONElementHasher::hash64} exactly, with any seed and without the array check.
     * Package-private: sharding never uses another seed, but the server's own test vectors do.
     */
    static long hash64(BsonValue value, int seed) {
        Objects.requireNonNull(value, "value");
        Md5Input input = new Md5Input();
        input.int32(seed);
        hashElement(input, value, null);
        byte[] digest = input.digest();
        long result = 0;
        for (int i = 7; i >= 0; i--) {
            result = (result << 8) | (digest[i] & 0xFF);
        }
        return result;
    }

    /**
     * One element: canonical type, then (inside a document or array only) the field name with its NUL,
     * then the value. The top-level value has no field name, which is why the field name of the shard key
     * (or of {@code convertShardKeyToHashed}'s argument) never changes the hash.
     */
    private static void hashElement(Md5Input input, BsonValue value, String fieldName) {
        BsonType type = value.getBsonType();
        input.int32(canonicalType(type));
        if (fieldName != null) {
            input.cString(fieldName);
        }
        switch (type) {
            case DOUBLE, INT32, INT64, DECIMAL128 -> input.int64(toInt64ForHash(value));
            case STRING -> input.string(value.asString().getValue());
            case SYMBOL -> input.string(value.asSymbol().getSymbol());
            case JAVASCRIPT -> input.string(value.asJavaScript().getCode());
            case DOCUMENT -> hashFields(input, value.asDocument());
            case ARRAY -> hashItems(input, value.asArray());
            case JAVASCRIPT_WITH_SCOPE -> {
                BsonJavaScriptWithScope code = value.asJavaScriptWithScope();
                // The server adds the code bytes with their NUL but without the length prefix, then the
                // scope's elements as if it were an embedded document.
                input.cString(code.getCode());
                hashFields(input, code.getScope());
            }
            case BINARY -> hashBinary(input, value.asBinary());
            case OBJECT_ID -> input.bytes(value.asObjectId().getValue().toByteArray());
            case BOOLEAN -> input.int8(value.asBoolean().getValue() ? 1 : 0);
            case DATE_TIME -> input.int64(value.asDateTime().getValue());
            // Increment in the low 32 bits, seconds in the high 32: little-endian, that is the BSON layout.
            case TIMESTAMP -> input.int64(value.asTimestamp().getValue());
            case REGULAR_EXPRESSION -> {
                BsonRegularExpression regex = value.asRegularExpression();
                input.cString(regex.getPattern());
                input.cString(regex.getOptions());
            }
            case DB_POINTER -> {
                input.string(value.asDBPointer().getNamespace());
                input.bytes(value.asDBPointer().getId().toByteArray());
            }
            case NULL, UNDEFINED, MIN_KEY, MAX_KEY -> {
                // No value bytes: the canonical type alone identifies these.
            }
            default -> throw new UnsupportedOperationException("cannot hash BSON type " + type);
        }
    }

    private static void hashFields(Md5Input input, BsonDocument document) {
        for (Map.Entry<String, BsonValue> field : document.entrySet()) {
            hashElement(input, field.getValue(), field.getKey());
        }
        hashEndOfObject(input);
    }

    private static void hashItems(Md5Input input, BsonArray array) {
        // An array is hashed as the document {"0": ..., "1": ...} that it is in BSON; only its canonical
        // type tells the two apart.
        for (int i = 0; i < array.size(); i++) {
            hashElement(input, array.get(i), Integer.toString(i));
        }
        hashEndOfObject(input);
    }

    /** The terminating EOO element: canonical type 0, an empty field name of size 0, no value. */
    private static void hashEndOfObject(Md5Input input) {
        input.int32(CANONICAL_UNDEFINED_OR_EOO);
    }

    private static void hashBinary(Md5Input input, BsonBinary binary) {
        byte subtype = binary.getType();
        byte[] data = binary.getData();
        if (subtype == BsonBinarySubType.OLD_BINARY.getValue()) {
            // On the wire subtype 2 carries its own int32 length inside the payload; the Java driver strips
            // it when decoding, but the server hashes the raw value bytes, so put it back.
            input.int32(data.length + 4);
            input.int8(subtype);
            input.int32(data.length);
        } else {
            input.int32(data.length);
            input.int8(subtype);
        }
        input.bytes(data);
    }

    /** The server's {@code BSONElement::safeNumberLongForHash()}. */
    private static long toInt64ForHash(BsonValue number) {
        switch (number.getBsonType()) {
            case INT32:
                return number.asInt32().getValue();
            case INT64:
                return number.asInt64().getValue();
            case DOUBLE: {
                double d = number.asDouble().getValue();
                if (d == TWO_TO_THE_63) {
                    return Long.MIN_VALUE;
                }
                // Java's narrowing conversion matches the server's safeNumberLong() for everything else:
                // NaN -> 0, truncation toward zero, saturation at both ends of the long range.
                return (long) d;
            }
            case DECIMAL128:
                return decimalToInt64(number.asDecimal128().getValue());
            default:
                throw new IllegalStateException("not a number: " + number.getBsonType());
        }
    }

    private static long decimalToInt64(Decimal128 decimal) {
        if (decimal.isNaN()) {
            return 0;
        }
        if (decimal.isInfinite()) {
            return decimal.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        // Through the string form because Decimal128.bigDecimalValue() refuses negative zero.
        BigDecimal exact = new BigDecimal(decimal.toString());
        if (exact.compareTo(LONG_MAX) > 0) {
            return Long.MAX_VALUE;
        }
        if (exact.compareTo(LONG_MIN) < 0) {
            return Long.MIN_VALUE;
        }
        // Decimal128::toLong() defaults to kRoundTiesToEven (bid128_to_int64_rnint).
        return exact.setScale(0, RoundingMode.HALF_EVEN).longValueExact();
    }

    private static int canonicalType(BsonType type) {
        return switch (type) {
            case MIN_KEY -> CANONICAL_MIN_KEY;
            case MAX_KEY -> CANONICAL_MAX_KEY;
            case UNDEFINED, END_OF_DOCUMENT -> CANONICAL_UNDEFINED_OR_EOO;
            case NULL -> CANONICAL_NULL;
            case DOUBLE, INT32, INT64, DECIMAL128 -> CANONICAL_NUMBER;
            case STRING, SYMBOL -> CANONICAL_STRING;
            case DOCUMENT -> CANONICAL_OBJECT;
            case ARRAY -> CANONICAL_ARRAY;
            case BINARY -> CANONICAL_BINARY;
            case OBJECT_ID -> CANONICAL_OBJECT_ID;
            case BOOLEAN -> CANONICAL_BOOLEAN;
            case DATE_TIME -> CANONICAL_DATE;
            case TIMESTAMP -> CANONICAL_TIMESTAMP;
            case REGULAR_EXPRESSION -> CANONICAL_REGEX;
            case DB_POINTER -> CANONICAL_DB_POINTER;
            case JAVASCRIPT -> CANONICAL_CODE;
            case JAVASCRIPT_WITH_SCOPE -> CANONICAL_CODE_WITH_SCOPE;
        };
    }

    /** The MD5 input, written in the little-endian encodings the server feeds its digest. */
    private static final class Md5Input {
        private final MessageDigest md5;

        Md5Input() {
            try {
                md5 = MessageDigest.getInstance("MD5");
            } catch (NoSuchAlgorithmException e) {
                // Every Java SE platform must provide MD5.
                throw new IllegalStateException("MD5 is not available", e);
            }
        }

        void int8(int value) {
            md5.update((byte) value);
        }

        void int32(int value) {
            for (int i = 0; i < 4; i++) {
                md5.update((byte) (value >>> (8 * i)));
            }
        }

        void int64(long value) {
            for (int i = 0; i < 8; i++) {
                md5.update((byte) (value >>> (8 * i)));
            }
        }

        void bytes(byte[] value) {
            md5.update(value);
        }

        /** A BSON cstring: UTF-8 bytes and a NUL. */
        void cString(String value) {
            md5.update(value.getBytes(StandardCharsets.UTF_8));
            md5.update((byte) 0);
        }

        /** A BSON string: int32 byte length including the NUL, UTF-8 bytes, NUL. */
        void string(String value) {
            byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
            int32(utf8.length + 1);
            md5.update(utf8);
            md5.update((byte) 0);
        }

        byte[] digest() {
            return md5.digest();
        }
    }
}
