package io.github.mongowriteguard.testkit.engine;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * The updates mongo-java-server's engine cannot apply, computed here document by document and handed to the engine as
 * what it can apply ({@code $set} of the computed values, or the new document as a replacement):
 * <ul>
 *   <li>{@code $bit} ({@code src/mongo/db/update/bit_node.cpp}): {@code and}, {@code or}, {@code xor} with an int32 or
 *       int64 operand, in the order given, on an int32 or int64 field (int32 with int64 gives int64, as
 *       {@code SafeNum}); a missing field starts at int32 0; the parse errors and "Cannot apply $bit to a value of
 *       non-integral type" are {@code BadValue} (2) with the server's messages;</li>
 *   <li>pipeline updates, {@code u} an array ({@code src/mongo/db/update/pipeline_executor.cpp}): only
 *       {@code $addFields}, {@code $set}, {@code $project}, {@code $unset}, {@code $replaceRoot} and
 *       {@code $replaceWith} ("... is not allowed to be used within an update", {@code InvalidOptions} 72); the stages
 *       run on the one document (on the engine's aggregation, in a scratch engine), and the result replaces it, its
 *       {@code _id} kept when the pipeline drops it ({@code ObjectReplaceExecutor::applyReplacementUpdate}); an upsert
 *       runs the pipeline on the document the query's equality fields seed.</li>
 * </ul>
 * Each statement of an {@code update} and a {@code findAndModify} that needs it runs this way; the others go to the
 * engine unchanged. The caller holds the engine's lock, so the statement is one step.
 */
final class ComputedUpdates {
    private static final Set<String> UPDATE_STAGES =
            Set.of("$addFields", "$set", "$project", "$unset", "$replaceRoot", "$replaceWith");
    private static final String SCRATCH_DB = "computed";
    private static final String SCRATCH_COLLECTION = "doc";

    private final String database;
    private final String collection;
    private final UnaryOperator<BsonDocument> engine;
    private final StorageEngine scratch;

    private ComputedUpdates(
            String database, String collection, UnaryOperator<BsonDocument> engine, StorageEngine scratch) {
        this.database = database;
        this.collection = collection;
        this.engine = engine;
        this.scratch = scratch;
    }

    /** Whether a command holds a statement the engine cannot apply. */
    static boolean needed(BsonDocument command) {
        String name = command.getFirstKey();
        if (!command.get(name).isString()) {
            return false;
        }
        if (name.equals("update")) {
            for (BsonValue statement : command.getArray("updates", new BsonArray())) {
                if (statement.isDocument() && computed(statement.asDocument().get("u"))) {
                    return true;
                }
            }
            return false;
        }
        return name.equalsIgnoreCase("findAndModify")
                && !command.getBoolean("remove", BsonBoolean.FALSE).getValue()
                && computed(command.get("update"));
    }

    private static boolean computed(BsonValue update) {
        return update != null
                && (update.isArray()
                        || (update.isDocument() && update.asDocument().containsKey("$bit")));
    }

    /**
     * Runs an {@code update} or {@code findAndModify} that {@link #needed} says the engine cannot apply.
     *
     * @param database the database
     * @param command  the command
     * @param engine   runs a command on the engine
     * @param scratch  an engine for running a pipeline on one document
     */
    static BsonDocument run(
            String database, BsonDocument command, UnaryOperator<BsonDocument> engine, StorageEngine scratch) {
        String name = command.getFirstKey();
        ComputedUpdates updates =
                new ComputedUpdates(database, command.getString(name).getValue(), engine, scratch);
        return name.equals("update") ? updates.update(command) : updates.findAndModify(command);
    }

    private BsonDocument update(BsonDocument command) {
        BsonArray statements = command.getArray("updates");
        boolean ordered = command.getBoolean("ordered", BsonBoolean.TRUE).getValue();
        UpdateReplies replies = new UpdateReplies();
        for (int i = 0; i < statements.size(); i++) {
            BsonDocument statement = statements.get(i).asDocument();
            BsonDocument error;
            if (computed(statement.get("u"))) {
                error = statement(command, statement, i, replies);
            } else {
                BsonDocument single = command.clone();
                single.put("updates", new BsonArray(List.of(statement)));
                BsonDocument reply = engine.apply(single);
                if (!ok(reply)) {
                    return reply;
                }
                error = replies.add(i, reply);
            }
            if (error != null && ordered) {
                break;
            }
        }
        return replies.reply();
    }

    /** One computed statement of an {@code update}: its write error, or null. */
    private BsonDocument statement(BsonDocument command, BsonDocument statement, int index, UpdateReplies replies) {
        BsonValue u = statement.get("u");
        BsonDocument query = statement.getDocument("q", new BsonDocument());
        try {
            check(u);
            if (u.isArray()
                    && !statement.getArray("arrayFilters", new BsonArray()).isEmpty()) {
                // src/mongo/db/update/update_driver.cpp (UpdateDriver::parse)
                throw new Refusal(9, "FailedToParse", "arrayFilters may not be specified for pipeline-style updates");
            }
            if (u.isArray() && (statement.containsKey("c") || command.containsKey("let"))) {
                throw unemulatedVariables();
            }
            List<BsonDocument> targets = find(
                    query,
                    null,
                    statement.getBoolean("multi", BsonBoolean.FALSE).getValue());
            if (targets.isEmpty()
                    && statement.getBoolean("upsert", BsonBoolean.FALSE).getValue()) {
                BsonDocument upsert = statement.clone();
                upsert.put("u", translate(u, seed(query), true));
                return replies.add(index, engine.apply(single(command, upsert)));
            }
            for (BsonDocument target : targets) {
                BsonDocument single = statement.clone();
                single.put("q", new BsonDocument("_id", target.get("_id")));
                single.put("u", translate(u, target, false));
                single.put("multi", BsonBoolean.FALSE);
                single.put("upsert", BsonBoolean.FALSE);
                single.remove("collation");
                single.remove("hint");
                BsonDocument error = replies.add(index, engine.apply(single(command, single)));
                if (error != null) {
                    return error;
                }
            }
            return null;
        } catch (Refusal refusal) {
            return replies.error(index, refusal.error());
        }
    }

    private static BsonDocument single(BsonDocument command, BsonDocument statement) {
        BsonDocument single = command.clone();
        single.put("updates", new BsonArray(List.of(statement)));
        return single;
    }

    private BsonDocument findAndModify(BsonDocument command) {
        BsonValue update = command.get("update");
        BsonDocument query = command.getDocument("query", new BsonDocument());
        try {
            check(update);
            if (update.isArray() && command.containsKey("arrayFilters")) {
                // src/mongo/db/commands/find_and_modify.cpp (validate)
                throw new Refusal(9, "FailedToParse", "Cannot specify arrayFilters and a pipeline update");
            }
            if (update.isArray() && command.containsKey("let")) {
                throw unemulatedVariables();
            }
            List<BsonDocument> targets = find(query, command.getDocument("sort", null), false);
            BsonDocument run = command.clone();
            run.remove("collation");
            run.remove("hint");
            if (targets.isEmpty()) {
                if (!command.getBoolean("upsert", BsonBoolean.FALSE).getValue()) {
                    return new BsonDocument(
                                    "lastErrorObject",
                                    new BsonDocument("n", new BsonInt32(0))
                                            .append("updatedExisting", BsonBoolean.FALSE))
                            .append("value", BsonNull.VALUE)
                            .append("ok", new BsonInt32(1));
                }
                run.put("update", translate(update, seed(query), true));
                return engine.apply(run);
            }
            BsonDocument target = targets.get(0);
            run.put("query", new BsonDocument("_id", target.get("_id")));
            run.put("update", translate(update, target, false));
            run.put("upsert", BsonBoolean.FALSE);
            run.remove("sort");
            return engine.apply(run);
        } catch (Refusal refusal) {
            BsonDocument error = refusal.error();
            return StorageEngine.error(
                    error.getInt32("code").getValue(),
                    error.getString("codeName").getValue(),
                    error.getString("errmsg").getValue());
        }
    }

    /**
     * Variables for a pipeline ({@code c}, {@code let}): the engine's aggregation has none, so the testkit says so
     * rather than run the pipeline without them.
     */
    private static Refusal unemulatedVariables() {
        return new Refusal(
                1,
                "InternalError",
                "emulator: the testkit does not emulate variables ('c', 'let') in pipeline updates; test this"
                        + " on a real deployment");
    }

    /** The documents a statement updates: all that match, or the first (in {@code sort}'s order when given). */
    private List<BsonDocument> find(BsonDocument query, BsonDocument sort, boolean multi) {
        BsonDocument find = new BsonDocument("find", new BsonString(collection)).append("filter", query);
        if (sort != null) {
            find.append("sort", sort);
        }
        if (!multi) {
            find.append("limit", new BsonInt32(1));
        }
        find.append("batchSize", new BsonInt32(Integer.MAX_VALUE));
        BsonDocument reply = engine.apply(find);
        if (!ok(reply)) {
            throw new Refusal(reply);
        }
        return reply.getDocument("cursor").getArray("firstBatch").stream()
                .map(BsonValue::asDocument)
                .toList();
    }

    /** The document an upsert starts from: the query's equality fields, as the engine's upsert seeds it. */
    private BsonDocument seed(BsonDocument query) {
        return scratch.atomically(() -> {
            scratch.run(SCRATCH_DB, new BsonDocument("drop", new BsonString(SCRATCH_COLLECTION)));
            BsonDocument reply = scratch.run(
                    SCRATCH_DB,
                    new BsonDocument("update", new BsonString(SCRATCH_COLLECTION))
                            .append(
                                    "updates",
                                    new BsonArray(List.of(new BsonDocument("q", query)
                                            .append(
                                                    "u",
                                                    new BsonDocument(
                                                            "$unset", new BsonDocument("__seed", new BsonString(""))))
                                            .append("upsert", BsonBoolean.TRUE)))));
            if (!ok(reply) || reply.containsKey("writeErrors")) {
                throw new Refusal(
                        reply.containsKey("writeErrors")
                                ? reply.getArray("writeErrors").get(0).asDocument()
                                : reply);
            }
            Map<BsonValue, BsonDocument> documents = scratch.documents(SCRATCH_DB, SCRATCH_COLLECTION);
            return documents.values().iterator().next();
        });
    }

    /** Checks what the server checks when it parses the update, before it looks for a document. */
    private static void check(BsonValue update) {
        if (update.isArray()) {
            for (BsonValue stage : update.asArray()) {
                if (!stage.isDocument() || stage.asDocument().size() != 1) {
                    throw new Refusal(
                            9,
                            "FailedToParse",
                            "A pipeline stage specification object must contain exactly one field.");
                }
                String name = stage.asDocument().getFirstKey();
                if (!UPDATE_STAGES.contains(name)) {
                    throw new Refusal(72, "InvalidOptions", name + " is not allowed to be used within an update");
                }
            }
            return;
        }
        BsonValue bit = update.asDocument().get("$bit");
        if (!bit.isDocument()) {
            throw new Refusal(
                    2,
                    "BadValue",
                    "Modifiers operate on fields but we found type " + typeName(bit)
                            + " instead. For example: {$mod: {<field>: ...}} not {$bit: " + bit + "}");
        }
        for (Map.Entry<String, BsonValue> field : bit.asDocument().entrySet()) {
            BsonValue spec = field.getValue();
            if (!spec.isDocument()) {
                throw new Refusal(
                        2,
                        "BadValue",
                        "The $bit modifier is not compatible with a " + typeName(spec)
                                + ". You must pass in an embedded document: {$bit: {field: {and/or/xor: #}}");
            }
            for (Map.Entry<String, BsonValue> op : spec.asDocument().entrySet()) {
                if (!Set.of("and", "or", "xor").contains(op.getKey())) {
                    throw new Refusal(
                            2,
                            "BadValue",
                            "The $bit modifier only supports 'and', 'or', and 'xor', not '" + op.getKey()
                                    + "' which is an unknown operator: {" + op.getKey() + ": " + op.getValue() + "}");
                }
                if (!op.getValue().isInt32() && !op.getValue().isInt64()) {
                    throw new Refusal(
                            2,
                            "BadValue",
                            "The $bit modifier field must be an Integer(32/64 bit); a '" + typeName(op.getValue())
                                    + "' is not supported here: {" + op.getKey() + ": " + op.getValue() + "}");
                }
            }
            if (spec.asDocument().isEmpty()) {
                throw new Refusal(
                        2,
                        "BadValue",
                        "You must pass in at least one bitwise operation. The format is: "
                                + "{$bit: {field: {and/or/xor: #}}");
            }
        }
    }

    /** What the engine applies to {@code document} in place of {@code update}. */
    private BsonValue translate(BsonValue update, BsonDocument document, boolean upsert) {
        if (update.isArray()) {
            BsonDocument result = pipeline(update.asArray(), document);
            if (!result.containsKey("_id") && document.containsKey("_id")) {
                BsonDocument withId = new BsonDocument("_id", document.get("_id"));
                withId.putAll(result);
                result = withId;
            }
            return result;
        }
        BsonDocument operators = update.asDocument().clone();
        BsonDocument bit = operators.remove("$bit").asDocument();
        BsonDocument set = new BsonDocument();
        for (Map.Entry<String, BsonValue> field : bit.entrySet()) {
            set.put(
                    field.getKey(),
                    bits(document, field.getKey(), field.getValue().asDocument()));
        }
        if (operators.containsKey("$set")) {
            for (Map.Entry<String, BsonValue> field :
                    operators.getDocument("$set").entrySet()) {
                if (set.containsKey(field.getKey())) {
                    throw new Refusal(
                            40,
                            "ConflictingUpdateOperators",
                            "Updating the path '" + field.getKey() + "' would create a conflict at '" + field.getKey()
                                    + "'");
                }
                set.put(field.getKey(), field.getValue());
            }
        }
        operators.put("$set", set);
        return operators;
    }

    /** {@code $bit}'s new value of the field at {@code path} ({@code BitNode}). */
    private static BsonValue bits(BsonDocument document, String path, BsonDocument ops) {
        BsonValue current = at(document, path);
        if (current == null) {
            current = new BsonInt32(0);
        } else if (!current.isInt32() && !current.isInt64()) {
            BsonValue id = document.get("_id");
            throw new Refusal(
                    2,
                    "BadValue",
                    "Cannot apply $bit to a value of non-integral type." + (id == null ? "" : "_id: " + id)
                            + " has the field " + path.substring(path.lastIndexOf('.') + 1)
                            + " of non-integer type " + typeName(current));
        }
        BsonValue value = current;
        for (Map.Entry<String, BsonValue> op : ops.entrySet()) {
            BsonValue operand = op.getValue();
            boolean wide = value.isInt64() || operand.isInt64();
            long a = value.asNumber().longValue();
            long b = operand.asNumber().longValue();
            long r = switch (op.getKey()) {
                case "and" -> a & b;
                case "or" -> a | b;
                default -> a ^ b;
            };
            value = wide ? new BsonInt64(r) : new BsonInt32((int) r);
        }
        return value;
    }

    /** The value at a dotted path, or null. */
    private static BsonValue at(BsonDocument document, String path) {
        BsonValue current = document;
        for (String part : path.split("\\.")) {
            if (current.isDocument()) {
                current = current.asDocument().get(part);
            } else if (current.isArray() && part.chars().allMatch(Character::isDigit)) {
                int i = Integer.parseInt(part);
                current = i < current.asArray().size() ? current.asArray().get(i) : null;
            } else {
                return null;
            }
            if (current == null) {
                return null;
            }
        }
        return current;
    }

    /** Runs the update's stages on one document, in the scratch engine's aggregation. */
    private BsonDocument pipeline(BsonArray stages, BsonDocument document) {
        BsonArray pipeline = new BsonArray();
        for (BsonValue stage : stages) {
            String name = stage.asDocument().getFirstKey();
            BsonValue body = stage.asDocument().get(name);
            pipeline.add(
                    switch (name) {
                        case "$set" -> new BsonDocument("$addFields", body);
                        case "$replaceWith" -> new BsonDocument("$replaceRoot", new BsonDocument("newRoot", body));
                        default -> stage;
                    });
        }
        return scratch.atomically(() -> {
            scratch.run(SCRATCH_DB, new BsonDocument("drop", new BsonString(SCRATCH_COLLECTION)));
            BsonDocument inserted = scratch.run(
                    SCRATCH_DB,
                    new BsonDocument("insert", new BsonString(SCRATCH_COLLECTION))
                            .append("documents", new BsonArray(List.of(document))));
            if (!ok(inserted)) {
                throw new Refusal(inserted);
            }
            BsonDocument reply = scratch.run(
                    SCRATCH_DB,
                    new BsonDocument("aggregate", new BsonString(SCRATCH_COLLECTION))
                            .append("pipeline", pipeline)
                            .append("cursor", new BsonDocument()));
            scratch.run(SCRATCH_DB, new BsonDocument("drop", new BsonString(SCRATCH_COLLECTION)));
            if (!ok(reply)) {
                throw new Refusal(reply);
            }
            BsonArray batch = reply.getDocument("cursor").getArray("firstBatch");
            return batch.isEmpty() ? new BsonDocument() : batch.get(0).asDocument();
        });
    }

    private static boolean ok(BsonDocument reply) {
        return reply.get("ok", new BsonInt32(0)).asNumber().doubleValue() == 1;
    }

    private static String typeName(BsonValue value) {
        return switch (value.getBsonType()) {
            case DOUBLE -> "double";
            case STRING -> "string";
            case DOCUMENT -> "object";
            case ARRAY -> "array";
            case BOOLEAN -> "bool";
            case INT32 -> "int";
            case INT64 -> "long";
            case DECIMAL128 -> "decimal";
            case NULL -> "null";
            case OBJECT_ID -> "objectId";
            case DATE_TIME -> "date";
            default -> value.getBsonType().name().toLowerCase(java.util.Locale.ROOT);
        };
    }

    /** A statement the server refuses: its write error. */
    private static final class Refusal extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final transient BsonDocument error;

        Refusal(int code, String codeName, String message) {
            this(new BsonDocument("code", new BsonInt32(code))
                    .append("codeName", new BsonString(codeName))
                    .append("errmsg", new BsonString(message)));
        }

        Refusal(BsonDocument reply) {
            super(reply.getString("errmsg", new BsonString("")).getValue(), null, false, false);
            this.error = new BsonDocument("code", reply.get("code", new BsonInt32(8)))
                    .append("codeName", reply.get("codeName", new BsonString("UnknownError")))
                    .append("errmsg", reply.get("errmsg", new BsonString("")));
        }

        BsonDocument error() {
            return error;
        }
    }
}
