package io.github.mongowriteguard.testkit.spec;

import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

/**
 * The unified format's "evaluating matches": root-level documents may carry extra fields, nested ones may not;
 * arrays match element by element; numbers match across int, long and double; and the special operators
 * {@code $$exists}, {@code $$type}, {@code $$unsetOrMatches}, {@code $$matchesEntity}, {@code $$matchesHexBytes},
 * {@code $$sessionLsid}, {@code $$lte}, {@code $$matchAsDocument}, {@code $$matchAsRoot}.
 */
final class ValueMatcher {
    private static final Map<String, List<BsonType>> TYPES = Map.ofEntries(
            Map.entry("double", List.of(BsonType.DOUBLE)),
            Map.entry("string", List.of(BsonType.STRING)),
            Map.entry("object", List.of(BsonType.DOCUMENT)),
            Map.entry("array", List.of(BsonType.ARRAY)),
            Map.entry("binData", List.of(BsonType.BINARY)),
            Map.entry("undefined", List.of(BsonType.UNDEFINED)),
            Map.entry("objectId", List.of(BsonType.OBJECT_ID)),
            Map.entry("bool", List.of(BsonType.BOOLEAN)),
            Map.entry("date", List.of(BsonType.DATE_TIME)),
            Map.entry("null", List.of(BsonType.NULL)),
            Map.entry("regex", List.of(BsonType.REGULAR_EXPRESSION)),
            Map.entry("dbPointer", List.of(BsonType.DB_POINTER)),
            Map.entry("javascript", List.of(BsonType.JAVASCRIPT)),
            Map.entry("symbol", List.of(BsonType.SYMBOL)),
            Map.entry("javascriptWithScope", List.of(BsonType.JAVASCRIPT_WITH_SCOPE)),
            Map.entry("int", List.of(BsonType.INT32)),
            Map.entry("timestamp", List.of(BsonType.TIMESTAMP)),
            Map.entry("long", List.of(BsonType.INT64)),
            Map.entry("decimal", List.of(BsonType.DECIMAL128)),
            Map.entry("minKey", List.of(BsonType.MIN_KEY)),
            Map.entry("maxKey", List.of(BsonType.MAX_KEY)),
            Map.entry("number", List.of(BsonType.INT32, BsonType.INT64, BsonType.DOUBLE, BsonType.DECIMAL128)));

    private final Entities entities;

    ValueMatcher(Entities entities) {
        this.entities = entities;
    }

    /** Asserts that {@code actual} (null: absent) matches {@code expected} as a root-level value. */
    void assertMatches(String context, BsonValue expected, BsonValue actual) {
        match(context, expected, actual, true);
    }

    /** Asserts an exact match: no extra fields at any level (for {@code outcome}). */
    void assertMatchesExactly(String context, BsonValue expected, BsonValue actual) {
        match(context, expected, actual, false);
    }

    private void match(String path, BsonValue expected, BsonValue actual, boolean root) {
        if (isOperator(expected)) {
            matchOperator(path, expected.asDocument(), actual, root);
            return;
        }
        if (actual == null) {
            fail(path, "is absent, expected " + expected.toString());
        }
        if (expected.isDocument()) {
            if (!actual.isDocument()) {
                fail(path, "expected a document " + expected + " but was " + actual);
            }
            matchDocument(path, expected.asDocument(), actual.asDocument(), root);
        } else if (expected.isArray()) {
            if (!actual.isArray()) {
                fail(path, "expected an array " + expected + " but was " + actual);
            }
            BsonArray e = expected.asArray();
            BsonArray a = actual.asArray();
            if (e.size() != a.size()) {
                fail(path, "expected " + e.size() + " elements " + e + " but was " + a.size() + " " + a);
            }
            for (int i = 0; i < e.size(); i++) {
                match(path + "[" + i + "]", e.get(i), a.get(i), false);
            }
        } else if (expected.isNumber() || expected.isDecimal128()) {
            if (!(actual.isNumber() || actual.isDecimal128())) {
                fail(path, "expected number " + expected + " but was " + actual);
            }
            if (number(expected) != number(actual)) {
                fail(path, "expected " + expected + " but was " + actual);
            }
        } else if (!expected.equals(actual)) {
            fail(path, "expected " + expected + " but was " + actual);
        }
    }

    private void matchDocument(String path, BsonDocument expected, BsonDocument actual, boolean root) {
        for (Map.Entry<String, BsonValue> entry : expected.entrySet()) {
            String key = entry.getKey();
            BsonValue value = entry.getValue();
            String child = path + "." + key;
            if (isOperator(value)) {
                String operator = value.asDocument().getFirstKey();
                if (operator.equals("$$exists")) {
                    boolean exists = value.asDocument().getBoolean("$$exists").getValue();
                    if (exists != actual.containsKey(key)) {
                        fail(
                                child,
                                exists
                                        ? "is absent, expected it to exist"
                                        : "exists (" + actual.get(key) + "), expected it absent");
                    }
                    continue;
                }
                if (operator.equals("$$unsetOrMatches") && !actual.containsKey(key)) {
                    continue;
                }
            }
            if (!actual.containsKey(key)) {
                fail(child, "is absent, expected " + value);
            }
            match(child, value, actual.get(key), false);
        }
        if (!root) {
            for (String key : actual.keySet()) {
                if (!expected.containsKey(key)) {
                    fail(path + "." + key, "is an extra field (" + actual.get(key) + ") in a nested document");
                }
            }
        }
    }

    private void matchOperator(String path, BsonDocument operatorDocument, BsonValue actual, boolean root) {
        String operator = operatorDocument.getFirstKey();
        BsonValue argument = operatorDocument.get(operator);
        switch (operator) {
            case "$$exists":
                if (argument.asBoolean().getValue() != (actual != null)) {
                    fail(path, "existence expected " + argument + " but value was " + actual);
                }
                return;
            case "$$unsetOrMatches":
                if (actual == null || (root && actual.isNull())) {
                    return;
                }
                match(path, argument, actual, root);
                return;
            case "$$type":
                if (actual == null) {
                    fail(path, "is absent, expected type " + argument);
                }
                List<BsonValue> names = argument.isArray() ? argument.asArray().getValues() : List.of(argument);
                for (BsonValue name : names) {
                    List<BsonType> types = TYPES.get(name.asString().getValue());
                    if (types == null) {
                        throw new TestAbortedException("unknown $$type alias " + name);
                    }
                    if (types.contains(actual.getBsonType())) {
                        return;
                    }
                }
                fail(path, "expected type " + argument + " but was " + actual.getBsonType() + " (" + actual + ")");
                return;
            case "$$matchesEntity":
                match(path, entities.value(argument.asString().getValue()), actual, root);
                return;
            case "$$matchesHexBytes":
                if (actual == null || !actual.isBinary()) {
                    fail(path, "expected binary data, was " + actual);
                }
                String hex =
                        java.util.HexFormat.of().formatHex(actual.asBinary().getData());
                if (!hex.equalsIgnoreCase(argument.asString().getValue())) {
                    fail(path, "expected bytes " + argument.asString().getValue() + " but were " + hex);
                }
                return;
            case "$$sessionLsid":
                match(path, entities.sessionLsid(argument.asString().getValue()), actual, root);
                return;
            case "$$lte":
                if (actual == null || !actual.isNumber()) {
                    fail(path, "expected a number <= " + argument + " but was " + actual);
                }
                if (number(actual) > number(argument)) {
                    fail(path, "expected <= " + argument + " but was " + actual);
                }
                return;
            case "$$matchAsDocument":
                if (actual == null || !actual.isString()) {
                    fail(path, "expected a JSON string, was " + actual);
                }
                match(path, argument, BsonDocument.parse(actual.asString().getValue()), false);
                return;
            case "$$matchAsRoot":
                match(path, argument, actual, true);
                return;
            default:
                throw new TestAbortedException("matching operator " + operator + " is not supported by the runner");
        }
    }

    private static boolean isOperator(BsonValue value) {
        return value.isDocument()
                && value.asDocument().size() == 1
                && value.asDocument().getFirstKey().startsWith("$$");
    }

    private static double number(BsonValue value) {
        return value.isDecimal128()
                ? value.asDecimal128().doubleValue()
                : value.asNumber().doubleValue();
    }

    private static void fail(String path, String message) {
        throw new AssertionFailedError(path + ": " + message);
    }
}
