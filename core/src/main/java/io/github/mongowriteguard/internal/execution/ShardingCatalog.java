package io.github.mongowriteguard.internal.execution;

import com.mongodb.MongoNamespace;
import com.mongodb.ReadPreference;
import io.github.mongowriteguard.MongoAccess;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.jspecify.annotations.Nullable;

/**
 * What the guard reads of a deployment's sharding, for the planners that learn a collection once
 * ({@link SingleDocumentRules}, {@link KeyPlacements}): whether the client talks to mongos, and a collection's entry
 * in {@code config.collections}. Every command carries the guard's deadline and reads the primary.
 */
final class ShardingCatalog {

    private ShardingCatalog() {}

    /** Whether the client talks to mongos ({@code hello}'s {@code msg: "isdbgrid"}). */
    static boolean isMongos(MongoAccess access, long maxTimeMs) {
        BsonDocument hello = access.getDatabase("admin")
                .runCommand(
                        new BsonDocument("hello", new BsonInt32(1)).append("maxTimeMS", new BsonInt64(maxTimeMs)),
                        BsonDocument.class);
        return "isdbgrid".equals(hello.getString("msg", new BsonString("")).getValue());
    }

    /**
     * The collection's {@code config.collections} entry (its {@code key}, {@code uuid}, {@code timestamp}, ...), or
     * null when the collection is not sharded: no entry, {@code dropped: true} up to 4.4, {@code unsplittable: true}
     * from 8.0, or no {@code key}.
     */
    static @Nullable BsonDocument shardedCollection(MongoAccess access, MongoNamespace namespace, long maxTimeMs) {
        BsonDocument reply = access.getDatabase("config")
                .runCommand(
                        new BsonDocument("find", new BsonString("collections"))
                                .append("filter", new BsonDocument("_id", new BsonString(namespace.getFullName())))
                                .append("limit", new BsonInt32(1))
                                .append("singleBatch", BsonBoolean.TRUE)
                                .append("maxTimeMS", new BsonInt64(maxTimeMs)),
                        ReadPreference.primary(),
                        BsonDocument.class);
        BsonArray batch = reply.getDocument("cursor").getArray("firstBatch", new BsonArray());
        if (batch.isEmpty()) {
            return null;
        }
        BsonDocument entry = batch.get(0).asDocument();
        if (entry.getBoolean("dropped", BsonBoolean.FALSE).getValue()
                || entry.getBoolean("unsplittable", BsonBoolean.FALSE).getValue()
                || !entry.isDocument("key")) {
            return null;
        }
        return entry;
    }
}
