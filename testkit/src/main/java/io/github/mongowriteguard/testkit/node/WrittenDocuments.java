package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.engine.StorageEngine;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * The document each statement of a retryable write wrote, kept with the statement's target so that a chunk migration
 * can tell which statements wrote its chunk by the written document's key, as the server does from the statement's
 * oplog entry (mongodb/mongo {@code src/mongo/db/s/session_catalog_migration_source.cpp} takes the document key of each
 * entry, {@code o2} of an update, {@code o} of a delete or an insert, and keeps the entries whose key lies in the
 * chunk), not by the statement's filter: a filter like {@code {$and: [{_id: 5}, ...]}} or an {@code _id} filter on a
 * collection sharded on another key pins no shard-key point, yet the document it wrote has one.
 *
 * <p>An update or delete runs one document at a time in a retryable write ({@code multi} is refused there), so the
 * document it writes is the one its filter matches when it runs, found just before; an upsert's is the one it inserted.
 */
final class WrittenDocuments {
    private final StorageEngine engine;
    private final String database;
    private final String collection;
    private BsonDocument pending;

    WrittenDocuments(StorageEngine engine, String database, String collection) {
        this.engine = engine;
        this.database = database;
        this.collection = collection;
    }

    /** Before a single-statement update or delete runs: the document its filter matches now, if any. */
    void before(BsonDocument part) {
        pending = null;
        String field = switch (part.getFirstKey()) {
            case "update" -> "updates";
            case "delete" -> "deletes";
            default -> null;
        };
        if (field == null || !part.isArray(field) || part.getArray(field).size() != 1) {
            return;
        }
        BsonValue statement = part.getArray(field).get(0);
        if (statement.isDocument() && statement.asDocument().isDocument("q")) {
            pending = findOne(statement.asDocument().getDocument("q"));
        }
    }

    /** A statement was recorded as executed: its target gets the document it wrote. */
    void recorded(SessionState session, int stmtId, BsonDocument outcome) {
        BsonDocument target = session.statementTargets.get(stmtId);
        if (target == null || target.getString("op").getValue().equals("insert")) {
            return;
        }
        BsonDocument written = outcome.containsKey("upsertedId")
                ? findOne(new BsonDocument("_id", outcome.get("upsertedId")))
                : pending;
        if (written != null) {
            target.put("document", written);
        }
        pending = null;
    }

    private BsonDocument findOne(BsonDocument filter) {
        BsonDocument reply = engine.run(
                database,
                new BsonDocument("find", new BsonString(collection))
                        .append("filter", filter)
                        .append("limit", new BsonInt32(1))
                        .append("singleBatch", BsonBoolean.TRUE));
        BsonArray batch = reply.getDocument("cursor", new BsonDocument()).getArray("firstBatch", new BsonArray());
        return batch.isEmpty() ? null : batch.get(0).asDocument();
    }
}
