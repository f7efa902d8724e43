package io.github.mongowriteguard.testkit.node;

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

import io.github.mongowriteguard.testkit.engine.StorageEngine;
import io.github.mongowriteguard.testkit.internal.Cursors;

/**
 * {@code currentOp} and the {@code $currentOp} aggregation stage. The operation documents are loaded into a
 * private scratch engine so that the filter (or the rest of the pipeline) has the full query language, then
 * dropped again.
 */
final class Introspection implements AutoCloseable {
    private static final String DATABASE = "testkit_introspection";
    private static final String INDEX = "__testkitIndex";
    private static final Set<String> NOT_FILTERS = Set.of("currentOp", "$all", "$ownOps", "$db", "lsid",
        "$clusterTime", "$readPreference", "comment", "$truncateOps", "maxTimeMS");

    private final StorageEngine scratch = new StorageEngine();
    private final AtomicLong collections = new AtomicLong();

    static boolean isCurrentOpPipeline(BsonDocument command) {
        BsonValue pipeline = command.get("pipeline");
        return pipeline != null && pipeline.isArray() && !pipeline.asArray().isEmpty()
            && pipeline.asArray().get(0).isDocument() && pipeline.asArray().get(0).asDocument().containsKey("$currentOp");
    }

    static boolean isListLocalSessionsPipeline(BsonDocument command) {
        BsonValue pipeline = command.get("pipeline");
        return pipeline != null && pipeline.isArray() && !pipeline.asArray().isEmpty()
            && pipeline.asArray().get(0).isDocument() && pipeline.asArray().get(0).asDocument().containsKey("$listLocalSessions");
    }

    /** {@code aggregate: 1} whose first stage is {@code $listLocalSessions}; the rest of the pipeline runs on the sessions. */
    BsonDocument listLocalSessionsAggregate(List<BsonDocument> sessions, String database, BsonDocument command) {
        return EmulatedNode.ok().append("cursor", new BsonDocument("id", new BsonInt64(0))
            .append("ns", new BsonString(database + ".$cmd.aggregate"))
            .append("firstBatch", new BsonArray(restOfPipeline(sessions, command.getArray("pipeline")))));
    }

    /** The {@code currentOp} command: {@code {inprog: [...]}}, filtered by the command's other fields. */
    BsonDocument currentOp(List<BsonDocument> ops, BsonDocument command) {
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
                for (BsonDocument match : runToList(new BsonDocument("find", new BsonString(collection)).append("filter", filter))) {
                    selected.add(ops.get(match.getInt32(INDEX).getValue()));
                }
            } finally {
                drop(collection);
            }
        }
        return EmulatedNode.ok().append("inprog", new BsonArray(selected));
    }

    /** {@code aggregate} on {@code admin} whose first stage is {@code $currentOp}. */
    BsonDocument currentOpAggregate(List<BsonDocument> ops, BsonDocument command) {
        List<BsonDocument> result = restOfPipeline(ops, command.getArray("pipeline"));
        return EmulatedNode.ok().append("cursor", new BsonDocument("id", new BsonInt64(0))
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
                result = runToList(new BsonDocument("aggregate", new BsonString(collection))
                    .append("pipeline", rest).append("cursor", new BsonDocument()));
                // Documents that came through unchanged but for the index get their original form back.
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
            scratch.run(DATABASE, new BsonDocument("insert", new BsonString(collection)).append("documents", documents));
        }
        return collection;
    }

    private void drop(String collection) {
        scratch.run(DATABASE, new BsonDocument("drop", new BsonString(collection)));
    }

    private List<BsonDocument> runToList(BsonDocument command) {
        BsonDocument reply = scratch.run(DATABASE, command);
        if (reply.getNumber("ok").doubleValue() != 1) {
            throw new IllegalArgumentException("currentOp filter failed: " + reply.getString("errmsg", new BsonString("")).getValue());
        }
        List<BsonDocument> documents = new ArrayList<>();
        Cursors.drain(scratch::run, DATABASE, reply).forEach(d -> documents.add(d.asDocument()));
        return documents;
    }

    /** A copy without field names the engine will not store ({@code $db}, {@code $clusterTime}, ...). */
    private static BsonDocument storable(BsonDocument document) {
        BsonDocument copy = new BsonDocument();
        for (Map.Entry<String, BsonValue> entry : document.entrySet()) {
            if (entry.getKey().startsWith("$")) {
                continue;
            }
            BsonValue value = entry.getValue();
            copy.put(entry.getKey(), value.isDocument() ? storable(value.asDocument()) : value);
        }
        return copy;
    }

    @Override
    public void close() {
        scratch.close();
    }
}
