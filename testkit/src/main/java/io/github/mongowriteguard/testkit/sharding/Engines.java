package io.github.mongowriteguard.testkit.sharding;

import java.util.ArrayList;
import java.util.List;

import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

import io.github.mongowriteguard.testkit.engine.StorageEngine;

/** Reading whole cursors from a storage engine, for the emulator's own bookkeeping (migrations, filtering). */
final class Engines {
    private Engines() {
    }

    /** Every document of a cursor reply, following it with {@code getMore} until it is exhausted. */
    static List<BsonValue> drain(StorageEngine engine, String database, BsonDocument reply) {
        BsonDocument cursor = reply.getDocument("cursor");
        List<BsonValue> all = new ArrayList<>(cursor.getArray("firstBatch"));
        long id = cursor.getNumber("id").longValue();
        while (id != 0) {
            String ns = cursor.getString("ns").getValue();
            BsonDocument more = engine.run(database, new BsonDocument("getMore", new BsonInt64(id))
                .append("collection", new BsonString(ns.substring(ns.indexOf('.') + 1))));
            cursor = more.getDocument("cursor");
            all.addAll(cursor.getArray("nextBatch"));
            id = cursor.getNumber("id").longValue();
        }
        return all;
    }

    /** Every document of {@code collection} matching {@code filter}. */
    static List<BsonDocument> findAll(StorageEngine engine, String database, String collection, BsonDocument filter) {
        BsonDocument reply = engine.run(database, new BsonDocument("find", new BsonString(collection)).append("filter", filter));
        if (!reply.containsKey("cursor")) {
            return List.of();
        }
        List<BsonDocument> documents = new ArrayList<>();
        drain(engine, database, reply).forEach(d -> documents.add(d.asDocument()));
        return documents;
    }
}
