package io.github.mongowriteguard.testkit.engine;

import org.bson.BsonDocument;
import org.bson.BsonInt32;

/**
 * A {@code getMore} without a batch size, or with {@code batchSize: 0}, as the server reads it: no limit on the number
 * of documents (the reply's size bounds the batch). {@code getmore_command.idl} makes {@code batchSize} optional, and
 * {@code getmore_cmd.cpp} ({@code generateBatch}) takes a missing one as the largest {@code size_t} and, "unlike in
 * find", 0 as "no limit"; mongos does the same ({@code cluster_find.cpp}, {@code runGetMore}). The engine's cursor
 * refuses 0, its default for a missing batch size ("Illegal number to return: 0"), so the engine is given the
 * largest int instead. The testkit sends such getMores itself when it drains a cursor (mongos answering a read of a
 * sharded collection in one batch, after a {@code find} with a {@code batchSize}, as the Reactive Streams driver sends
 * from a subscriber's demand); a client may send them too.
 */
final class GetMoreBatchSize {
    private GetMoreBatchSize() {}

    /** {@code command}, or, for a {@code getMore} with no or a zero batch size, a copy asking for every document. */
    static BsonDocument forEngine(BsonDocument command) {
        if (command.isEmpty() || !command.getFirstKey().equals("getMore")) {
            return command;
        }
        org.bson.BsonValue batchSize = command.get("batchSize");
        if (batchSize != null && (!batchSize.isNumber() || batchSize.asNumber().longValue() != 0)) {
            return command;
        }
        BsonDocument unlimited = command.clone();
        unlimited.put("batchSize", new BsonInt32(Integer.MAX_VALUE));
        return unlimited;
    }
}
