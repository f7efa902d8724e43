package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.engine.StorageEngine;
import io.github.mongowriteguard.testkit.internal.Cursors;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * {@code currentOp} and the {@code $currentOp} aggregation stage. The operation documents are loaded into a
 * private scratch engine so that the filter (or the rest of the pipeline) has the full query language, then
 * dropped again.
 */
final class Introspection implements AutoCloseable {
    private static final String DATABASE = "testkit_introspection";
    private static final String INDEX = "__testkitIndex";
    /** The command's own parameters and the generic arguments, which {@code currentOp} does not use as filters. */
    private static final Set<String> NOT_FILTERS = Set.of(
            "currentOp",
            "$all",
            "$ownOps",
            "$db",
            "lsid",
            "$clusterTime",
            "$readPreference",
            "comment",
            "$truncateOps",
            "maxTimeMS",
            "readConcern",
            "writeConcern",
            "apiVersion",
            "apiStrict",
            "apiDeprecationErrors",
            "txnNumber",
            "autocommit",
            "$audit",
            "$client");
    /** The options the {@code $currentOp} stage accepts (4.4). */
    static final Set<String> CURRENT_OP_OPTIONS = Set.of(
            "allUsers", "idleConnections", "idleSessions", "localOps", "truncateOps", "idleCursors", "backtrace");

    private final StorageEngine scratch = StorageEngine.scratch();
    private final AtomicLong collections = new AtomicLong();

    static boolean isCurrentOpPipeline(BsonDocument command) {
        BsonValue pipeline = command.get("pipeline");
        return pipeline != null
                && pipeline.isArray()
                && !pipeline.asArray().isEmpty()
                && pipeline.asArray().get(0).isDocument()
                && pipeline.asArray().get(0).asDocument().containsKey("$currentOp");
    }

    static boolean isListLocalSessionsPipeline(BsonDocument command) {
        BsonValue pipeline = command.get("pipeline");
        return pipeline != null
                && pipeline.isArray()
                && !pipeline.asArray().isEmpty()
                && pipeline.asArray().get(0).isDocument()
                && pipeline.asArray().get(0).asDocument().containsKey("$listLocalSessions");
    }

    /** {@code aggregate: 1} whose first stage is {@code $listLocalSessions}; the rest of the pipeline runs on the sessions. */
    BsonDocument listLocalSessionsAggregate(List<BsonDocument> sessions, String database, BsonDocument command) {
        return EmulatedNode.ok()
                .append(
                        "cursor",
                        new BsonDocument("id", new BsonInt64(0))
                                .append("ns", new BsonString(database + ".$cmd.aggregate"))
                                .append(
                                        "firstBatch",
                                        new BsonArray(restOfPipeline(sessions, command.getArray("pipeline")))));
    }

    /**
     * The {@code currentOp} command: {@code {inprog: [...]}}, filtered by the command's other fields (applied to
     * the documents as shown, so after truncation); on mongos sorted by {@code shard}.
     */
    BsonDocument currentOp(List<BsonDocument> ops, BsonDocument command, boolean sortByShard) {
        BsonDocument filter = new BsonDocument();
        for (Map.Entry<String, BsonValue> entry : command.entrySet()) {
            if (!NOT_FILTERS.contains(entry.getKey())) {
                filter.put(entry.getKey(), entry.getValue());
            }
        }
        List<BsonDocument> selected;
        if (filter.isEmpty()) {
            selected = ops;
        } else {
            selected = new ArrayList<>();
            String collection = load(ops);
            try {
                for (BsonDocument match :
                        runToList(new BsonDocument("find", new BsonString(collection)).append("filter", filter))) {
                    selected.add(ops.get(match.getInt32(INDEX).getValue()));
                }
            } finally {
                drop(collection);
            }
        }
        if (sortByShard) {
            selected = new ArrayList<>(selected);
            selected.sort(java.util.Comparator.comparing(
                    op -> op.getString("shard", new BsonString("")).getValue()));
        }
        return EmulatedNode.ok().append("inprog", new BsonArray(selected));
    }

    /** {@code aggregate} on {@code admin} whose first stage is {@code $currentOp}. */
    BsonDocument currentOpAggregate(List<BsonDocument> ops, BsonDocument command) {
        List<BsonDocument> result = restOfPipeline(ops, command.getArray("pipeline"));
        return EmulatedNode.ok()
                .append(
                        "cursor",
                        new BsonDocument("id", new BsonInt64(0))
                                .append("ns", new BsonString("admin.$cmd.aggregate"))
                                .append("firstBatch", new BsonArray(result)));
    }

    /** Runs the stages after the first (a source stage the node answers) on {@code documents}. */
    private List<BsonDocument> restOfPipeline(List<BsonDocument> ops, BsonArray pipeline) {
        List<BsonDocument> result;
        if (pipeline.size() == 1) {
            result = ops;
        } else {
            String collection = load(ops);
            try {
                BsonArray rest = new BsonArray(new ArrayList<>(pipeline.subList(1, pipeline.size())));
                rest.add(new BsonDocument("$unset", new BsonString(INDEX)));
                result = new ArrayList<>();
                for (BsonDocument document : runToList(new BsonDocument("aggregate", new BsonString(collection))
                        .append("pipeline", rest)
                        .append("cursor", new BsonDocument()))) {
                    result.add(restored(document));
                }
            } finally {
                drop(collection);
            }
        }
        return result;
    }

    private String load(List<BsonDocument> ops) {
        String collection = "ops" + collections.incrementAndGet();
        BsonArray documents = new BsonArray();
        for (int i = 0; i < ops.size(); i++) {
            BsonDocument stored = storable(ops.get(i));
            stored.put(INDEX, new BsonInt32(i));
            documents.add(stored);
        }
        scratch.run(DATABASE, new BsonDocument("create", new BsonString(collection)));
        if (!documents.isEmpty()) {
            scratch.run(
                    DATABASE, new BsonDocument("insert", new BsonString(collection)).append("documents", documents));
        }
        return collection;
    }

    private void drop(String collection) {
        scratch.run(DATABASE, new BsonDocument("drop", new BsonString(collection)));
    }

    private List<BsonDocument> runToList(BsonDocument command) {
        BsonDocument reply = scratch.run(DATABASE, command);
        if (reply.getNumber("ok").doubleValue() != 1) {
            throw new IllegalArgumentException("currentOp filter failed: "
                    + reply.getString("errmsg", new BsonString("")).getValue());
        }
        List<BsonDocument> documents = new ArrayList<>();
        Cursors.drain(scratch::run, DATABASE, reply).forEach(d -> documents.add(d.asDocument()));
        return documents;
    }

    /** Field names the engine will not store ({@code $db}, {@code $truncated}, ...) are renamed with this prefix. */
    private static final String DOLLAR = "__testkitDollar_";

    /** A copy the engine will store: {@code $}-prefixed field names renamed ({@link #restored} undoes it). */
    private static BsonDocument storable(BsonDocument document) {
        BsonDocument copy = new BsonDocument();
        for (Map.Entry<String, BsonValue> entry : document.entrySet()) {
            String key =
                    entry.getKey().startsWith("$") ? DOLLAR + entry.getKey().substring(1) : entry.getKey();
            copy.put(key, renamed(entry.getValue(), true));
        }
        return copy;
    }

    /** A document out of the scratch engine with its {@code $}-prefixed field names back. */
    private static BsonDocument restored(BsonDocument document) {
        BsonDocument copy = new BsonDocument();
        for (Map.Entry<String, BsonValue> entry : document.entrySet()) {
            String key = entry.getKey().startsWith(DOLLAR)
                    ? "$" + entry.getKey().substring(DOLLAR.length())
                    : entry.getKey();
            copy.put(key, renamed(entry.getValue(), false));
        }
        return copy;
    }

    private static BsonValue renamed(BsonValue value, boolean toStorable) {
        if (value.isDocument()) {
            return toStorable ? storable(value.asDocument()) : restored(value.asDocument());
        }
        if (value.isArray()) {
            BsonArray array = new BsonArray();
            value.asArray().forEach(v -> array.add(renamed(v, toStorable)));
            return array;
        }
        return value;
    }

    @Override
    public void close() {
        scratch.close();
    }
}
