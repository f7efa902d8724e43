package io.github.mongowriteguard.testkit.node;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;

/**
 * Change streams as far as the testkit emulates them: opening one ({@code aggregate} whose first stage is
 * {@code $changeStream}, on a collection, a database or, with {@code allChangesForCluster}, on {@code admin})
 * returns an open tailable cursor with a resume token, {@code getMore} on it waits for its await time and
 * returns no events, and {@code killCursors} closes it. The engine records no oplog, so no change events are
 * ever produced.
 */
final class ChangeStreams {
    private static final long DEFAULT_AWAIT_MS = 1000;

    private final AtomicLong ids = new AtomicLong(7_000_000_000L);
    private final Map<Long, String> open = new ConcurrentHashMap<>();

    static boolean isChangeStream(BsonDocument command) {
        BsonValue pipeline = command.get("pipeline");
        return command.getFirstKey().equals("aggregate")
                && pipeline != null
                && pipeline.isArray()
                && !pipeline.asArray().isEmpty()
                && pipeline.asArray().get(0).isDocument()
                && pipeline.asArray().get(0).asDocument().containsKey("$changeStream");
    }

    boolean owns(BsonDocument command) {
        BsonValue id = command.get(command.getFirstKey());
        return id != null && id.isNumber() && open.containsKey(id.asNumber().longValue());
    }

    /** The reply to an {@code aggregate} that opens a change stream. */
    BsonDocument open(String database, BsonDocument command) {
        BsonDocument stage = command.getArray("pipeline").get(0).asDocument().getDocument("$changeStream");
        BsonValue target = command.get("aggregate");
        boolean cluster = stage.getBoolean("allChangesForCluster", org.bson.BsonBoolean.FALSE)
                .getValue();
        if (cluster && !database.equals("admin")) {
            return error(
                    73,
                    "InvalidNamespace",
                    "$changeStream may not be opened on the internal " + database + " database");
        }
        if (!target.isString() && !(target.isNumber() && target.asNumber().intValue() == 1)) {
            return error(14, "TypeMismatch", "Invalid aggregate namespace");
        }
        String ns = target.isString() ? database + "." + target.asString().getValue() : database + ".$cmd.aggregate";
        long id = ids.incrementAndGet();
        open.put(id, ns);
        return EmulatedNode.ok()
                .append(
                        "cursor",
                        new BsonDocument("firstBatch", new BsonArray())
                                .append("postBatchResumeToken", resumeToken())
                                .append("id", new BsonInt64(id))
                                .append("ns", new BsonString(ns)))
                .append("operationTime", now());
    }

    /** {@code getMore} on a change stream cursor: waits {@code maxTimeMS} (default 1 s), then an empty batch. */
    BsonDocument getMore(OperationContext operation, BsonDocument command) {
        long id = command.getNumber("getMore").longValue();
        long awaitMs = command.containsKey("maxTimeMS")
                ? command.getNumber("maxTimeMS").longValue()
                : DEFAULT_AWAIT_MS;
        long until = System.nanoTime() + awaitMs * 1_000_000L;
        while (System.nanoTime() - until < 0 && open.containsKey(id)) {
            operation.checkForInterrupt();
            try {
                Thread.sleep(Math.min(10, Math.max(1, (until - System.nanoTime()) / 1_000_000L)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        String ns = open.get(id);
        if (ns == null) {
            return error(43, "CursorNotFound", "cursor id " + id + " not found");
        }
        return EmulatedNode.ok()
                .append(
                        "cursor",
                        new BsonDocument("nextBatch", new BsonArray())
                                .append("postBatchResumeToken", resumeToken())
                                .append("id", new BsonInt64(id))
                                .append("ns", new BsonString(ns)))
                .append("operationTime", now());
    }

    /** {@code killCursors}: closes the change streams among the ids, or returns null if none is one. */
    BsonDocument killCursors(BsonDocument command) {
        BsonArray killed = new BsonArray();
        BsonArray notFound = new BsonArray();
        boolean any = false;
        for (BsonValue id : command.getArray("cursors", new BsonArray())) {
            if (open.remove(id.asNumber().longValue()) != null) {
                killed.add(id);
                any = true;
            } else {
                notFound.add(id);
            }
        }
        if (!any) {
            return null;
        }
        return EmulatedNode.ok()
                .append("cursorsKilled", killed)
                .append("cursorsNotFound", notFound)
                .append("cursorsAlive", new BsonArray())
                .append("cursorsUnknown", new BsonArray());
    }

    boolean killsOwned(BsonDocument command) {
        return command.getArray("cursors", new BsonArray()).stream()
                .anyMatch(id -> id.isNumber() && open.containsKey(id.asNumber().longValue()));
    }

    private static BsonDocument resumeToken() {
        return new BsonDocument("_data", new BsonString(String.format("82%016X", System.currentTimeMillis())));
    }

    private static BsonTimestamp now() {
        return new BsonTimestamp((int) (System.currentTimeMillis() / 1000), 1);
    }

    private static BsonDocument error(int code, String name, String message) {
        return io.github.mongowriteguard.testkit.engine.StorageEngine.error(code, name, message);
    }
}
