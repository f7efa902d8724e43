package io.github.mongowriteguard.testkit.engine;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * What mongod checks of the document an update or a replacement produces before it stores it, where the engine behind
 * the emulator stores anything ({@code src/mongo/db/update/storage_validation.cpp}, {@code storageValid}, called from
 * the update nodes for the fields they change and from the replacement executor for the whole new document; servers
 * 5.0+, where only top-level field names are checked for {@code $}):
 * <ul>
 *   <li>nesting: an element deeper than {@code BSONDepth::getMaxDepthForUserStorage()} (180,
 *       {@code src/mongo/bson/bson_depth.h}), counted from 1 for a top-level field, is {@code Overflow} (15)
 *       "Document exceeds maximum nesting depth of 180";</li>
 *   <li>a top-level field name starting with {@code $} (other than a DBRef's {@code $ref, $id, $db}) in a replacement,
 *       or made top-level by an update operator ({@code {$set: {$z: 1}}}), is {@code DollarPrefixedFieldName} (52)
 *       "The dollar ($) prefixed field '$z' in '$z' is not allowed in the context of an update's replacement document.
 *       Consider using an aggregation pipeline with $replaceWith." ({@code validateDollarPrefixElement}).</li>
 * </ul>
 * The check runs where the server's does: only on a document the statement writes (a matched one, or an upsert's new
 * one; {@code $setOnInsert} only on an insert), so a statement that matches nothing and does not upsert succeeds. A
 * refused statement writes nothing and is a write error of its index ({@code update}; an ORDERED command stops there)
 * or the command's error ({@code findAndModify}). Not emulated: the checks of an upsert's query fields (SERVER-75880,
 * {@code _id} objects with {@code $} fields) and pipeline updates (their stages are the engine's).
 */
final class UpdateStorageValidation {
    private static final Set<String> DBREF_FIELDS = Set.of("$ref", "$id", "$db");
    /** Operators whose value lands at the field's path. */
    private static final Set<String> AT_PATH = Set.of("$set", "$setOnInsert", "$min", "$max", "$inc", "$mul");
    /** Operators whose value lands inside an array at the field's path. */
    private static final Set<String> IN_ARRAY = Set.of("$push", "$addToSet");
    /** Operators that create the field at their path (the others only change or remove what exists). */
    private static final Set<String> CREATING = Set.of(
            "$set", "$setOnInsert", "$min", "$max", "$inc", "$mul", "$push", "$addToSet", "$currentDate", "$bit");

    private UpdateStorageValidation() {}

    /**
     * Runs an {@code update} or {@code findAndModify} command: straight through {@code next} when no statement would
     * produce a document the server refuses, else statement by statement.
     *
     * @param command the command
     * @param matches whether a filter matches a stored document
     * @param next    runs a command the server would store (validators and the engine)
     */
    static BsonDocument run(BsonDocument command, Predicate<BsonDocument> matches, UnaryOperator<BsonDocument> next) {
        if (command.getFirstKey().equalsIgnoreCase("findAndModify")) {
            BsonDocument refusal = command.getBoolean("remove", BsonBoolean.FALSE)
                            .getValue()
                    ? null
                    : refusal(
                            command.getDocument("query", new BsonDocument()),
                            command.get("update"),
                            command.getBoolean("upsert", BsonBoolean.FALSE).getValue(),
                            matches);
            return refusal == null
                    ? next.apply(command)
                    : StorageEngine.error(
                            refusal.getInt32("code").getValue(),
                            refusal.getString("codeName").getValue(),
                            refusal.getString("errmsg").getValue());
        }
        BsonValue statements = command.get("updates");
        if (statements == null || !statements.isArray()) {
            return next.apply(command);
        }
        BsonArray all = statements.asArray();
        BsonDocument[] refusals = new BsonDocument[all.size()];
        boolean any = false;
        for (int i = 0; i < all.size(); i++) {
            if (all.get(i).isDocument()) {
                BsonDocument statement = all.get(i).asDocument();
                refusals[i] = refusal(
                        statement.getDocument("q", new BsonDocument()),
                        statement.get("u"),
                        statement.getBoolean("upsert", BsonBoolean.FALSE).getValue(),
                        matches);
                any |= refusals[i] != null;
            }
        }
        return any ? statementByStatement(command, all, refusals, next) : next.apply(command);
    }

    private static BsonDocument statementByStatement(
            BsonDocument command, BsonArray all, BsonDocument[] refusals, UnaryOperator<BsonDocument> next) {
        boolean ordered = command.getBoolean("ordered", BsonBoolean.TRUE).getValue();
        UpdateReplies replies = new UpdateReplies();
        for (int i = 0; i < all.size(); i++) {
            BsonDocument error;
            if (refusals[i] == null) {
                BsonDocument single = command.clone();
                single.put("updates", new BsonArray(List.of(all.get(i))));
                BsonDocument reply = next.apply(single);
                if (reply.get("ok", new BsonInt32(0)).asNumber().doubleValue() != 1) {
                    return reply;
                }
                error = replies.add(i, reply);
            } else {
                error = replies.error(i, refusals[i]);
            }
            if (error != null && ordered) {
                break;
            }
        }
        return replies.reply();
    }

    /** The write error of a statement whose written document the server refuses, or null. */
    static BsonDocument refusal(BsonDocument query, BsonValue update, boolean upsert, Predicate<BsonDocument> matches) {
        if (update == null || !update.isDocument() || update.asDocument().isEmpty()) {
            return null; // a pipeline, or nothing the engine would accept anyway
        }
        BsonDocument u = update.asDocument();
        BsonDocument refusal = u.getFirstKey().startsWith("$") ? operatorRefusal(u, false) : replacementRefusal(u);
        BsonDocument onInsert = u.getFirstKey().startsWith("$") && upsert ? operatorRefusal(u, true) : null;
        if (refusal == null && onInsert == null) {
            return null;
        }
        boolean matched = matches.test(query);
        if (matched) {
            return refusal;
        }
        return upsert ? (onInsert != null ? onInsert : refusal) : null;
    }

    private static BsonDocument replacementRefusal(BsonDocument replacement) {
        for (String name : replacement.keySet()) {
            if (name.startsWith("$") && !DBREF_FIELDS.contains(name)) {
                return dollarPrefixed(name);
            }
        }
        return elementDepth(replacement) > InsertValidation.MAX_USER_STORAGE_DEPTH ? overflow() : null;
    }

    /** The refusal of an operator update's changes; {@code $setOnInsert} counted only when {@code inserting}. */
    private static BsonDocument operatorRefusal(BsonDocument update, boolean inserting) {
        for (var operator : update.entrySet()) {
            String name = operator.getKey();
            if (!operator.getValue().isDocument()
                    || !CREATING.contains(name)
                    || (name.equals("$setOnInsert") && !inserting)) {
                continue;
            }
            for (var field : operator.getValue().asDocument().entrySet()) {
                String path = field.getKey();
                String top = path.contains(".") ? path.substring(0, path.indexOf('.')) : path;
                if (top.startsWith("$")) {
                    return dollarPrefixed(top);
                }
                int level = path.split("\\.", -1).length;
                BsonValue value = field.getValue();
                if (AT_PATH.contains(name)) {
                    level += elementDepth(value);
                } else if (IN_ARRAY.contains(name)) {
                    level += 1 + eachDepth(value);
                }
                if (level > InsertValidation.MAX_USER_STORAGE_DEPTH) {
                    return overflow();
                }
            }
        }
        return null;
    }

    /** The deepest element a {@code $push}/{@code $addToSet} value adds below its array: {@code $each}'s elements. */
    private static int eachDepth(BsonValue value) {
        if (value.isDocument() && value.asDocument().get("$each") instanceof BsonArray each) {
            int deepest = 0;
            for (BsonValue element : each) {
                deepest = Math.max(deepest, elementDepth(element));
            }
            return deepest;
        }
        return elementDepth(value);
    }

    /**
     * How many levels of elements {@code value} holds below itself, as {@code storageValid} counts recursion: 0 for a
     * scalar or an empty document or array, 1 for a flat one. Counted without recursion.
     */
    static int elementDepth(BsonValue value) {
        Iterator<BsonValue> top = children(value);
        if (top == null) {
            return 0;
        }
        ArrayDeque<Iterator<BsonValue>> open = new ArrayDeque<>();
        open.push(top);
        int deepest = 0;
        while (!open.isEmpty()) {
            Iterator<BsonValue> current = open.peek();
            if (!current.hasNext()) {
                open.pop();
                continue;
            }
            BsonValue element = current.next();
            deepest = Math.max(deepest, open.size());
            if (deepest > InsertValidation.MAX_USER_STORAGE_DEPTH) {
                return deepest; // past the limit: the rest does not matter
            }
            Iterator<BsonValue> inner = children(element);
            if (inner != null) {
                open.push(inner);
            }
        }
        return deepest;
    }

    private static Iterator<BsonValue> children(BsonValue value) {
        if (value.isDocument()) {
            return value.asDocument().values().iterator();
        }
        return value.isArray() ? value.asArray().iterator() : null;
    }

    private static BsonDocument overflow() {
        return error(
                15, "Overflow", "Document exceeds maximum nesting depth of " + InsertValidation.MAX_USER_STORAGE_DEPTH);
    }

    private static BsonDocument dollarPrefixed(String name) {
        return error(
                52,
                "DollarPrefixedFieldName",
                "The dollar ($) prefixed field '" + name + "' in '" + name + "' is not allowed in the context of an"
                        + " update's replacement document. Consider using an aggregation pipeline with $replaceWith.");
    }

    private static BsonDocument error(int code, String codeName, String message) {
        return new BsonDocument("code", new BsonInt32(code))
                .append("codeName", new BsonString(codeName))
                .append("errmsg", new BsonString(message));
    }
}
