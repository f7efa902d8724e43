package io.github.mongowriteguard.testkit.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonValue;

/**
 * The collection's validator on updates, replacements and upserts ({@code update} and {@code findAndModify}), as mongod
 * checks the document an update produces ({@code src/mongo/db/catalog/collection_write_path.cpp},
 * {@code collection_internal::updateDocument}; an upsert's new document through {@code insertDocument}): a document the
 * validator refuses is not stored and the statement is {@code DocumentValidationFailure} (121) with {@code errInfo}; at
 * {@code validationLevel: "moderate"} an update of a document that already failed the validator is allowed ("bad ->
 * bad is ok"). The engine applies each statement, then every document it changed is checked in the collection's
 * natural order; the first refused one and those after it are put back, as the server, which stops at the first
 * refusal of a multi-document update, would not have written them.
 */
final class UpdateValidation {
    private final UnaryOperator<BsonDocument> refusal;
    private final boolean moderate;
    private final Supplier<Map<BsonValue, BsonDocument>> collection;
    private final UnaryOperator<BsonDocument> engine;
    private final String name;

    /**
     * @param refusal    the validator: the write error of a document it refuses, or null
     * @param moderate   whether {@code validationLevel} is {@code moderate}
     * @param collection the collection's documents by {@code _id}, in natural order
     * @param engine     runs a command on the engine, unvalidated
     * @param name       the collection's name
     */
    UpdateValidation(
            UnaryOperator<BsonDocument> refusal,
            boolean moderate,
            Supplier<Map<BsonValue, BsonDocument>> collection,
            UnaryOperator<BsonDocument> engine,
            String name) {
        this.refusal = refusal;
        this.moderate = moderate;
        this.collection = collection;
        this.engine = engine;
        this.name = name;
    }

    /** Runs an {@code update} command statement by statement (the caller holds the engine's lock). */
    BsonDocument update(BsonDocument command) {
        BsonArray updates = command.getArray("updates", new BsonArray());
        boolean ordered = command.getBoolean("ordered", BsonBoolean.TRUE).getValue();
        UpdateReplies replies = new UpdateReplies();
        for (int i = 0; i < updates.size(); i++) {
            BsonDocument single = command.clone();
            single.put("updates", new BsonArray(List.of(updates.get(i))));
            Map<BsonValue, BsonDocument> before = collection.get();
            BsonDocument reply = engine.apply(single);
            if (reply.get("ok", new BsonInt32(0)).asNumber().doubleValue() != 1) {
                return reply;
            }
            boolean engineError =
                    !reply.getArray("writeErrors", new BsonArray()).isEmpty();
            BsonDocument refused = engineError ? null : refused(before);
            BsonDocument error = refused != null ? replies.error(i, refused) : replies.add(i, reply);
            if (error != null && ordered) {
                break;
            }
        }
        return replies.reply();
    }

    /**
     * Runs a {@code findAndModify} that updates, replaces or upserts: a refused document is the command's error
     * ({@code ok: 0}, code 121, {@code errInfo}), as mongod's findAndModify reports it.
     */
    BsonDocument findAndModify(BsonDocument command) {
        Map<BsonValue, BsonDocument> before = collection.get();
        BsonDocument reply = engine.apply(command);
        if (reply.get("ok", new BsonInt32(0)).asNumber().doubleValue() != 1) {
            return reply;
        }
        BsonDocument error = refused(before);
        if (error == null) {
            return reply;
        }
        BsonDocument failure = StorageEngine.error(
                error.getInt32("code").getValue(),
                error.getString("codeName").getValue(),
                error.getString("errmsg").getValue());
        if (error.containsKey("errInfo")) {
            failure.append("errInfo", error.get("errInfo"));
        }
        return failure;
    }

    /** The write error of the first changed document the validator refuses, with the changes from it on undone. */
    private BsonDocument refused(Map<BsonValue, BsonDocument> before) {
        List<BsonValue> changed = new ArrayList<>();
        BsonDocument error = null;
        for (Map.Entry<BsonValue, BsonDocument> entry : collection.get().entrySet()) {
            BsonDocument old = before.get(entry.getKey());
            if (entry.getValue().equals(old)) {
                continue;
            }
            if (error == null) {
                error = refusal.apply(entry.getValue());
                if (error != null && moderate && old != null && refusal.apply(old) != null) {
                    error = null; // moderate: bad -> bad is ok
                }
            }
            if (error != null) {
                changed.add(entry.getKey());
            }
        }
        for (BsonValue id : changed) {
            engine.apply(new BsonDocument("delete", new org.bson.BsonString(name))
                    .append(
                            "deletes",
                            new BsonArray(List.of(new BsonDocument("q", new BsonDocument("_id", id))
                                    .append("limit", new BsonInt32(1))))));
            BsonDocument old = before.get(id);
            if (old != null) {
                engine.apply(new BsonDocument("insert", new org.bson.BsonString(name))
                        .append("documents", new BsonArray(List.of(old))));
            }
        }
        return error;
    }
}
