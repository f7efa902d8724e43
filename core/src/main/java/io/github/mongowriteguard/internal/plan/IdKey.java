package io.github.mongowriteguard.internal.plan;

import java.math.BigDecimal;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.types.Decimal128;
import org.jspecify.annotations.Nullable;

/**
 * An {@code _id} value as the server's unique {@code _id} index compares it: two writes share a key exactly when
 * they can touch the same document.
 *
 * <ul>
 *   <li>Numbers compare by value across types: {@code 1}, {@code 1L}, {@code 1.0} and {@code Decimal128("1.00")} are
 *       one key, as they are one index entry; {@code -0.0} equals {@code 0}; all NaNs are one key.</li>
 *   <li>Embedded documents compare field by field <em>in order</em> ({@code {a:1, b:2}} and {@code {b:2, a:1}} are two
 *       different {@code _id}s), which {@link BsonDocument#equals} does not do.</li>
 *   <li>Strings and symbols compare by their text; every other type by its BSON value.</li>
 * </ul>
 * Strings compare by binary value (the simple collation): the planner treats writes with an explicit collation as
 * unkeyed.
 *
 * <p>The planner numbers keys with {@link #hash} and {@link #same} directly ({@link KeyTable}), so that a bulk of
 * 100,000 writes does not allocate 100,000 key objects; an {@code IdKey} is the same comparison as a value.
 */
final class IdKey {

    /** Canonical numbers that are not finite: one marker each. */
    private enum NonFinite {
        NAN,
        POSITIVE_INFINITY,
        NEGATIVE_INFINITY
    }

    private static final double TWO_POW_63 = 9.223372036854775808E18;
    private static final BigDecimal LONG_MIN = BigDecimal.valueOf(Long.MIN_VALUE);
    private static final BigDecimal LONG_MAX = BigDecimal.valueOf(Long.MAX_VALUE);

    /** The _id value; null for a fresh key. */
    @Nullable
    private final BsonValue id;

    private final int hash;

    private IdKey(@Nullable BsonValue id, int hash) {
        this.id = id;
        this.hash = hash;
    }

    static IdKey of(BsonValue id) {
        return new IdKey(id, hash(id));
    }

    /**
     * A key equal to no other: for an insert left without {@code _id}, which gets a fresh one when sent, so no other
     * write in the bulk can name its document.
     */
    static IdKey fresh() {
        return new IdKey(null, System.identityHashCode(new Object()));
    }

    // hash and same walk the value as the server compares it, without building a canonical copy: planning computes
    // one key per write, and copies cost more than the rest of the planning.

    /** The hash of {@code id} as the key of {@link #of}{@code (id)} has it: equal keys, equal hashes. */
    static int hash(BsonValue value) {
        switch (value.getBsonType()) {
            case INT32:
                return Long.hashCode(value.asInt32().getValue());
            case INT64:
                return Long.hashCode(value.asInt64().getValue());
            case DOUBLE:
            case DECIMAL128:
                return canonicalNumber(value).hashCode();
            case STRING:
                return value.asString().getValue().hashCode();
            case SYMBOL:
                return value.asSymbol().getSymbol().hashCode();
            case DOCUMENT: {
                int hash = 1;
                for (Map.Entry<String, BsonValue> field : value.asDocument().entrySet()) {
                    hash = 31 * (31 * hash + field.getKey().hashCode()) + hash(field.getValue());
                }
                return 31 * hash + 1;
            }
            case ARRAY: {
                int hash = 1;
                for (BsonValue element : value.asArray().getValues()) {
                    hash = 31 * hash + hash(element);
                }
                return 31 * hash;
            }
            default:
                return value.hashCode();
        }
    }

    /** Whether {@code a} and {@code b} are one key: {@code IdKey.of(a).equals(IdKey.of(b))}, without the two objects. */
    static boolean same(BsonValue a, BsonValue b) {
        return Ids.inOrder(a, b, IdKey::sameScalar);
    }

    /** Two values that are not both documents or both arrays. */
    private static boolean sameScalar(BsonValue a, BsonValue b) {
        BsonType type = a.getBsonType();
        if (isNumber(type)) {
            if (!isNumber(b.getBsonType())) {
                return false;
            }
            if (isInteger(type) && isInteger(b.getBsonType())) {
                return a.asNumber().longValue() == b.asNumber().longValue();
            }
            return canonicalNumber(a).equals(canonicalNumber(b));
        }
        if (type == BsonType.STRING || type == BsonType.SYMBOL) {
            return (b.isString() || b.isSymbol()) && text(a).equals(text(b));
        }
        return a.equals(b); // ObjectId, dates, binary, booleans, null, ...: the BSON value classes compare by value
    }

    private static boolean isNumber(BsonType type) {
        return type == BsonType.INT32
                || type == BsonType.INT64
                || type == BsonType.DOUBLE
                || type == BsonType.DECIMAL128;
    }

    private static boolean isInteger(BsonType type) {
        return type == BsonType.INT32 || type == BsonType.INT64;
    }

    private static String text(BsonValue value) {
        return value.isString() ? value.asString().getValue() : value.asSymbol().getSymbol();
    }

    private static Object canonicalNumber(BsonValue value) {
        switch (value.getBsonType()) {
            case INT32:
                return (long) value.asInt32().getValue();
            case INT64:
                return value.asInt64().getValue();
            case DOUBLE:
                return canonicalDouble(value.asDouble().getValue());
            default:
                return canonicalDecimal(value.asDecimal128().getValue());
        }
    }

    // One canonical form per number: a Long when the value is a whole number that fits, a stripped BigDecimal
    // otherwise. new BigDecimal(double) is exact, so 0.1 (double) and Decimal128 0.1 stay different, as on the server.
    private static Object canonicalDouble(double d) {
        if (Double.isNaN(d)) {
            return NonFinite.NAN;
        }
        if (Double.isInfinite(d)) {
            return d > 0 ? NonFinite.POSITIVE_INFINITY : NonFinite.NEGATIVE_INFINITY;
        }
        if (d == Math.rint(d) && d >= -TWO_POW_63 && d < TWO_POW_63) {
            return (long) d; // also turns -0.0 into 0
        }
        return new BigDecimal(d).stripTrailingZeros();
    }

    private static Object canonicalDecimal(Decimal128 decimal) {
        if (decimal.isNaN()) {
            return NonFinite.NAN;
        }
        if (decimal.isInfinite()) {
            return decimal.isNegative() ? NonFinite.NEGATIVE_INFINITY : NonFinite.POSITIVE_INFINITY;
        }
        BigDecimal value;
        try {
            value = decimal.bigDecimalValue();
        } catch (ArithmeticException negativeZero) {
            // Decimal128 refuses to turn -0 (of any exponent) into a BigDecimal; it equals 0.
            return 0L;
        }
        if (value.signum() == 0) {
            return 0L;
        }
        BigDecimal stripped = value.stripTrailingZeros();
        if (stripped.scale() <= 0 && stripped.compareTo(LONG_MIN) >= 0 && stripped.compareTo(LONG_MAX) <= 0) {
            return stripped.longValueExact();
        }
        return stripped;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof IdKey)) {
            return false;
        }
        IdKey other = (IdKey) o;
        return id != null && other.id != null && other.hash == hash && same(id, other.id);
    }

    @Override
    public int hashCode() {
        return hash;
    }

    @Override
    public String toString() {
        return "IdKey{" + (id == null ? "fresh" : Ids.format(id)) + '}';
    }
}
