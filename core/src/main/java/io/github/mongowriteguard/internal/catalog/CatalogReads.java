package io.github.mongowriteguard.internal.catalog;

import com.mongodb.MongoNamespace;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoCursor;
import io.github.mongowriteguard.internal.ClientPort;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;

/**
 * The commands the guard sends to learn a deployment's catalog, every one with the guard's deadline and to the
 * primary (through mongos: to the config servers). Only {@link ClusterCatalog} sends them, so each fact is asked
 * once for every component and guard that needs it.
 */
final class CatalogReads {

    private CatalogReads() {}

    /** Whether the client talks to mongos ({@code hello}'s {@code msg: "isdbgrid"}). */
    static boolean isMongos(ClientPort access, long maxTimeMs) {
        BsonDocument hello = access.getDatabase("admin")
                .runCommand(
                        new BsonDocument("hello", new BsonInt32(1)).append("maxTimeMS", new BsonInt64(maxTimeMs)),
                        BsonDocument.class);
        return "isdbgrid".equals(hello.getString("msg", new BsonString("")).getValue());
    }

    /**
     * The sharded cluster's {@code clusterId} from {@code config.version} (written once when the config servers are
     * first initialized: mongodb/mongo {@code src/mongo/db/s/config/sharding_catalog_manager.cpp},
     * {@code _initConfigVersion}), or null when the document has none.
     */
    static @Nullable BsonValue clusterId(ClientPort access, long maxTimeMs) {
        BsonDocument entry = first(access, "version", new BsonDocument(), maxTimeMs);
        return entry == null ? null : entry.get("clusterId");
    }

    /**
     * The collection's {@code config.collections} entry (its {@code key}, {@code uuid}, {@code lastmodEpoch},
     * {@code timestamp}, ...), or null when the collection is not sharded: no entry, {@code dropped: true} up to 4.4,
     * {@code unsplittable: true} from 8.0, or no {@code key}.
     */
    static @Nullable BsonDocument shardedCollection(ClientPort access, MongoNamespace namespace, long maxTimeMs) {
        BsonDocument entry = first(
                access, "collections", new BsonDocument("_id", new BsonString(namespace.getFullName())), maxTimeMs);
        if (entry == null
                || entry.getBoolean("dropped", BsonBoolean.FALSE).getValue()
                || entry.getBoolean("unsplittable", BsonBoolean.FALSE).getValue()
                || !entry.isDocument("key")) {
            return null;
        }
        return entry;
    }

    /**
     * The chunks of a sharded collection whose {@code lastmod} is at or above {@code since}, in {@code lastmod}
     * order, as mongos' loader asks for them (mongodb/mongo {@code src/mongo/s/config_server_catalog_cache_loader.cpp},
     * {@code createConfigDiffQueryUuid} / {@code createConfigDiffQueryNs}: {@code {uuid|ns, lastmod: {$gte: since}}},
     * sorted by {@code lastmod}; a full load asks from {@code Timestamp(0, 0)}): by the collection's {@code uuid} when
     * its entry has a {@code timestamp} (5.0 on), by {@code ns} before. At most {@code limit} chunks are read.
     */
    static List<BsonDocument> chunksSince(
            ClientPort access,
            MongoNamespace namespace,
            BsonDocument entry,
            BsonTimestamp since,
            int limit,
            long maxTimeMs) {
        BsonValue uuid = entry.get("uuid");
        BsonDocument filter = entry.containsKey("timestamp") && uuid != null
                ? new BsonDocument("uuid", uuid)
                : new BsonDocument("ns", new BsonString(namespace.getFullName()));
        filter.append("lastmod", new BsonDocument("$gte", since));
        List<BsonDocument> chunks = new ArrayList<>();
        try (MongoCursor<BsonDocument> cursor = access.getDatabase("config")
                .getCollection("chunks", BsonDocument.class)
                .withReadPreference(ReadPreference.primary())
                .find(filter)
                .sort(new BsonDocument("lastmod", new BsonInt32(1)))
                .projection(new BsonDocument("min", new BsonInt32(1))
                        .append("max", new BsonInt32(1))
                        .append("shard", new BsonInt32(1))
                        .append("lastmod", new BsonInt32(1))
                        .append("lastmodEpoch", new BsonInt32(1))
                        .append("_id", new BsonInt32(0)))
                .batchSize(1_000)
                .limit(limit)
                .maxTime(maxTimeMs, TimeUnit.MILLISECONDS)
                .iterator()) {
            while (cursor.hasNext()) {
                chunks.add(cursor.next());
            }
        }
        return chunks;
    }

    /** The collection's {@code listCollections} entry, or null when it does not exist (yet). */
    static @Nullable BsonDocument collectionInfo(ClientPort access, MongoNamespace namespace, long maxTimeMs) {
        BsonDocument reply = access.getDatabase(namespace.getDatabaseName())
                .runCommand(
                        new BsonDocument("listCollections", new BsonInt32(1))
                                .append(
                                        "filter",
                                        new BsonDocument("name", new BsonString(namespace.getCollectionName())))
                                .append("maxTimeMS", new BsonInt64(maxTimeMs)),
                        ReadPreference.primary(),
                        BsonDocument.class);
        BsonArray batch = reply.getDocument("cursor").getArray("firstBatch", new BsonArray());
        return batch.isEmpty() ? null : batch.get(0).asDocument();
    }

    private static @Nullable BsonDocument first(
            ClientPort access, String collection, BsonDocument filter, long maxTimeMs) {
        BsonDocument reply = access.getDatabase("config")
                .runCommand(
                        new BsonDocument("find", new BsonString(collection))
                                .append("filter", filter)
                                .append("limit", new BsonInt32(1))
                                .append("singleBatch", BsonBoolean.TRUE)
                                .append("maxTimeMS", new BsonInt64(maxTimeMs)),
                        ReadPreference.primary(),
                        BsonDocument.class);
        BsonArray batch = reply.getDocument("cursor").getArray("firstBatch", new BsonArray());
        return batch.isEmpty() ? null : batch.get(0).asDocument();
    }
}
