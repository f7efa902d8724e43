package io.github.mongowriteguard.testkit.replication;

import io.github.mongowriteguard.testkit.engine.StorageEngine;
import io.github.mongowriteguard.testkit.internal.Cursors;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Runs a write command on a primary's storage engine and says what it changed, as oplog operations: inserted
 * documents, documents as an update or replacement left them, deleted {@code _id}s, catalog commands. mongod logs a
 * write the same way, as its effect on each document, which is what lets a secondary apply it (and apply it again)
 * with the same result ({@code src/mongo/db/op_observer_impl.cpp}, {@code src/mongo/db/repl/oplog.cpp}
 * {@code applyOperation_inlock}). The engine does not report which documents an update touched, so the documents a
 * statement matches are looked up first (with the statement's filter, one or all) and read back by {@code _id} after.
 *
 * <p>The caller holds the member's apply lock, so nothing else changes the engine between the look-up and the write.
 */
final class LoggedWrites {
    private static final BsonDocument ID_ONLY = new BsonDocument("_id", new BsonInt32(1));

    private LoggedWrites() {}

    /**
     * Runs {@code command} (already stripped of session and deadline fields) and appends what it changed to {@code out}.
     *
     * @return the engine's reply
     */
    static BsonDocument run(StorageEngine engine, String database, BsonDocument command, List<OplogEntry.Op> out) {
        String name = command.getFirstKey();
        switch (name) {
            case "insert":
                return insert(engine, database, command, out);
            case "update":
                return statements(engine, database, command, "updates", out);
            case "delete":
                return statements(engine, database, command, "deletes", out);
            case "findAndModify":
            case "findandmodify":
                return findAndModify(engine, database, command, out);
            default:
                BsonDocument reply = engine.run(database, command);
                if (ok(reply)) {
                    out.add(new OplogEntry.Command(database, command.clone()));
                }
                return reply;
        }
    }

    /** Applies one oplog operation to a member's engine (a secondary's, or one rebuilt from the oplog). */
    static void apply(StorageEngine engine, OplogEntry.Op op) {
        if (op instanceof OplogEntry.Insert insert) {
            engine.run(
                    insert.database(),
                    new BsonDocument("insert", new BsonString(insert.collection()))
                            .append("documents", new BsonArray(List.of(insert.document()))));
        } else if (op instanceof OplogEntry.Put put) {
            BsonDocument filter = new BsonDocument("_id", put.document().get("_id"));
            engine.run(
                    put.database(),
                    new BsonDocument("update", new BsonString(put.collection()))
                            .append(
                                    "updates",
                                    new BsonArray(List.of(new BsonDocument("q", filter)
                                            .append("u", put.document())
                                            .append("upsert", BsonBoolean.TRUE)))));
        } else if (op instanceof OplogEntry.Delete delete) {
            engine.run(
                    delete.database(),
                    new BsonDocument("delete", new BsonString(delete.collection()))
                            .append(
                                    "deletes",
                                    new BsonArray(List.of(new BsonDocument("q", new BsonDocument("_id", delete.id()))
                                            .append("limit", new BsonInt32(1))))));
        } else if (op instanceof OplogEntry.Command command) {
            engine.run(command.database(), command.command());
        }
    }

    private static BsonDocument insert(
            StorageEngine engine, String database, BsonDocument command, List<OplogEntry.Op> out) {
        String collection = command.getString("insert").getValue();
        BsonArray documents = new BsonArray();
        for (BsonValue value : command.getArray("documents", new BsonArray())) {
            BsonDocument document = value.asDocument();
            if (!document.containsKey("_id")) {
                // mongod gives a document without _id one before it stores and logs it (fixDocumentForInsert).
                BsonDocument withId = new BsonDocument("_id", new BsonObjectId());
                withId.putAll(document);
                document = withId;
            }
            documents.add(document);
        }
        BsonDocument withIds = shallowCopy(command);
        withIds.put("documents", documents);
        BsonDocument reply = engine.run(database, withIds);
        if (!ok(reply)) {
            return reply;
        }
        Set<Integer> failed = new HashSet<>();
        reply.getArray("writeErrors", new BsonArray())
                .forEach(e -> failed.add(e.asDocument().getNumber("index").intValue()));
        boolean ordered = command.getBoolean("ordered", BsonBoolean.TRUE).getValue();
        int end = ordered && !failed.isEmpty()
                ? failed.stream().min(Integer::compare).orElseThrow()
                : documents.size();
        for (int i = 0; i < end; i++) {
            if (!failed.contains(i)) {
                out.add(new OplogEntry.Insert(
                        database, collection, documents.get(i).asDocument()));
            }
        }
        return reply;
    }

    /** An update or delete command, one statement at a time, replies merged as mongod's write path merges them. */
    private static BsonDocument statements(
            StorageEngine engine, String database, BsonDocument command, String field, List<OplogEntry.Op> out) {
        BsonArray items = command.getArray(field, new BsonArray());
        boolean update = field.equals("updates");
        if (items.size() == 1) {
            return update
                    ? updateOne(engine, database, command, items.get(0).asDocument(), out)
                    : deleteOne(engine, database, command, items.get(0).asDocument(), out);
        }
        boolean ordered = command.getBoolean("ordered", BsonBoolean.TRUE).getValue();
        long n = 0;
        long nModified = 0;
        BsonArray upserted = new BsonArray();
        BsonArray writeErrors = new BsonArray();
        for (int i = 0; i < items.size(); i++) {
            BsonDocument item = items.get(i).asDocument();
            BsonDocument reply = update
                    ? updateOne(engine, database, command, item, out)
                    : deleteOne(engine, database, command, item, out);
            if (!ok(reply)) {
                return reply;
            }
            n += reply.get("n", new BsonInt32(0)).asNumber().longValue();
            nModified += reply.get("nModified", new BsonInt32(0)).asNumber().longValue();
            for (BsonValue upsert : reply.getArray("upserted", new BsonArray())) {
                upserted.add(new BsonDocument("index", new BsonInt32(i))
                        .append("_id", upsert.asDocument().get("_id")));
            }
            BsonArray errors = reply.getArray("writeErrors", new BsonArray());
            if (!errors.isEmpty()) {
                BsonDocument error = errors.get(0).asDocument().clone();
                error.put("index", new BsonInt32(i));
                writeErrors.add(error);
                if (ordered) {
                    break;
                }
            }
        }
        BsonDocument reply = new BsonDocument("n", new BsonInt32((int) n));
        if (update) {
            reply.put("nModified", new BsonInt32((int) nModified));
            if (!upserted.isEmpty()) {
                reply.put("upserted", upserted);
            }
        }
        if (!writeErrors.isEmpty()) {
            reply.put("writeErrors", writeErrors);
        }
        reply.put("ok", new BsonDouble(1));
        return reply;
    }

    private static BsonDocument updateOne(
            StorageEngine engine,
            String database,
            BsonDocument command,
            BsonDocument statement,
            List<OplogEntry.Op> out) {
        String collection = command.getString("update").getValue();
        boolean multi = statement.getBoolean("multi", BsonBoolean.FALSE).getValue();
        List<BsonValue> ids = matching(
                engine,
                database,
                collection,
                statement.getDocument("q", new BsonDocument()),
                statement.get("collation"),
                null,
                multi ? 0 : 1);
        BsonDocument reply = engine.run(database, single(command, "updates", statement));
        if (!ok(reply) || reply.containsKey("writeErrors")) {
            return reply;
        }
        if (reply.get("nModified", new BsonInt32(0)).asNumber().longValue() > 0) {
            for (BsonValue id : ids) {
                BsonDocument document = byId(engine, database, collection, id);
                if (document != null) {
                    out.add(new OplogEntry.Put(database, collection, document));
                }
            }
        }
        for (BsonValue upsert : reply.getArray("upserted", new BsonArray())) {
            BsonDocument document =
                    byId(engine, database, collection, upsert.asDocument().get("_id"));
            if (document != null) {
                out.add(new OplogEntry.Put(database, collection, document));
            }
        }
        return reply;
    }

    private static BsonDocument deleteOne(
            StorageEngine engine,
            String database,
            BsonDocument command,
            BsonDocument statement,
            List<OplogEntry.Op> out) {
        String collection = command.getString("delete").getValue();
        int limit = statement.get("limit", new BsonInt32(0)).asNumber().intValue();
        List<BsonValue> ids = matching(
                engine,
                database,
                collection,
                statement.getDocument("q", new BsonDocument()),
                statement.get("collation"),
                null,
                limit == 1 ? 1 : 0);
        BsonDocument reply = engine.run(database, single(command, "deletes", statement));
        if (!ok(reply) || reply.containsKey("writeErrors")) {
            return reply;
        }
        long deleted = reply.get("n", new BsonInt32(0)).asNumber().longValue();
        for (BsonValue id : ids) {
            if (deleted == ids.size() || byId(engine, database, collection, id) == null) {
                out.add(new OplogEntry.Delete(database, collection, id));
            }
        }
        return reply;
    }

    private static BsonDocument findAndModify(
            StorageEngine engine, String database, BsonDocument command, List<OplogEntry.Op> out) {
        String collection = command.getString(command.getFirstKey()).getValue();
        BsonDocument query = command.getDocument("query", new BsonDocument());
        BsonDocument sort =
                command.containsKey("sort") && command.isDocument("sort") ? command.getDocument("sort") : null;
        List<BsonValue> ids = matching(engine, database, collection, query, command.get("collation"), sort, 1);
        BsonDocument reply = engine.run(database, command);
        if (!ok(reply)) {
            return reply;
        }
        BsonDocument lastError = reply.getDocument("lastErrorObject", new BsonDocument());
        if (lastError.get("n", new BsonInt32(0)).asNumber().longValue() == 0) {
            return reply;
        }
        boolean remove = command.getBoolean("remove", BsonBoolean.FALSE).getValue();
        BsonValue id =
                lastError.containsKey("upserted") ? lastError.get("upserted") : ids.isEmpty() ? null : ids.get(0);
        if (id == null) {
            return reply;
        }
        if (remove) {
            out.add(new OplogEntry.Delete(database, collection, id));
        } else {
            BsonDocument document = byId(engine, database, collection, id);
            if (document != null) {
                out.add(new OplogEntry.Put(database, collection, document));
            }
        }
        return reply;
    }

    /** The {@code _id}s of the documents a statement's filter matches (at most {@code limit}; 0: all). */
    private static List<BsonValue> matching(
            StorageEngine engine,
            String database,
            String collection,
            BsonDocument filter,
            BsonValue collation,
            BsonDocument sort,
            int limit) {
        BsonDocument find = new BsonDocument("find", new BsonString(collection))
                .append("filter", filter)
                .append("projection", ID_ONLY);
        if (sort != null) {
            find.append("sort", sort);
        }
        if (limit > 0) {
            find.append("limit", new BsonInt32(limit));
        }
        if (collation != null && collation.isDocument()) {
            find.append("collation", collation);
        }
        BsonDocument reply = engine.run(database, find);
        if (!ok(reply) || !reply.containsKey("cursor")) {
            return List.of();
        }
        List<BsonValue> ids = new ArrayList<>();
        for (BsonValue document : Cursors.drain(engine::run, database, reply)) {
            ids.add(document.asDocument().get("_id"));
        }
        return ids;
    }

    private static BsonDocument byId(StorageEngine engine, String database, String collection, BsonValue id) {
        BsonDocument reply = engine.run(
                database,
                new BsonDocument("find", new BsonString(collection))
                        .append("filter", new BsonDocument("_id", id))
                        .append("limit", new BsonInt32(1)));
        if (!ok(reply) || !reply.containsKey("cursor")) {
            return null;
        }
        BsonArray batch = reply.getDocument("cursor").getArray("firstBatch");
        return batch.isEmpty() ? null : batch.get(0).asDocument();
    }

    private static BsonDocument single(BsonDocument command, String field, BsonDocument statement) {
        BsonDocument single = shallowCopy(command);
        single.put(field, new BsonArray(List.of(statement)));
        return single;
    }

    private static BsonDocument shallowCopy(BsonDocument command) {
        BsonDocument copy = new BsonDocument();
        command.forEach(copy::put);
        return copy;
    }

    private static boolean ok(BsonDocument reply) {
        return reply.get("ok", new BsonInt32(0)).asNumber().doubleValue() == 1;
    }
}
