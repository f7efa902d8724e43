package io.github.mongowriteguard.testkit.sharding;

import io.github.mongowriteguard.testkit.engine.StorageEngine;
import io.github.mongowriteguard.testkit.internal.Cursors;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/** Reading whole cursors from a storage engine, for the emulator's own bookkeeping (migrations, filtering). */
final class Engines {
    private Engines() {}

    /** Every document of a cursor reply, following it with {@code getMore} until it is exhausted. */
    static List<BsonValue> drain(StorageEngine engine, String database, BsonDocument reply) {
        return Cursors.drain(engine::run, database, reply);
    }

    /** Every document of {@code collection} matching {@code filter}. */
    static List<BsonDocument> findAll(StorageEngine engine, String database, String collection, BsonDocument filter) {
        BsonDocument reply =
                engine.run(database, new BsonDocument("find", new BsonString(collection)).append("filter", filter));
        if (!reply.containsKey("cursor")) {
            return List.of();
        }
        List<BsonDocument> documents = new ArrayList<>();
        drain(engine, database, reply).forEach(d -> documents.add(d.asDocument()));
        return documents;
    }
}
