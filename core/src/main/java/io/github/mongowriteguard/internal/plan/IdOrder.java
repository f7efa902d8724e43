package io.github.mongowriteguard.internal.plan;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import org.bson.BsonType;
import org.bson.BsonValue;

/**
 * The server's order of {@code _id} values ({@code src/mongo/bson/bsonelement.cpp}, {@code compareElementValues}:
 * first the canonical type, then the value), for the types a chunk bound of a {@code {_id: 1}} shard key usually has:
 * MinKey, numbers (without Decimal128 and NaN), strings (simple collation: UTF-8 bytes, unsigned), ObjectIds, MaxKey.
 * Other values are {@link #NOT_COMPARABLE}, and their placement stays unknown.
 */
final class IdOrder {

    static final int NOT_COMPARABLE = -1;

    private IdOrder() {}

    /** The value's class in the server's order, or {@link #NOT_COMPARABLE}. */
    static int rank(BsonValue value) {
        BsonType type = value.getBsonType();
        switch (type) {
            case MIN_KEY:
                return 0;
            case INT32:
            case INT64:
                return 1;
            case DOUBLE:
                return Double.isNaN(value.asDouble().getValue()) ? NOT_COMPARABLE : 1;
            case STRING:
                return 2;
            case OBJECT_ID:
                return 3;
            case MAX_KEY:
                return 4;
            default:
                return NOT_COMPARABLE;
        }
    }

    /** Compares two values whose {@link #rank} is not {@link #NOT_COMPARABLE}. */
    static int compare(BsonValue a, BsonValue b) {
        int rankA = rank(a);
        int rankB = rank(b);
        if (rankA != rankB) {
            return Integer.compare(rankA, rankB);
        }
        switch (rankA) {
            case 1:
                return compareNumbers(a, b);
            case 2:
                return compareBytes(
                        a.asString().getValue().getBytes(StandardCharsets.UTF_8),
                        b.asString().getValue().getBytes(StandardCharsets.UTF_8));
            case 3:
                return a.asObjectId().getValue().compareTo(b.asObjectId().getValue());
            default:
                return 0; // MinKey, MaxKey
        }
    }

    private static int compareNumbers(BsonValue a, BsonValue b) {
        if (!a.isDouble() && !b.isDouble()) {
            return Long.compare(a.asNumber().longValue(), b.asNumber().longValue());
        }
        double x = a.asNumber().doubleValue();
        double y = b.asNumber().doubleValue();
        if (Double.isInfinite(x) || Double.isInfinite(y)) {
            return Double.compare(x, y);
        }
        // exact: a long above 2^53 and a double differ where a conversion to double would make them equal
        return toDecimal(a).compareTo(toDecimal(b));
    }

    private static BigDecimal toDecimal(BsonValue number) {
        return number.isDouble()
                ? new BigDecimal(number.asDouble().getValue())
                : BigDecimal.valueOf(number.asNumber().longValue());
    }

    private static int compareBytes(byte[] a, byte[] b) {
        int common = Math.min(a.length, b.length);
        for (int i = 0; i < common; i++) {
            int difference = (a[i] & 0xFF) - (b[i] & 0xFF);
            if (difference != 0) {
                return difference;
            }
        }
        return Integer.compare(a.length, b.length);
    }
}
