package io.github.mongowriteguard.bulk;

import org.bson.BsonDocument;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.types.Decimal128;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

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
 */
final class IdKey {

    /** Canonical numbers that are not finite: one marker each. */
    private enum NonFinite { NAN, POSITIVE_INFINITY, NEGATIVE_INFINITY }

    private static final double TWO_POW_63 = 9.223372036854775808E18;
    private static final BigDecimal LONG_MIN = BigDecimal.valueOf(Long.MIN_VALUE);
    private static final BigDecimal LONG_MAX = BigDecimal.valueOf(Long.MAX_VALUE);

    private final Object canonical;
    private final int hash;

    private IdKey(Object canonical) {
        this.canonical = canonical;
        this.hash = canonical.hashCode();
    }

    static IdKey of(BsonValue id) {
        return new IdKey(canonical(id));
    }

    /**
     * A key equal to no other: for an insert left without {@code _id}, which gets a fresh one when sent, so no other
     * write in the bulk can name its document.
     */
    static IdKey fresh() {
        return new IdKey(new Object());
    }

    private static Object canonical(BsonValue value) {
        BsonType type = value.getBsonType();
        switch (type) {
            case INT32:
                return (long) value.asInt32().getValue();
            case INT64:
                return value.asInt64().getValue();
            case DOUBLE:
                return canonicalDouble(value.asDouble().getValue());
            case DECIMAL128:
                return canonicalDecimal(value.asDecimal128().getValue());
            case STRING:
                return value.asString().getValue();
            case SYMBOL:
                return value.asSymbol().getSymbol();
            case DOCUMENT:
                return canonicalDocument(value.asDocument());
            case ARRAY:
                return canonicalArray(value.asArray().getValues());
            default:
                // ObjectId, dates, binary, booleans, null, ...: the BSON value classes compare by value already.
                return value;
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

    private static Object canonicalDocument(BsonDocument document) {
        List<Object> fields = new ArrayList<>(document.size() * 2);
        for (Map.Entry<String, BsonValue> field : document.entrySet()) {
            fields.add(field.getKey());
            fields.add(canonical(field.getValue()));
        }
        return new Composite(true, fields);
    }

    private static Object canonicalArray(List<BsonValue> values) {
        List<Object> elements = new ArrayList<>(values.size());
        for (BsonValue value : values) {
            elements.add(canonical(value));
        }
        return new Composite(false, elements);
    }

    /** An embedded document (names and values, in order) or an array. */
    private static final class Composite {
        private final boolean document;
        private final List<Object> items;

        Composite(boolean document, List<Object> items) {
            this.document = document;
            this.items = items;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Composite && ((Composite) o).document == document && ((Composite) o).items.equals(items);
        }

        @Override
        public int hashCode() {
            return 31 * items.hashCode() + (document ? 1 : 0);
        }
    }

    @Override
    public boolean equals(Object o) {
        return this == o || (o instanceof IdKey && ((IdKey) o).hash == hash && ((IdKey) o).canonical.equals(canonical));
    }

    @Override
    public int hashCode() {
        return hash;
    }

    @Override
    public String toString() {
        return "IdKey{" + canonical + '}';
    }
}
