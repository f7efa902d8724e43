package io.github.mongowriteguard.testkit.engine;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonType;
import org.bson.BsonValue;

/**
 * A subset of the server's {@code $jsonSchema} ({@code src/mongo/db/matcher/schema/json_schema_parser.cpp}), and the
 * details of a failure in the shape mongod 5.0+ reports them ({@code errInfo.details.schemaRulesNotSatisfied},
 * {@code src/mongo/db/matcher/doc_validation_error.cpp}): a faithful subset of the keywords and of the details.
 *
 * <p>Keywords: {@code bsonType}, {@code type}, {@code required}, {@code properties}, {@code additionalProperties}
 * (boolean), {@code minimum}, {@code maximum}, {@code enum}, {@code minLength}, {@code maxLength}, {@code pattern},
 * {@code items} (one schema), {@code minItems}, {@code maxItems}; {@code title} and {@code description} are ignored, as
 * on the server. A schema with another keyword is refused when the validator is set, naming the keyword.
 */
final class JsonSchema {
    static final Set<String> KEYWORDS = Set.of(
            "bsonType",
            "type",
            "required",
            "properties",
            "additionalProperties",
            "minimum",
            "maximum",
            "enum",
            "minLength",
            "maxLength",
            "pattern",
            "items",
            "minItems",
            "maxItems",
            "title",
            "description");

    private static final Map<String, Set<BsonType>> BSON_TYPES = Map.ofEntries(
            Map.entry("double", Set.of(BsonType.DOUBLE)),
            Map.entry("string", Set.of(BsonType.STRING)),
            Map.entry("object", Set.of(BsonType.DOCUMENT)),
            Map.entry("array", Set.of(BsonType.ARRAY)),
            Map.entry("binData", Set.of(BsonType.BINARY)),
            Map.entry("objectId", Set.of(BsonType.OBJECT_ID)),
            Map.entry("bool", Set.of(BsonType.BOOLEAN)),
            Map.entry("date", Set.of(BsonType.DATE_TIME)),
            Map.entry("null", Set.of(BsonType.NULL)),
            Map.entry("regex", Set.of(BsonType.REGULAR_EXPRESSION)),
            Map.entry("int", Set.of(BsonType.INT32)),
            Map.entry("timestamp", Set.of(BsonType.TIMESTAMP)),
            Map.entry("long", Set.of(BsonType.INT64)),
            Map.entry("decimal", Set.of(BsonType.DECIMAL128)),
            Map.entry("number", Set.of(BsonType.INT32, BsonType.INT64, BsonType.DOUBLE, BsonType.DECIMAL128)));

    private static final Map<String, Set<BsonType>> JSON_TYPES = Map.of(
            "object", Set.of(BsonType.DOCUMENT),
            "array", Set.of(BsonType.ARRAY),
            "number", BSON_TYPES.get("number"),
            "boolean", Set.of(BsonType.BOOLEAN),
            "string", Set.of(BsonType.STRING),
            "null", Set.of(BsonType.NULL));

    private JsonSchema() {}

    /** The first keyword of {@code schema} (or of a nested schema) this subset does not know, or null. */
    static String unsupportedKeyword(BsonDocument schema) {
        for (Map.Entry<String, BsonValue> keyword : schema.entrySet()) {
            if (!KEYWORDS.contains(keyword.getKey())) {
                return keyword.getKey();
            }
            if (keyword.getKey().equals("properties") && keyword.getValue().isDocument()) {
                for (BsonValue nested : keyword.getValue().asDocument().values()) {
                    String unknown = nested.isDocument() ? unsupportedKeyword(nested.asDocument()) : null;
                    if (unknown != null) {
                        return unknown;
                    }
                }
            }
            if (keyword.getKey().equals("items") && keyword.getValue().isDocument()) {
                String unknown = unsupportedKeyword(keyword.getValue().asDocument());
                if (unknown != null) {
                    return unknown;
                }
            }
        }
        return null;
    }

    /** The rules of {@code schema} that {@code value} does not satisfy, as {@code schemaRulesNotSatisfied}. */
    static BsonArray unsatisfied(BsonDocument schema, BsonValue value) {
        BsonArray failed = new BsonArray();
        for (Map.Entry<String, BsonValue> keyword : schema.entrySet()) {
            BsonDocument rule = check(keyword.getKey(), keyword.getValue(), value);
            if (rule != null) {
                failed.add(rule);
            }
        }
        BsonDocument extra = additional(schema, value);
        if (extra != null) {
            failed.add(extra);
        }
        return failed;
    }

    private static BsonDocument check(String keyword, BsonValue spec, BsonValue value) {
        switch (keyword) {
            case "bsonType", "type" -> {
                Map<String, Set<BsonType>> names = keyword.equals("type") ? JSON_TYPES : BSON_TYPES;
                List<BsonValue> allowed = spec.isArray() ? spec.asArray().getValues() : List.of(spec);
                for (BsonValue name : allowed) {
                    if (name.isString()
                            && names.getOrDefault(name.asString().getValue(), Set.of())
                                    .contains(value.getBsonType())) {
                        return null;
                    }
                }
                return rule(keyword, spec, "type did not match", value)
                        .append("consideredType", new BsonString(typeName(value)));
            }
            case "required" -> {
                if (!value.isDocument()) {
                    return null;
                }
                BsonArray missing = new BsonArray();
                for (BsonValue name : spec.asArray()) {
                    if (!value.asDocument().containsKey(name.asString().getValue())) {
                        missing.add(name);
                    }
                }
                return missing.isEmpty()
                        ? null
                        : new BsonDocument("operatorName", new BsonString("required"))
                                .append("specifiedAs", new BsonDocument("required", spec))
                                .append("missingProperties", missing);
            }
            case "properties" -> {
                if (!value.isDocument()) {
                    return null;
                }
                BsonArray notSatisfied = new BsonArray();
                for (Map.Entry<String, BsonValue> property : spec.asDocument().entrySet()) {
                    BsonValue present = value.asDocument().get(property.getKey());
                    if (present == null || !property.getValue().isDocument()) {
                        continue;
                    }
                    BsonArray details = unsatisfied(property.getValue().asDocument(), present);
                    if (!details.isEmpty()) {
                        notSatisfied.add(new BsonDocument("propertyName", new BsonString(property.getKey()))
                                .append("details", details));
                    }
                }
                return notSatisfied.isEmpty()
                        ? null
                        : new BsonDocument("operatorName", new BsonString("properties"))
                                .append("propertiesNotSatisfied", notSatisfied);
            }
            case "minimum", "maximum" -> {
                if (!value.isNumber() && !value.isDecimal128()) {
                    return null;
                }
                double number = value.isDecimal128()
                        ? value.asDecimal128().doubleValue()
                        : value.asNumber().doubleValue();
                double bound = spec.asNumber().doubleValue();
                boolean ok = keyword.equals("minimum") ? number >= bound : number <= bound;
                return ok ? null : rule(keyword, spec, "comparison failed", value);
            }
            case "enum" -> {
                return spec.asArray().contains(value)
                        ? null
                        : rule(keyword, spec, "value was not found in enum", value);
            }
            case "minLength", "maxLength" -> {
                if (!value.isString()) {
                    return null;
                }
                int length = value.asString()
                        .getValue()
                        .codePointCount(0, value.asString().getValue().length());
                long bound = spec.asNumber().longValue();
                boolean ok = keyword.equals("minLength") ? length >= bound : length <= bound;
                return ok ? null : rule(keyword, spec, "specified string length was not satisfied", value);
            }
            case "pattern" -> {
                if (!value.isString()) {
                    return null;
                }
                boolean ok = Pattern.compile(spec.asString().getValue())
                        .matcher(value.asString().getValue())
                        .find();
                return ok ? null : rule(keyword, spec, "regular expression did not match", value);
            }
            case "minItems", "maxItems" -> {
                if (!value.isArray()) {
                    return null;
                }
                int size = value.asArray().size();
                long bound = spec.asNumber().longValue();
                boolean ok = keyword.equals("minItems") ? size >= bound : size <= bound;
                return ok ? null : rule(keyword, spec, "array did not match specified length", value);
            }
            case "items" -> {
                if (!value.isArray() || !spec.isDocument()) {
                    return null;
                }
                BsonArray items = value.asArray();
                for (int i = 0; i < items.size(); i++) {
                    BsonArray details = unsatisfied(spec.asDocument(), items.get(i));
                    if (!details.isEmpty()) {
                        return new BsonDocument("operatorName", new BsonString("items"))
                                .append("reason", new BsonString("At least one item did not match the sub-schema"))
                                .append("itemIndex", new org.bson.BsonInt32(i))
                                .append("details", details);
                    }
                }
                return null;
            }
            default -> {
                return null;
            }
        }
    }

    /** {@code additionalProperties: false}: the fields not named in {@code properties}. */
    private static BsonDocument additional(BsonDocument schema, BsonValue value) {
        BsonValue spec = schema.get("additionalProperties");
        if (spec == null || !spec.isBoolean() || spec.asBoolean().getValue() || !value.isDocument()) {
            return null;
        }
        BsonDocument properties = schema.getDocument("properties", new BsonDocument());
        BsonArray extra = new BsonArray();
        for (String name : value.asDocument().keySet()) {
            if (!properties.containsKey(name)) {
                extra.add(new BsonString(name));
            }
        }
        return extra.isEmpty()
                ? null
                : new BsonDocument("operatorName", new BsonString("additionalProperties"))
                        .append("specifiedAs", new BsonDocument("additionalProperties", BsonBoolean.FALSE))
                        .append("additionalProperties", extra);
    }

    private static BsonDocument rule(String keyword, BsonValue spec, String reason, BsonValue considered) {
        return new BsonDocument("operatorName", new BsonString(keyword))
                .append("specifiedAs", new BsonDocument(keyword, spec))
                .append("reason", new BsonString(reason))
                .append("consideredValue", considered);
    }

    private static String typeName(BsonValue value) {
        for (Map.Entry<String, Set<BsonType>> entry : BSON_TYPES.entrySet()) {
            if (!entry.getKey().equals("number") && entry.getValue().contains(value.getBsonType())) {
                return entry.getKey();
            }
        }
        return value.getBsonType().name().toLowerCase(java.util.Locale.ROOT);
    }
}
