package io.github.mongowriteguard.testkit.engine;

import io.github.mongowriteguard.testkit.server.ServerVersion;
import io.github.mongowriteguard.testkit.wire.Bson;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Commands on collections created with options the engine does not keep ({@link CollectionOptions}): their
 * {@code create}, {@code drop}, {@code listCollections} and {@code collStats}, and the reads and writes that capped
 * collections and default collations ({@link Collation}) change.
 *
 * <p>Capped collections, as mongod's catalog and WiredTiger record store keep them:
 * <ul>
 *   <li>a document larger than the collection's size is {@code BadValue} (2) "object to insert exceeds cappedMaxSize"
 *       ({@code src/mongo/db/storage/wiredtiger/wiredtiger_record_store.cpp}); after each insert the oldest documents
 *       (natural order, which is insertion order) are removed while there are more than {@code max} or their BSON
 *       sizes add up to more than {@code size} ({@code _cappedDeleteAsNeeded});</li>
 *   <li>up to 4.4 a delete is the statement's write error {@code IllegalOperation} (20) "cannot remove from a capped
 *       collection: &lt;ns&gt;" ({@code src/mongo/db/exec/delete.cpp} / 4.4 {@code parsed_delete.cpp}), from 5.0
 *       deletes run (only a multi-document transaction refuses them);</li>
 *   <li>before 6.0 (feature compatibility 5.3) an update that changes a document's size is
 *       {@code CannotGrowDocumentInCappedNamespace} (10003) "Cannot change the size of a document in a capped
 *       collection: &lt;old&gt; != &lt;new&gt;" ({@code src/mongo/db/catalog/collection_impl.cpp}
 *       {@code updateDocument}), the document left as it was; from 6.0 it is allowed;</li>
 *   <li>writes to a capped collection inside a multi-document transaction are refused by the emulator (not
 *       emulated).</li>
 * </ul>
 * A statement of an update or delete runs as its own engine command here; a multi-document update refused for one
 * document's growth leaves every document of that statement as it was (the server keeps those it wrote before).
 */
final class OptionedCollections {
    private static final Set<String> COLLATED_STAGES =
            Set.of("$match", "$project", "$addFields", "$set", "$unset", "$limit", "$skip", "$count");

    private final CollectionOptions options = new CollectionOptions();
    private final StorageEngine engine;
    /** The engine's command path past this class (validation, computed updates, the engine). */
    private final BiFunction<String, BsonDocument, BsonDocument> ordinary;
    /** The engine itself, with no checks: for the emulator's own bookkeeping writes. */
    private final BiFunction<String, BsonDocument, BsonDocument> plain;

    OptionedCollections(
            StorageEngine engine,
            BiFunction<String, BsonDocument, BsonDocument> ordinary,
            BiFunction<String, BsonDocument, BsonDocument> plain) {
        this.engine = engine;
        this.ordinary = ordinary;
        this.plain = plain;
    }

    void copyTo(OptionedCollections other) {
        options.copyTo(other.options);
    }

    /**
     * Runs {@code command} when it concerns the options kept here.
     *
     * @return the reply, or null when the command is none of this class's
     */
    BsonDocument handle(String database, BsonDocument command, ServerVersion version, boolean inTransaction) {
        try {
            return engine.atomically(() -> dispatch(database, command, version, inTransaction));
        } catch (CollectionOptions.EngineRefusal refusal) {
            return refusal.reply();
        }
    }

    private BsonDocument dispatch(String database, BsonDocument command, ServerVersion version, boolean inTxn) {
        String name = command.getFirstKey();
        String namespace = CollectionOptions.namespace(database, command);
        switch (name) {
            case "create" -> {
                CollectionOptions.Options parsed = CollectionOptions.parse(command);
                BsonDocument reply = ordinary.apply(database, CollectionOptions.plain(command));
                if (ok(reply)) {
                    options.remember(namespace, parsed);
                }
                return reply;
            }
            case "drop" -> {
                BsonDocument reply = ordinary.apply(database, command);
                options.forget(namespace);
                return reply;
            }
            case "dropDatabase" -> {
                BsonDocument reply = ordinary.apply(database, command);
                options.forgetDatabase(database);
                return reply;
            }
            case "listCollections" -> {
                BsonDocument reply = ordinary.apply(database, command);
                options.report(database, reply);
                return listed(command, reply);
            }
            case "collStats" -> {
                BsonDocument reply = ordinary.apply(database, command);
                options.reportStats(namespace, reply);
                return reply;
            }
            default -> {
                // the commands below, on a collection with options
            }
        }
        if (!command.get(name).isString() || options.of(namespace) == null) {
            return null;
        }
        String collection = command.getString(name).getValue();
        CollectionOptions.Capped capped = options.of(namespace).capped();
        Collation collation = options.collation(namespace);
        if (capped != null
                && inTxn
                && Set.of("insert", "update", "delete", "findAndModify").contains(name)) {
            throw CollectionOptions.unemulated("writes to a capped collection inside a multi-document transaction");
        }
        return switch (name) {
            case "insert" -> insert(database, collection, command, capped, collation);
            case "update" ->
                update(database, collection, collated(database, command, "updates", collation), capped, version);
            case "delete" ->
                delete(database, collection, collated(database, command, "deletes", collation), capped, version);
            case "findAndModify", "findandmodify" ->
                findAndModify(
                        database,
                        collection,
                        collatedFindAndModify(database, collection, command, collation),
                        capped,
                        version);
            case "find", "count", "distinct" ->
                ordinary.apply(database, collatedRead(database, collection, command, collation));
            case "aggregate" -> ordinary.apply(database, collatedAggregate(command, collation));
            case "createIndexes" -> {
                refuseCollatedUniqueIndexes(command, collation);
                yield ordinary.apply(database, command);
            }
            default -> null;
        };
    }

    /**
     * The listing as {@code listCollections} answers it: only the collections its {@code filter} matches (on
     * {@code name}, {@code type}, {@code options}, ...), only {@code name} and {@code type} with {@code nameOnly}
     * ({@code src/mongo/db/commands/list_collections.cpp}); the engine lists every collection whatever is asked.
     */
    private BsonDocument listed(BsonDocument command, BsonDocument reply) {
        if (!ok(reply) || !reply.containsKey("cursor")) {
            return reply;
        }
        BsonDocument cursor = reply.getDocument("cursor");
        List<BsonDocument> all = new ArrayList<>();
        cursor.getArray("firstBatch").forEach(entry -> all.add(entry.asDocument()));
        List<BsonDocument> entries =
                command.isDocument("filter") && !command.getDocument("filter").isEmpty()
                        ? engine.matching(all, command.getDocument("filter"))
                        : all;
        BsonArray batch = new BsonArray();
        boolean nameOnly = command.getBoolean("nameOnly", BsonBoolean.FALSE).getValue();
        for (BsonDocument entry : entries) {
            batch.add(nameOnly ? new BsonDocument("name", entry.get("name")).append("type", entry.get("type")) : entry);
        }
        cursor.put("firstBatch", batch);
        return reply;
    }

    // ---- collation ----

    /** An {@code update} or {@code delete} whose statements' filters (and array filters) run under the collation. */
    private BsonDocument collated(String database, BsonDocument command, String field, Collation collation) {
        if (collation == null) {
            return command;
        }
        BsonArray statements = new BsonArray();
        for (BsonValue value : command.getArray(field, new BsonArray())) {
            BsonDocument statement = value.asDocument().clone();
            if (!statement.containsKey("collation")) {
                BsonDocument query = statement.getDocument("q", new BsonDocument());
                BsonDocument translated = collation.filter(query);
                boolean upsert =
                        statement.getBoolean("upsert", BsonBoolean.FALSE).getValue();
                String collection = command.getString(command.getFirstKey()).getValue();
                // an upsert that matches nothing inserts the document its query's equalities seed: the query as
                // given (nothing matches it binary either, as binary equality implies the collation's)
                if (!upsert
                        || !engine.matchingIds(database, collection, translated).isEmpty()) {
                    statement.put("q", translated);
                }
                if (statement.containsKey("arrayFilters")) {
                    BsonArray filters = new BsonArray();
                    statement.getArray("arrayFilters").forEach(f -> filters.add(collation.filter(f.asDocument())));
                    statement.put("arrayFilters", filters);
                }
                if (statement.containsKey("sort")) {
                    throw Collation.unemulated("a sort");
                }
            }
            statements.add(statement);
        }
        BsonDocument collated = command.clone();
        collated.put(field, statements);
        return collated;
    }

    private BsonDocument collatedFindAndModify(
            String database, String collection, BsonDocument command, Collation collation) {
        if (collation == null || command.containsKey("collation")) {
            return command;
        }
        BsonDocument collated = command.clone();
        BsonDocument query = command.getDocument("query", new BsonDocument());
        BsonDocument translated = collation.filter(query);
        if (command.containsKey("sort")) {
            refuseStringSort(database, collection, translated, command.getDocument("sort"));
        }
        if (!command.getBoolean("upsert", BsonBoolean.FALSE).getValue()
                || !engine.matchingIds(database, collection, translated).isEmpty()) {
            collated.put("query", translated);
        }
        return collated;
    }

    private BsonDocument collatedRead(String database, String collection, BsonDocument command, Collation collation) {
        if (collation == null || command.containsKey("collation")) {
            return command;
        }
        String filterField = command.getFirstKey().equals("find") ? "filter" : "query";
        BsonDocument collated = command.clone();
        BsonDocument translated = collation.filter(command.getDocument(filterField, new BsonDocument()));
        collated.put(filterField, translated);
        if (command.containsKey("sort") && !command.getDocument("sort").isEmpty()) {
            refuseStringSort(database, collection, translated, command.getDocument("sort"));
        }
        if (command.getFirstKey().equals("distinct") && collation.caseInsensitive()) {
            String key = command.getString("key", new BsonString("")).getValue();
            refuseStrings(database, collection, translated, List.of(key), "distinct over strings");
        }
        return collated;
    }

    private BsonDocument collatedAggregate(BsonDocument command, Collation collation) {
        if (collation == null || command.containsKey("collation")) {
            return command;
        }
        BsonArray stages = new BsonArray();
        for (BsonValue value : command.getArray("pipeline", new BsonArray())) {
            BsonDocument stage = value.asDocument();
            String stageName = stage.getFirstKey();
            if (stageName.equals("$group")
                    && !constant(stage.getDocument("$group").get("_id"))) {
                throw Collation.unemulated("$group by values that may be strings");
            }
            if (!COLLATED_STAGES.contains(stageName) && !stageName.equals("$group")) {
                throw Collation.unemulated("the aggregation stage " + stageName);
            }
            if (stageName.equals("$match")) {
                stages.add(new BsonDocument("$match", collation.filter(stage.getDocument("$match"))));
            } else {
                refuseComparisons(stage);
                stages.add(stage);
            }
        }
        BsonDocument collated = command.clone();
        collated.put("pipeline", stages);
        return collated;
    }

    /** A group key that is one value for every document (as {@code countDocuments}' {@code {_id: 1}}). */
    private static boolean constant(BsonValue key) {
        return key == null || key.isNull() || key.isNumber() || key.isBoolean();
    }

    private static final Set<String> COMPARISONS = Set.of(
            "$eq",
            "$ne",
            "$gt",
            "$gte",
            "$lt",
            "$lte",
            "$cmp",
            "$in",
            "$indexOfArray",
            "$setEquals",
            "$setIntersection",
            "$setUnion",
            "$setDifference",
            "$setIsSubset",
            "$max",
            "$min");

    private static void refuseComparisons(BsonValue value) {
        if (value.isDocument()) {
            for (Map.Entry<String, BsonValue> entry : value.asDocument().entrySet()) {
                if (COMPARISONS.contains(entry.getKey())) {
                    throw Collation.unemulated("the expression " + entry.getKey());
                }
                refuseComparisons(entry.getValue());
            }
        } else if (value.isArray()) {
            value.asArray().forEach(OptionedCollections::refuseComparisons);
        }
    }

    private void refuseStringSort(String database, String collection, BsonDocument filter, BsonDocument sort) {
        refuseStrings(database, collection, filter, new ArrayList<>(sort.keySet()), "a sort on strings");
    }

    /** Refuses when a document {@code filter} matches holds a string at one of {@code paths}. */
    private void refuseStrings(
            String database, String collection, BsonDocument filter, List<String> paths, String what) {
        Map<BsonValue, BsonDocument> documents = engine.documents(database, collection);
        for (BsonValue id : engine.matchingIds(database, collection, filter)) {
            BsonDocument document = documents.get(id);
            for (String path : paths) {
                if (document != null && holdsStringAt(document, path.split("\\."), 0)) {
                    throw Collation.unemulated(what);
                }
            }
        }
    }

    private static boolean holdsStringAt(BsonValue value, String[] path, int at) {
        if (at == path.length) {
            return Collation.holdsString(value);
        }
        if (value.isDocument()) {
            BsonValue next = value.asDocument().get(path[at]);
            return next != null && holdsStringAt(next, path, at + 1);
        }
        if (value.isArray()) {
            return value.asArray().stream().anyMatch(element -> holdsStringAt(element, path, at));
        }
        return false;
    }

    /**
     * A unique index without its own collation inherits the collection's ({@code src/mongo/db/catalog/
     * index_key_validate.cpp}); the engine's unique check is binary, so under a case-insensitive collation it would
     * accept keys the server refuses.
     */
    private static void refuseCollatedUniqueIndexes(BsonDocument command, Collation collation) {
        if (collation == null || !collation.caseInsensitive()) {
            return;
        }
        for (BsonValue index : command.getArray("indexes", new BsonArray())) {
            BsonDocument spec = index.asDocument();
            if (spec.getBoolean("unique", BsonBoolean.FALSE).getValue() && !spec.containsKey("collation")) {
                throw Collation.unemulated("a unique index (its uniqueness would compare strings case-insensitively)");
            }
        }
    }

    // ---- writes ----

    private BsonDocument insert(
            String database,
            String collection,
            BsonDocument command,
            CollectionOptions.Capped capped,
            Collation collation) {
        boolean ordered = command.getBoolean("ordered", BsonBoolean.TRUE).getValue();
        BsonArray documents = command.getArray("documents", new BsonArray());
        int n = 0;
        BsonArray writeErrors = new BsonArray();
        for (int i = 0; i < documents.size(); i++) {
            BsonDocument document = documents.get(i).asDocument();
            BsonDocument error = null;
            if (capped != null && Bson.encode(document).length > capped.size()) {
                error = writeError(2, "BadValue", "object to insert exceeds cappedMaxSize");
            } else if (collation != null
                    && collation.caseInsensitive()
                    && document.containsKey("_id")
                    && Collation.holdsString(document.get("_id"))
                    && !engine.matchingIds(
                                    database,
                                    collection,
                                    collation.filter(new BsonDocument("_id", document.get("_id"))))
                            .isEmpty()) {
                error = writeError(
                                11000,
                                "DuplicateKey",
                                "E11000 duplicate key error collection: " + database + "." + collection
                                        + " index: _id_ dup key: { _id: "
                                        + document.get("_id").toString() + " }")
                        .append("keyPattern", new BsonDocument("_id", new BsonInt32(1)))
                        .append("keyValue", new BsonDocument("_id", document.get("_id")));
            } else {
                BsonDocument single = command.clone();
                single.put("documents", new BsonArray(List.of(document)));
                BsonDocument reply = ordinary.apply(database, single);
                if (!ok(reply)) {
                    return reply;
                }
                BsonArray errors = reply.getArray("writeErrors", new BsonArray());
                if (errors.isEmpty()) {
                    n += reply.getNumber("n").intValue();
                    if (capped != null) {
                        evict(database, collection, capped);
                    }
                } else {
                    error = errors.get(0).asDocument().clone();
                    error.remove("index");
                }
            }
            if (error != null) {
                BsonDocument indexed = new BsonDocument("index", new BsonInt32(i));
                indexed.putAll(error);
                writeErrors.add(indexed);
                if (ordered) {
                    break;
                }
            }
        }
        BsonDocument reply = new BsonDocument("n", new BsonInt32(n));
        if (!writeErrors.isEmpty()) {
            reply.put("writeErrors", writeErrors);
        }
        return reply.append("ok", new BsonDouble(1));
    }

    private BsonDocument update(
            String database,
            String collection,
            BsonDocument command,
            CollectionOptions.Capped capped,
            ServerVersion version) {
        if (capped == null) {
            return ordinary.apply(database, command);
        }
        BsonArray statements = command.getArray("updates", new BsonArray());
        boolean ordered = command.getBoolean("ordered", BsonBoolean.TRUE).getValue();
        UpdateReplies replies = new UpdateReplies();
        for (int i = 0; i < statements.size(); i++) {
            Map<BsonValue, BsonDocument> before = engine.documents(database, collection);
            BsonDocument single = command.clone();
            single.put("updates", new BsonArray(List.of(statements.get(i))));
            BsonDocument reply = ordinary.apply(database, single);
            if (!ok(reply)) {
                return reply;
            }
            BsonDocument growth =
                    reply.containsKey("writeErrors") ? null : refusedGrowth(database, collection, before, version);
            BsonDocument error = growth != null ? replies.error(i, growth) : replies.add(i, reply);
            evict(database, collection, capped);
            if (error != null && ordered) {
                break;
            }
        }
        return replies.reply();
    }

    /**
     * Before 6.0, the write error of an update that changed a document's size, after putting the statement's documents
     * back as they were; null when no size changed.
     */
    private BsonDocument refusedGrowth(
            String database, String collection, Map<BsonValue, BsonDocument> before, ServerVersion version) {
        if (version.atLeast(ServerVersion.V6_0)) {
            return null;
        }
        Map<BsonValue, BsonDocument> after = engine.documents(database, collection);
        BsonDocument error = null;
        for (Map.Entry<BsonValue, BsonDocument> entry : before.entrySet()) {
            BsonDocument now = after.get(entry.getKey());
            if (now == null || now.equals(entry.getValue())) {
                continue;
            }
            int oldSize = Bson.encode(entry.getValue()).length;
            int newSize = Bson.encode(now).length;
            if (oldSize != newSize && error == null) {
                error = writeError(
                        10003,
                        "CannotGrowDocumentInCappedNamespace",
                        "Cannot change the size of a document in a capped collection: " + oldSize + " != " + newSize);
            }
        }
        if (error != null) {
            for (Map.Entry<BsonValue, BsonDocument> entry : before.entrySet()) {
                BsonDocument now = after.get(entry.getKey());
                if (now != null && !now.equals(entry.getValue())) {
                    plain.apply(
                            database,
                            new BsonDocument("update", new BsonString(collection))
                                    .append(
                                            "updates",
                                            new BsonArray(List.of(
                                                    new BsonDocument("q", new BsonDocument("_id", entry.getKey()))
                                                            .append("u", entry.getValue())))));
                }
            }
        }
        return error;
    }

    private BsonDocument delete(
            String database,
            String collection,
            BsonDocument command,
            CollectionOptions.Capped capped,
            ServerVersion version) {
        if (capped == null) {
            return ordinary.apply(database, command);
        }
        if (!version.atLeast(ServerVersion.V5_0)) {
            boolean ordered = command.getBoolean("ordered", BsonBoolean.TRUE).getValue();
            BsonArray writeErrors = new BsonArray();
            int statements = command.getArray("deletes", new BsonArray()).size();
            for (int i = 0; i < (ordered ? Math.min(1, statements) : statements); i++) {
                BsonDocument indexed = new BsonDocument("index", new BsonInt32(i));
                indexed.putAll(cappedDeleteRefusal(database, collection));
                writeErrors.add(indexed);
            }
            return new BsonDocument("n", new BsonInt32(0))
                    .append("writeErrors", writeErrors)
                    .append("ok", new BsonDouble(1));
        }
        BsonDocument reply = ordinary.apply(database, command);
        compact(database, collection);
        return reply;
    }

    private BsonDocument findAndModify(
            String database,
            String collection,
            BsonDocument command,
            CollectionOptions.Capped capped,
            ServerVersion version) {
        if (capped == null) {
            return ordinary.apply(database, command);
        }
        if (command.getBoolean("remove", BsonBoolean.FALSE).getValue()) {
            if (!version.atLeast(ServerVersion.V5_0)) {
                BsonDocument refusal = cappedDeleteRefusal(database, collection);
                return StorageEngine.error(
                        20, "IllegalOperation", refusal.getString("errmsg").getValue());
            }
            BsonDocument reply = ordinary.apply(database, command);
            compact(database, collection);
            return reply;
        }
        Map<BsonValue, BsonDocument> before = engine.documents(database, collection);
        BsonDocument reply = ordinary.apply(database, command);
        if (ok(reply)) {
            BsonDocument growth = refusedGrowth(database, collection, before, version);
            if (growth != null) {
                return StorageEngine.error(
                        10003,
                        "CannotGrowDocumentInCappedNamespace",
                        growth.getString("errmsg").getValue());
            }
            evict(database, collection, capped);
        }
        return reply;
    }

    private static BsonDocument cappedDeleteRefusal(String database, String collection) {
        return writeError(
                20, "IllegalOperation", "cannot remove from a capped collection: " + database + "." + collection);
    }

    /** Removes the oldest documents while the collection holds more than its limits allow. */
    private void evict(String database, String collection, CollectionOptions.Capped capped) {
        List<Map.Entry<BsonValue, BsonDocument>> documents =
                new ArrayList<>(engine.documents(database, collection).entrySet());
        long bytes = 0;
        for (Map.Entry<BsonValue, BsonDocument> entry : documents) {
            bytes += Bson.encode(entry.getValue()).length;
        }
        int count = documents.size();
        int oldest = 0;
        while (oldest < documents.size() - 1 && (count > capped.maxDocuments() || bytes > capped.size())) {
            Map.Entry<BsonValue, BsonDocument> entry = documents.get(oldest++);
            plain.apply(
                    database,
                    new BsonDocument("delete", new BsonString(collection))
                            .append(
                                    "deletes",
                                    new BsonArray(List.of(new BsonDocument("q", new BsonDocument("_id", entry.getKey()))
                                            .append("limit", new BsonInt32(1))))));
            count--;
            bytes -= Bson.encode(entry.getValue()).length;
        }
        if (oldest > 0) {
            compact(database, collection);
        }
    }

    /**
     * Rebuilds the collection with its documents in their natural order: the engine reuses a removed document's place
     * for the next insert, which would put it before older documents, where a capped collection keeps insertion order.
     */
    private void compact(String database, String collection) {
        List<BsonDocument> documents =
                new ArrayList<>(engine.documents(database, collection).values());
        BsonDocument listed = plain.apply(database, new BsonDocument("listIndexes", new BsonString(collection)));
        BsonArray indexes = new BsonArray();
        if (ok(listed)) {
            for (BsonValue index : listed.getDocument("cursor").getArray("firstBatch")) {
                BsonDocument spec = index.asDocument().clone();
                spec.remove("v");
                spec.remove("ns");
                if (!spec.getString("name", new BsonString("")).getValue().equals("_id_")) {
                    indexes.add(spec);
                }
            }
        }
        plain.apply(database, new BsonDocument("drop", new BsonString(collection)));
        plain.apply(database, new BsonDocument("create", new BsonString(collection)));
        if (!indexes.isEmpty()) {
            plain.apply(
                    database, new BsonDocument("createIndexes", new BsonString(collection)).append("indexes", indexes));
        }
        if (!documents.isEmpty()) {
            plain.apply(
                    database,
                    new BsonDocument("insert", new BsonString(collection))
                            .append("documents", new BsonArray(new ArrayList<>(documents))));
        }
    }

    private static BsonDocument writeError(int code, String codeName, String message) {
        return new BsonDocument("code", new BsonInt32(code))
                .append("codeName", new BsonString(codeName))
                .append("errmsg", new BsonString(message));
    }

    private static boolean ok(BsonDocument reply) {
        return reply.get("ok", new BsonInt32(0)).asNumber().doubleValue() == 1;
    }
}
