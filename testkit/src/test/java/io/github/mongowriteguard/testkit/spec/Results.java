package io.github.mongowriteguard.testkit.spec;

import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.result.UpdateResult;
import org.bson.BsonDocument;
import org.bson.BsonInt64;

/** Driver results as the documents the unified format's {@code expectResult} describes. */
final class Results {
    private Results() {}

    static BsonDocument update(UpdateResult result) {
        if (!result.wasAcknowledged()) {
            return new BsonDocument();
        }
        BsonDocument document = new BsonDocument("matchedCount", new BsonInt64(result.getMatchedCount()))
                .append("modifiedCount", new BsonInt64(result.getModifiedCount()))
                .append("upsertedCount", new BsonInt64(result.getUpsertedId() == null ? 0 : 1));
        if (result.getUpsertedId() != null) {
            document.append("upsertedId", result.getUpsertedId());
        }
        return document;
    }

    static BsonDocument bulkWrite(BulkWriteResult result) {
        if (!result.wasAcknowledged()) {
            return new BsonDocument();
        }
        BsonDocument inserted = new BsonDocument();
        result.getInserts().forEach(insert -> inserted.put(Integer.toString(insert.getIndex()), insert.getId()));
        BsonDocument upserted = new BsonDocument();
        result.getUpserts().forEach(upsert -> upserted.put(Integer.toString(upsert.getIndex()), upsert.getId()));
        return new BsonDocument("deletedCount", new BsonInt64(result.getDeletedCount()))
                .append("insertedCount", new BsonInt64(result.getInsertedCount()))
                .append("insertedIds", inserted)
                .append("matchedCount", new BsonInt64(result.getMatchedCount()))
                .append("modifiedCount", new BsonInt64(result.getModifiedCount()))
                .append("upsertedCount", new BsonInt64(result.getUpserts().size()))
                .append("upsertedIds", upserted);
    }
}
