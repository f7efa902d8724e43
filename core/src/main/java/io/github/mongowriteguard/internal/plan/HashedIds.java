package io.github.mongowriteguard.internal.plan;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import org.bson.BsonValue;

/**
 * The server's hash of an {@code _id} for a {@code {_id: "hashed"}} shard key, for the {@code _id} types people use
 * (numbers without Decimal128, strings, ObjectIds): what mongos compares with the chunks' bounds to target a write
 * ({@code src/mongo/s/shard_key_pattern.cpp}, {@code extractShardKeyFromDoc}: {@code BSONElementHasher::hash64} with
 * the default seed 0). The algorithm ({@code src/mongo/db/hasher.cpp}): MD5 over the little-endian int32 seed, the
 * value's little-endian int32 canonical type (the sort-order class of {@code canonicalizeBSONType}: 10 for every
 * number, 15 for a string, 35 for an ObjectId) and its bytes (a number as the little-endian int64 it converts to, a
 * string as BSON writes it: int32 length with the NUL, UTF-8 bytes, NUL; an ObjectId's 12 bytes); the hash is the
 * digest's first 8 bytes read little-endian. Other types are not hashed here: their placement stays unknown.
 */
final class HashedIds {

    private static final int CANONICAL_NUMBER = 10;
    private static final int CANONICAL_STRING = 15;
    private static final int CANONICAL_OBJECT_ID = 35;
    private static final double TWO_TO_THE_63 = 0x1p63;

    private HashedIds() {}

    /** Whether {@link #hash} knows the type of {@code id}. */
    static boolean canHash(BsonValue id) {
        return id.isInt32() || id.isInt64() || id.isDouble() || id.isString() || id.isObjectId();
    }

    /** The server's {@code hash64(id, 0)}; only for ids {@link #canHash} accepts. */
    static long hash(BsonValue id) {
        MessageDigest md5 = md5();
        int32(md5, 0); // BSONElementHasher::DEFAULT_HASH_SEED
        if (id.isString()) {
            int32(md5, CANONICAL_STRING);
            byte[] utf8 = id.asString().getValue().getBytes(StandardCharsets.UTF_8);
            int32(md5, utf8.length + 1);
            md5.update(utf8);
            md5.update((byte) 0);
        } else if (id.isObjectId()) {
            int32(md5, CANONICAL_OBJECT_ID);
            md5.update(id.asObjectId().getValue().toByteArray());
        } else {
            int32(md5, CANONICAL_NUMBER);
            int64(md5, asInt64(id));
        }
        byte[] digest = md5.digest();
        long hash = 0;
        for (int i = 7; i >= 0; i--) {
            hash = (hash << 8) | (digest[i] & 0xFF);
        }
        return hash;
    }

    /** A number as the hash sees it: the server's safe conversion to int64 (truncation, saturation, NaN as 0). */
    private static long asInt64(BsonValue number) {
        if (number.isInt32()) {
            return number.asInt32().getValue();
        }
        if (number.isInt64()) {
            return number.asInt64().getValue();
        }
        double value = number.asDouble().getValue();
        // 2^63 is the one double that Java saturates and the server wraps to the lowest long
        return value == TWO_TO_THE_63 ? Long.MIN_VALUE : (long) value;
    }

    private static void int32(MessageDigest md5, int value) {
        for (int i = 0; i < 4; i++) {
            md5.update((byte) (value >>> (8 * i)));
        }
    }

    private static void int64(MessageDigest md5, long value) {
        for (int i = 0; i < 8; i++) {
            md5.update((byte) (value >>> (8 * i)));
        }
    }

    private static MessageDigest md5() {
        try {
            return MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has MD5", e);
        }
    }
}
