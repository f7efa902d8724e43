package io.github.mongowriteguard.testkit.sharding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;
import java.util.UUID;
import java.util.stream.LongStream;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDbPointer;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonJavaScript;
import org.bson.BsonJavaScriptWithScope;
import org.bson.BsonMaxKey;
import org.bson.BsonMinKey;
import org.bson.BsonNull;
import org.bson.BsonObjectId;
import org.bson.BsonRegularExpression;
import org.bson.BsonString;
import org.bson.BsonSymbol;
import org.bson.BsonTimestamp;
import org.bson.BsonUndefined;
import org.bson.BsonValue;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Published vectors first, each with its source next to it; then properties that follow from the server
 * source where nobody has published a vector.
 *
 * <p>Sources, abbreviated below:
 * <ul>
 *   <li>[hasher_test] the server's unit test, mongodb/mongo {@code src/mongo/db/hasher_test.cpp}
 *       (read at commit 0f422b4c66ed721c33e764b4567b70f08c58e811): every value is
 *       {@code hash64(BSON("check" << value).firstElement(), 0)}; the file calls its values "test vectors
 *       for hashed indexes", "determined experimentally");</li>
 *   <li>[hasher_test 3.4] the same file as of the 3.4 server, mirrored in SunguckLee/Real-MongoDB
 *       {@code src/mongo/db/hasher_test.cpp}: the only copy found with the Timestamp vectors of today's
 *       canonical types (the old mongodb/mongo copy still had Timestamp hashing like Date);</li>
 *   <li>[hash.js] the server's jstest mongodb/mongo {@code jstests/core/hash.js} (read at commit
 *       0893121fb024daecd832ed4ca0d51bf0c6b20c4c), which runs
 *       {@code {_hashBSONElement: key, seed: 1}}, so these use seed 1;</li>
 *   <li>[docs] https://www.mongodb.com/docs/manual/reference/operator/aggregation/toHashedIndexKey/ .</li>
 * </ul>
 */
class ShardKeyHasherTest {

    // [hash.js] hashOfMaxNumberLong, hashOfLowestNumberLong, hashOfZeroNumberLong (seed 1).
    private static final long HASH_OF_MAX_NUMBER_LONG = 1136124329541638701L;
    private static final long HASH_OF_LOWEST_NUMBER_LONG = 5744114172487291558L;
    private static final long HASH_OF_ZERO_NUMBER_LONG = 5574369198691456941L;

    private static final BsonValue OID_1_TO_12 = new BsonObjectId(new ObjectId("010203040506070809101112"));

    private static long hashWithSeed1(BsonValue value) {
        return ShardKeyHasher.hash64(value, 1);
    }

    // ---- Published vectors, seed 0 ----

    @Test
    void int32Int64AndDoubleOf42() {
        // [hasher_test] HashIntOrLongOrDouble: 42, 42.123 and (long long) 42.
        assertThat(ShardKeyHasher.hash(new BsonInt32(42))).isEqualTo(-944302157085130861L);
        assertThat(ShardKeyHasher.hash(new BsonDouble(42.123))).isEqualTo(-944302157085130861L);
        assertThat(ShardKeyHasher.hash(new BsonInt64(42))).isEqualTo(-944302157085130861L);
    }

    @Test
    void zeroAndNaN() {
        // [hasher_test] HashIntOrLongOrDouble: 0, 0.456, (long long) 0; "NAN is treated as zero".
        assertThat(ShardKeyHasher.hash(new BsonInt32(0))).isEqualTo(4854801880128277513L);
        assertThat(ShardKeyHasher.hash(new BsonDouble(0.456))).isEqualTo(4854801880128277513L);
        assertThat(ShardKeyHasher.hash(new BsonInt64(0))).isEqualTo(4854801880128277513L);
        assertThat(ShardKeyHasher.hash(new BsonDouble(Double.NaN))).isEqualTo(4854801880128277513L);
    }

    @Test
    void oneAndMinusOneTruncateTowardZero() {
        // [hasher_test] HashIntOrLongOrDouble: 1, 1.987, (long long) 1 and -1, -1.789, (long long) -1.
        assertThat(ShardKeyHasher.hash(new BsonInt32(1))).isEqualTo(5902408780260971510L);
        assertThat(ShardKeyHasher.hash(new BsonDouble(1.987))).isEqualTo(5902408780260971510L);
        assertThat(ShardKeyHasher.hash(new BsonInt64(1))).isEqualTo(5902408780260971510L);
        assertThat(ShardKeyHasher.hash(new BsonInt32(-1))).isEqualTo(1140205862565771219L);
        assertThat(ShardKeyHasher.hash(new BsonDouble(-1.789))).isEqualTo(1140205862565771219L);
        assertThat(ShardKeyHasher.hash(new BsonInt64(-1))).isEqualTo(1140205862565771219L);
    }

    @Test
    void int32Extremes() {
        // [hasher_test] HashIntOrLongOrDouble: numeric_limits<int>::min() and ::max() as int, double, long.
        for (BsonValue min : new BsonValue[] {
            new BsonInt32(Integer.MIN_VALUE), new BsonDouble(Integer.MIN_VALUE), new BsonInt64(Integer.MIN_VALUE)
        }) {
            assertThat(ShardKeyHasher.hash(min)).as("%s", min).isEqualTo(6165898260261354870L);
        }
        for (BsonValue max : new BsonValue[] {
            new BsonInt32(Integer.MAX_VALUE), new BsonDouble(Integer.MAX_VALUE), new BsonInt64(Integer.MAX_VALUE)
        }) {
            assertThat(ShardKeyHasher.hash(max)).as("%s", max).isEqualTo(1143184177162245883L);
        }
    }

    @Test
    void hugeDoublesClampToTheInt64Extremes() {
        // [hasher_test] HashIntOrLongOrDouble: numeric_limits<double>::max() hashes like
        // numeric_limits<long long>::max(), and -max() like numeric_limits<long long>::min().
        assertThat(ShardKeyHasher.hash(new BsonDouble(Double.MAX_VALUE))).isEqualTo(921523596458303250L);
        assertThat(ShardKeyHasher.hash(new BsonInt64(Long.MAX_VALUE))).isEqualTo(921523596458303250L);
        assertThat(ShardKeyHasher.hash(new BsonDouble(-Double.MAX_VALUE))).isEqualTo(4532067210535695462L);
        assertThat(ShardKeyHasher.hash(new BsonInt64(Long.MIN_VALUE))).isEqualTo(4532067210535695462L);
    }

    @Test
    void strings() {
        // [hasher_test] HashString: "abc" and BSONSymbol("abc"); "" and BSONSymbol("").
        assertThat(ShardKeyHasher.hash(new BsonString("abc"))).isEqualTo(8478485326885698097L);
        assertThat(ShardKeyHasher.hash(new BsonSymbol("abc"))).isEqualTo(8478485326885698097L);
        assertThat(ShardKeyHasher.hash(new BsonString(""))).isEqualTo(2049396243249673340L);
        assertThat(ShardKeyHasher.hash(new BsonSymbol(""))).isEqualTo(2049396243249673340L);
        // [docs] "Example output: [ { val: 'string to hash', hashedVal: Long("763543691661428748") } ]".
        assertThat(ShardKeyHasher.hash(new BsonString("string to hash"))).isEqualTo(763543691661428748L);
    }

    @Test
    void objectIds() {
        // [hasher_test] HashObjectId: OID("010203040506070809101112") and OID("000000000000000000000000").
        assertThat(ShardKeyHasher.hash(OID_1_TO_12)).isEqualTo(-5588663249627035708L);
        assertThat(ShardKeyHasher.hash(new BsonObjectId(new ObjectId("000000000000000000000000"))))
                .isEqualTo(-4293118519463489418L);
    }

    @Test
    void embeddedDocuments() {
        // [hasher_test] HashObject: BSON("a" << "abc" << "b" << 123LL) and BSONObj().
        BsonDocument doc = new BsonDocument("a", new BsonString("abc")).append("b", new BsonInt64(123));
        assertThat(ShardKeyHasher.hash(doc)).isEqualTo(4771603801758380216L);
        assertThat(ShardKeyHasher.hash(new BsonDocument())).isEqualTo(7980500913326740417L);
    }

    @Test
    void booleans() {
        // [hasher_test] HashBoolean.
        assertThat(ShardKeyHasher.hash(BsonBoolean.TRUE)).isEqualTo(6405873908747105701L);
        assertThat(ShardKeyHasher.hash(BsonBoolean.FALSE)).isEqualTo(6289544573401934092L);
    }

    @Test
    void nullUndefinedMinKeyMaxKey() {
        // [hasher_test] HashUndefined, HashMinKey, HashMaxKey; [hasher_test 3.4] HashNull (added after the
        // mongodb/mongo copy that was read).
        assertThat(ShardKeyHasher.hash(BsonNull.VALUE)).isEqualTo(2338878944348059895L);
        assertThat(ShardKeyHasher.hash(new BsonUndefined())).isEqualTo(40158834000849533L);
        assertThat(ShardKeyHasher.hash(new BsonMinKey())).isEqualTo(7961148599568647290L);
        assertThat(ShardKeyHasher.hash(new BsonMaxKey())).isEqualTo(5504842513779440750L);
    }

    @Test
    void dates() {
        // [hasher_test] HashTimeStamp: Date_t(0x5566778811223344) and Date_t(0).
        assertThat(ShardKeyHasher.hash(new BsonDateTime(0x5566778811223344L))).isEqualTo(4476222765095560467L);
        assertThat(ShardKeyHasher.hash(new BsonDateTime(0))).isEqualTo(-1178696894582842035L);
    }

    @Test
    void timestampsHaveTheirOwnCanonicalType() {
        // [hasher_test 3.4] HashTimeStamp: Timestamp(0x55667788, 0x11223344) and appendTimestamp(.., 0).
        assertThat(ShardKeyHasher.hash(new BsonTimestamp(0x55667788, 0x11223344)))
                .isEqualTo(4873046866288452390L);
        assertThat(ShardKeyHasher.hash(new BsonTimestamp(0L))).isEqualTo(-7867208682377458672L);
    }

    @Test
    void binaryWithSubtypeAndUuid() {
        byte[] bytes = {0, 1, 2, 3, 4, 6};
        // [hasher_test] HashBinary: BinDataGeneral (0), bdtCustom (128), newUUID (4) over bytes 0..15.
        assertThat(ShardKeyHasher.hash(new BsonBinary((byte) 0, bytes))).isEqualTo(7252465090394235301L);
        assertThat(ShardKeyHasher.hash(new BsonBinary((byte) 0x80, bytes))).isEqualTo(5736670452907618262L);
        // The standard (subtype 4) encoding of this UUID is exactly the bytes 00 01 .. 0f.
        UUID uuid = UUID.fromString("00010203-0405-0607-0809-0a0b0c0d0e0f");
        assertThat(ShardKeyHasher.hash(new BsonBinary(uuid))).isEqualTo(6084661258071355978L);
    }

    @Test
    void regexDbPointerCodeAndCodeWithScope() {
        // [hasher_test] HashRegEx, HashDBRef, HashCode, HashCodeWScope.
        assertThat(ShardKeyHasher.hash(new BsonRegularExpression("mongodb"))).isEqualTo(-7275792090268217043L);
        assertThat(ShardKeyHasher.hash(new BsonRegularExpression(".*", "i"))).isEqualTo(7095855029187981886L);
        ObjectId oid = OID_1_TO_12.asObjectId().getValue();
        assertThat(ShardKeyHasher.hash(new BsonDbPointer("c", oid))).isEqualTo(940175826736461384L);
        assertThat(ShardKeyHasher.hash(new BsonDbPointer("db.c", oid))).isEqualTo(2426768198104018194L);
        String code = "func f() { return 1; }";
        assertThat(ShardKeyHasher.hash(new BsonJavaScript(code))).isEqualTo(6861638109178014270L);
        assertThat(ShardKeyHasher.hash(new BsonJavaScriptWithScope(code, new BsonDocument("c", BsonBoolean.TRUE))))
                .isEqualTo(501342939894575968L);
    }

    @Test
    void arraysAsTheRawServerFunctionHashesThem() {
        // [hasher_test] HashArray: BSON_ARRAY("bar" << "baz" << "qux") and BSONArray(). Only through the
        // raw hash64: hash() refuses arrays, as hashed indexes and shard keys do.
        BsonArray array = new BsonArray();
        array.add(new BsonString("bar"));
        array.add(new BsonString("baz"));
        array.add(new BsonString("qux"));
        assertThat(ShardKeyHasher.hash64(array, 0)).isEqualTo(-2938911267422831539L);
        assertThat(ShardKeyHasher.hash64(new BsonArray(), 0)).isEqualTo(8849948234993459283L);
    }

    @Test
    void nonZeroSeed() {
        // HashWithNonZeroSeed (seed 40513) of src/mongo/db/hasher_test.cpp as found in axelfast/mongo, a
        // renamed fork of the server source (the stored mongodb/mongo copy predates this test).
        assertThat(ShardKeyHasher.hash64(new BsonInt32(42), 40513)).isEqualTo(4302929669663179197L);
        BsonArray seeds = new BsonArray();
        seeds.add(new BsonString("sunflower"));
        seeds.add(new BsonString("sesame"));
        seeds.add(new BsonString("mustard"));
        assertThat(ShardKeyHasher.hash64(seeds, 40513)).isEqualTo(-9222615859251096151L);
    }

    // ---- Published vectors from [hash.js], all with seed 1: double edge cases (SERVER-37183) ----

    @Test
    void seed1String() {
        // [hash.js] {key: "hashthis", expected: NumberLong("6271151123721111923")}.
        assertThat(hashWithSeed1(new BsonString("hashthis"))).isEqualTo(6271151123721111923L);
    }

    @Test
    void seed1TwoToThe63HashesLikeLongMinValue() {
        // [hash.js] Math.pow(2, 63) -> hashOfLowestNumberLong: the preserved historical cast.
        assertThat(hashWithSeed1(new BsonDouble(0x1p63))).isEqualTo(HASH_OF_LOWEST_NUMBER_LONG);
    }

    @ParameterizedTest
    @ValueSource(doubles = {0x1p63 + 0x1p11, 0x1p500, Double.POSITIVE_INFINITY})
    void seed1LargerDoublesClampToLongMaxValue(double value) {
        // [hash.js] Math.pow(2, 63) + Math.pow(2, 11), Math.pow(2, 500), Infinity -> hashOfMaxNumberLong.
        assertThat(hashWithSeed1(new BsonDouble(value))).isEqualTo(HASH_OF_MAX_NUMBER_LONG);
    }

    @ParameterizedTest
    @ValueSource(doubles = {-0x1p63, -(0x1p63 + 0x1p11), Double.NEGATIVE_INFINITY})
    void seed1NegativeOverflowClampsToLongMinValue(double value) {
        // [hash.js] -Math.pow(2, 63), -(Math.pow(2, 63) + Math.pow(2, 11)), -Infinity
        // -> hashOfLowestNumberLong.
        assertThat(hashWithSeed1(new BsonDouble(value))).isEqualTo(HASH_OF_LOWEST_NUMBER_LONG);
    }

    @Test
    void seed1JustInsideTheLongRange() {
        // [hash.js] Math.pow(2, 63) - Math.pow(2, 10) and -(Math.pow(2, 63) - Math.pow(2, 10)).
        assertThat(hashWithSeed1(new BsonDouble(0x1p63 - 0x1p10))).isEqualTo(-3954856262017896439L);
        assertThat(hashWithSeed1(new BsonDouble(-(0x1p63 - 0x1p10)))).isEqualTo(-1762411739488908479L);
    }

    @Test
    void seed1ZeroAndNaN() {
        // [hash.js] 0, NumberLong("0"), NaN, -NaN -> hashOfZeroNumberLong.
        assertThat(hashWithSeed1(new BsonDouble(0))).isEqualTo(HASH_OF_ZERO_NUMBER_LONG);
        assertThat(hashWithSeed1(new BsonInt64(0))).isEqualTo(HASH_OF_ZERO_NUMBER_LONG);
        assertThat(hashWithSeed1(new BsonDouble(Double.NaN))).isEqualTo(HASH_OF_ZERO_NUMBER_LONG);
        assertThat(hashWithSeed1(new BsonDouble(-Double.NaN))).isEqualTo(HASH_OF_ZERO_NUMBER_LONG);
    }

    @Test
    void seed1Objects() {
        // [hash.js] {a: 1, b: 2} and {a: Math.pow(2, 63), b: NaN}; the shell sends JS numbers as doubles.
        assertThat(hashWithSeed1(new BsonDocument("a", new BsonDouble(1)).append("b", new BsonDouble(2))))
                .isEqualTo(-7076810813311352857L);
        assertThat(hashWithSeed1(new BsonDocument("a", new BsonDouble(0x1p63)).append("b", new BsonDouble(Double.NaN))))
                .isEqualTo(1223292051903137684L);
    }

    // ---- Consequences of the server source where no vector is published ----

    static LongStream integralValues() {
        Random random = new Random(20240601L);
        LongStream fixed = LongStream.of(
                0,
                1,
                -1,
                2,
                42,
                -42,
                1L << 31,
                -(1L << 31) - 1,
                1L << 52,
                -(1L << 53),
                Integer.MAX_VALUE,
                Integer.MIN_VALUE);
        // Only values a double represents exactly, so that all three types hold the same number.
        LongStream randoms = random.longs(200, -(1L << 53), 1L << 53);
        return LongStream.concat(fixed, randoms);
    }

    @ParameterizedTest
    @MethodSource("integralValues")
    void numberTypesOfTheSameIntegralValueHashAlike(long value) {
        long expected = ShardKeyHasher.hash(new BsonInt64(value));
        assertThat(ShardKeyHasher.hash(new BsonDouble(value))).isEqualTo(expected);
        assertThat(ShardKeyHasher.hash(new BsonDecimal128(new Decimal128(value))))
                .isEqualTo(expected);
        if (value == (int) value) {
            assertThat(ShardKeyHasher.hash(new BsonInt32((int) value))).isEqualTo(expected);
        }
    }

    @ParameterizedTest
    @MethodSource("integralValues")
    void doublesTruncateTowardZero(long value) {
        double fraction = value >= 0 ? 0.75 : -0.75;
        double withFraction = value + fraction;
        if ((long) withFraction == value) { // skip where the fraction is not representable
            assertThat(ShardKeyHasher.hash(new BsonDouble(withFraction)))
                    .isEqualTo(ShardKeyHasher.hash(new BsonInt64(value)));
        }
    }

    @Test
    void numbersInsideDocumentsAreSquashedToo() {
        // The same property as the server's RecursiveSquashingIntsAndDoubles test, which has no value.
        BsonDocument a = BsonDocument.parse("{x: {a: 3, b: [3.1, {c: 3}]}}");
        BsonDocument b = BsonDocument.parse("{x: {a: 3.1, b: [3, {c: {$numberLong: '3'}}]}}");
        assertThat(ShardKeyHasher.hash(a)).isEqualTo(ShardKeyHasher.hash(b));
    }

    @Test
    void compoundIdDocumentIsHashedWhole() {
        // A collection sharded on {_id: "hashed"} whose _id is {productId, storeId}: the chunk is chosen
        // by the hash of the whole embedded document; its numbers are squashed like any others.
        BsonDocument doc = BsonDocument.parse("{_id: {productId: 7, storeId: 3}, qty: 25}");
        BsonDocument sameIdOtherTypes = BsonDocument.parse("{_id: {productId: {$numberLong: '7'}, storeId: 3.0}}");
        assertThat(ShardKeyHasher.hash(doc.get("_id"))).isEqualTo(ShardKeyHasher.hash(sameIdOtherTypes.get("_id")));

        // Field names and field order take part in the hash.
        BsonDocument swapped = BsonDocument.parse("{storeId: 3, productId: 7}");
        BsonDocument renamed = BsonDocument.parse("{productId: 7, shopId: 3}");
        assertThat(ShardKeyHasher.hash(doc.get("_id")))
                .isNotEqualTo(ShardKeyHasher.hash(swapped))
                .isNotEqualTo(ShardKeyHasher.hash(renamed));
    }

    @Test
    void decimalRoundsHalfToEvenUnlikeDouble() {
        // Decimal128::toLong() defaults to round-half-even; doubles truncate. No published vector.
        assertThat(decimalHash("2.5")).isEqualTo(ShardKeyHasher.hash(new BsonInt64(2)));
        assertThat(decimalHash("3.5")).isEqualTo(ShardKeyHasher.hash(new BsonInt64(4)));
        assertThat(decimalHash("-2.5")).isEqualTo(ShardKeyHasher.hash(new BsonInt64(-2)));
        assertThat(decimalHash("1.2")).isEqualTo(ShardKeyHasher.hash(new BsonInt64(1)));
        assertThat(decimalHash("1.7")).isEqualTo(ShardKeyHasher.hash(new BsonInt64(2)));
        assertThat(ShardKeyHasher.hash(new BsonDouble(3.5))).isEqualTo(ShardKeyHasher.hash(new BsonInt64(3)));
    }

    @Test
    void decimalSpecialValues() {
        long zero = ShardKeyHasher.hash(new BsonInt64(0));
        assertThat(decimalHash("NaN")).isEqualTo(zero);
        assertThat(decimalHash("-0")).isEqualTo(zero);
        assertThat(decimalHash("-0E+3")).isEqualTo(zero);
        long max = ShardKeyHasher.hash(new BsonInt64(Long.MAX_VALUE));
        long min = ShardKeyHasher.hash(new BsonInt64(Long.MIN_VALUE));
        assertThat(decimalHash("Infinity")).isEqualTo(max);
        assertThat(decimalHash("1E+30")).isEqualTo(max);
        assertThat(decimalHash("9223372036854775807.5")).isEqualTo(max);
        assertThat(decimalHash("-Infinity")).isEqualTo(min);
        assertThat(decimalHash("-9223372036854775808.5")).isEqualTo(min);
        // Unlike the double 2^63, the decimal 2^63 just clamps to the maximum.
        assertThat(decimalHash("9223372036854775808")).isEqualTo(max);
    }

    @Test
    void topLevelArraysAreRejectedLikeTheServerDoes() {
        BsonArray array = new BsonArray();
        array.add(new BsonInt32(1));
        assertThatThrownBy(() -> ShardKeyHasher.hash(array))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("16766");
    }

    @Test
    void arraysNestedInDocumentsAreHashed() {
        // Error 16766 concerns the value at the indexed path only; an array inside it is hashed.
        assertThat(ShardKeyHasher.hash(BsonDocument.parse("{a: [1, 2]}")))
                .isNotEqualTo(ShardKeyHasher.hash(BsonDocument.parse("{a: {'0': 1, '1': 2}}")));
    }

    @Test
    void nullIsRejected() {
        assertThatThrownBy(() -> ShardKeyHasher.hash(null)).isInstanceOf(NullPointerException.class);
    }

    private long decimalHash(String decimal) {
        return ShardKeyHasher.hash(new BsonDecimal128(Decimal128.parse(decimal)));
    }
}
