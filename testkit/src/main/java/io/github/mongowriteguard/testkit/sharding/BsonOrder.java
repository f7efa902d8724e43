package io.github.mongowriteguard.testkit.sharding;

import java.util.Comparator;
import java.util.Iterator;
import java.util.Map;
import org.bson.BsonType;
import org.bson.BsonValue;

/**
 * The server's BSON sort order (MinKey, null, numbers, strings, documents, arrays, binary, ObjectId, booleans,
 * dates, timestamps, regular expressions, MaxKey), as far as chunk ranges need it. Numbers of different types
 * compare by value, so a chunk bound written as {@code 5} holds a document whose key is {@code 5L}.
 */
final class BsonOrder implements Comparator<BsonValue> {
    static final BsonOrder INSTANCE = new BsonOrder();

    private BsonOrder() {}

    @Override
    public int compare(BsonValue a, BsonValue b) {
        int rank = Integer.compare(rank(a.getBsonType()), rank(b.getBsonType()));
        if (rank != 0) {
            return rank;
        }
        switch (a.getBsonType()) {
            case INT32:
            case INT64:
            case DOUBLE:
            case DECIMAL128:
                if ((a.isInt32() || a.isInt64()) && (b.isInt32() || b.isInt64())) {
                    return Long.compare(a.asNumber().longValue(), b.asNumber().longValue());
                }
                return Double.compare(number(a), number(b));
            case STRING:
            case SYMBOL:
                return text(a).compareTo(text(b));
            case DOCUMENT:
                return compareDocuments(a.asDocument(), b.asDocument());
            case ARRAY:
                return compareIterables(a.asArray().iterator(), b.asArray().iterator());
            case BINARY:
                byte[] x = a.asBinary().getData();
                byte[] y = b.asBinary().getData();
                int length = Integer.compare(x.length, y.length);
                if (length != 0) {
                    return length;
                }
                int subtype = Byte.compare(a.asBinary().getType(), b.asBinary().getType());
                return subtype != 0 ? subtype : java.util.Arrays.compareUnsigned(x, y);
            case OBJECT_ID:
                return a.asObjectId().getValue().compareTo(b.asObjectId().getValue());
            case BOOLEAN:
                return Boolean.compare(a.asBoolean().getValue(), b.asBoolean().getValue());
            case DATE_TIME:
                return Long.compare(a.asDateTime().getValue(), b.asDateTime().getValue());
            case TIMESTAMP:
                return a.asTimestamp().compareTo(b.asTimestamp());
            default:
                return 0;
        }
    }

    private int compareDocuments(org.bson.BsonDocument a, org.bson.BsonDocument b) {
        Iterator<Map.Entry<String, BsonValue>> x = a.entrySet().iterator();
        Iterator<Map.Entry<String, BsonValue>> y = b.entrySet().iterator();
        while (x.hasNext() && y.hasNext()) {
            Map.Entry<String, BsonValue> ex = x.next();
            Map.Entry<String, BsonValue> ey = y.next();
            int c = Integer.compare(
                    rank(ex.getValue().getBsonType()), rank(ey.getValue().getBsonType()));
            if (c == 0) {
                c = ex.getKey().compareTo(ey.getKey());
            }
            if (c == 0) {
                c = compare(ex.getValue(), ey.getValue());
            }
            if (c != 0) {
                return c;
            }
        }
        return Boolean.compare(x.hasNext(), y.hasNext());
    }

    private int compareIterables(Iterator<BsonValue> x, Iterator<BsonValue> y) {
        while (x.hasNext() && y.hasNext()) {
            int c = compare(x.next(), y.next());
            if (c != 0) {
                return c;
            }
        }
        return Boolean.compare(x.hasNext(), y.hasNext());
    }

    private static double number(BsonValue value) {
        return value.isDecimal128()
                ? value.asDecimal128().getValue().doubleValue()
                : value.asNumber().doubleValue();
    }

    private static String text(BsonValue value) {
        return value.isSymbol()
                ? value.asSymbol().getSymbol()
                : value.asString().getValue();
    }

    private static int rank(BsonType type) {
        switch (type) {
            case MIN_KEY:
                return 0;
            case NULL:
            case UNDEFINED:
                return 1;
            case INT32:
            case INT64:
            case DOUBLE:
            case DECIMAL128:
                return 2;
            case STRING:
            case SYMBOL:
                return 3;
            case DOCUMENT:
                return 4;
            case ARRAY:
                return 5;
            case BINARY:
                return 6;
            case OBJECT_ID:
                return 7;
            case BOOLEAN:
                return 8;
            case DATE_TIME:
                return 9;
            case TIMESTAMP:
                return 10;
            case REGULAR_EXPRESSION:
                return 11;
            case MAX_KEY:
                return 13;
            default:
                return 12;
        }
    }
}
