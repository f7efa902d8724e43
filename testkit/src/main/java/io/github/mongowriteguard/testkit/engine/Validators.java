package io.github.mongowriteguard.testkit.engine;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Collection validators with {@code $jsonSchema} ({@link JsonSchema}), set by {@code create} or {@code collMod} with
 * {@code validator}, {@code validationLevel} and {@code validationAction}, checked on insert as mongod checks them
 * ({@code src/mongo/db/catalog/collection_impl.cpp}, {@code checkValidation}): a document that fails is the write error
 * {@code DocumentValidationFailure} (121) "Document failed validation" with {@code errInfo: {failingDocumentId,
 * details: {operatorName: "$jsonSchema", schemaRulesNotSatisfied: [...]}}} (the 5.0+ shape, also when emulating 4.4,
 * whose servers send no {@code errInfo}); {@code validationAction: "warn"}, {@code validationLevel: "off"} and
 * {@code bypassDocumentValidation: true} store it. Updates, replacements and upserts are checked too
 * ({@link UpdateValidation}); validators other than {@code $jsonSchema} are kept but not checked.
 */
final class Validators {
    /** One collection's validator. */
    private record Validator(BsonDocument validator, String level, String action) {}

    private final Map<String, Validator> byNamespace = new ConcurrentHashMap<>();

    /**
     * Handles {@code create}, {@code collMod}, {@code drop} and {@code dropDatabase} for their validator options, and
     * runs the rest of the command through {@code engine}; null for any other command.
     */
    BsonDocument handle(String database, BsonDocument command, UnaryOperator<BsonDocument> engine) {
        String name = command.getFirstKey();
        switch (name) {
            case "create" -> {
                BsonDocument refused = remember(database, command);
                if (refused != null) {
                    return refused;
                }
                BsonDocument plain = command.clone();
                plain.remove("validator");
                plain.remove("validationLevel");
                plain.remove("validationAction");
                BsonDocument reply = engine.apply(plain);
                if (!ok(reply)) {
                    byNamespace.remove(namespace(database, command));
                }
                return reply;
            }
            case "collMod" -> {
                BsonDocument listed = engine.apply(new BsonDocument("listCollections", new BsonInt32(1)));
                boolean exists = ok(listed)
                        && listed.getDocument("cursor").getArray("firstBatch").stream()
                                .anyMatch(c -> c.asDocument().get("name").equals(command.get("collMod")));
                if (!exists) {
                    return StorageEngine.error(26, "NamespaceNotFound", "ns does not exist");
                }
                BsonDocument refused = remember(database, command);
                return refused != null ? refused : new BsonDocument("ok", new BsonInt32(1));
            }
            case "drop" -> {
                byNamespace.remove(namespace(database, command));
                return engine.apply(command);
            }
            case "dropDatabase" -> {
                byNamespace.keySet().removeIf(ns -> ns.startsWith(database + "."));
                return engine.apply(command);
            }
            default -> {
                return null;
            }
        }
    }

    /** Gives {@code other} these validators (they are immutable records, shared). */
    void copyTo(Validators other) {
        other.byNamespace.putAll(byNamespace);
    }

    /**
     * The check of the documents an {@code update} or {@code findAndModify} produces, or null when the collection's
     * validator checks nothing for it.
     */
    UpdateValidation forUpdate(
            String database,
            BsonDocument command,
            java.util.function.Supplier<java.util.Map<BsonValue, BsonDocument>> collection,
            UnaryOperator<BsonDocument> engine) {
        Validator validator = checking(database, command);
        if (validator == null) {
            return null;
        }
        return new UpdateValidation(
                document -> refusal(database, command, document),
                validator.level().equals("moderate"),
                collection,
                engine,
                command.get(command.getFirstKey()).asString().getValue());
    }

    /** The collection's validator when it checks the documents of {@code command}, else null. */
    private Validator checking(String database, BsonDocument command) {
        Validator validator = byNamespace.get(namespace(database, command));
        if (validator == null
                || validator.level().equals("off")
                || validator.action().equals("warn")
                || truthy(command.get("bypassDocumentValidation"))) {
            return null;
        }
        BsonValue schema = validator.validator().get("$jsonSchema");
        return schema != null && schema.isDocument() ? validator : null;
    }

    /** The write error of a document the collection's validator refuses, or null. */
    BsonDocument refusal(String database, BsonDocument command, BsonDocument document) {
        Validator validator = checking(database, command);
        if (validator == null) {
            return null;
        }
        BsonDocument schema = validator.validator().getDocument("$jsonSchema");
        BsonArray unsatisfied = JsonSchema.unsatisfied(schema, document);
        if (unsatisfied.isEmpty()) {
            return null;
        }
        BsonDocument errInfo = new BsonDocument();
        if (document.containsKey("_id")) {
            errInfo.put("failingDocumentId", document.get("_id"));
        }
        errInfo.put(
                "details",
                new BsonDocument("operatorName", new BsonString("$jsonSchema"))
                        .append("schemaRulesNotSatisfied", unsatisfied));
        return new BsonDocument("code", new BsonInt32(121))
                .append("codeName", new BsonString("DocumentValidationFailure"))
                .append("errmsg", new BsonString("Document failed validation"))
                .append("errInfo", errInfo);
    }

    private BsonDocument remember(String database, BsonDocument command) {
        String ns = namespace(database, command);
        Validator old = byNamespace.get(ns);
        BsonDocument validator = command.containsKey("validator")
                ? command.getDocument("validator")
                : old == null ? null : old.validator();
        if (validator == null) {
            return null;
        }
        BsonValue schema = validator.get("$jsonSchema");
        if (schema != null && schema.isDocument()) {
            String unknown = JsonSchema.unsupportedKeyword(schema.asDocument());
            if (unknown != null) {
                return StorageEngine.error(
                        9,
                        "FailedToParse",
                        "$jsonSchema keyword '" + unknown + "' is not emulated by the testkit (it knows "
                                + new java.util.TreeSet<>(JsonSchema.KEYWORDS) + ")");
            }
        }
        String level = command.getString("validationLevel", new BsonString(old == null ? "strict" : old.level()))
                .getValue();
        String action = command.getString("validationAction", new BsonString(old == null ? "error" : old.action()))
                .getValue();
        byNamespace.put(ns, new Validator(validator, level, action));
        return null;
    }

    private static String namespace(String database, BsonDocument command) {
        return database + "." + command.get(command.getFirstKey()).asString().getValue();
    }

    private static boolean ok(BsonDocument reply) {
        return reply.get("ok", new BsonInt32(0)).asNumber().doubleValue() == 1;
    }

    private static boolean truthy(BsonValue value) {
        return value != null && value.isBoolean() && value.asBoolean().getValue();
    }
}
