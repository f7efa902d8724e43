package io.github.mongowriteguard.testkit.sharding;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.types.ObjectId;

import io.github.mongowriteguard.testkit.engine.StorageEngine;

/**
 * The config server of an emulated sharded cluster: which databases are sharded and every sharded collection's
 * {@link ChunkMap}. The routing decisions use the Java maps; each change is also written as real documents into
 * {@code config.databases}, {@code config.collections} and {@code config.chunks} (4.4 field names) of the config
 * engine, so a client can {@code find} them through mongos as on a real cluster.
 */
public final class ShardingCatalog implements AutoCloseable {
    private static final String CONFIG = "config";

    private final List<String> shards;
    private final StorageEngine config = new StorageEngine();
    private final Map<String, ChunkMap> collections = new ConcurrentHashMap<>();
    private final Set<String> shardedDatabases = ConcurrentHashMap.newKeySet();
    private final Map<String, Long> versions = new ConcurrentHashMap<>();
    private final List<Consumer<String>> listeners = new CopyOnWriteArrayList<>();

    /** @param shards shard names with their hosts, e.g. {@code shard00 -> 127.0.0.1:40001} */
    public ShardingCatalog(Map<String, String> shards) {
        this.shards = List.copyOf(shards.keySet());
        for (Map.Entry<String, String> shard : shards.entrySet()) {
            insert("shards", new BsonDocument("_id", new BsonString(shard.getKey()))
                .append("host", new BsonString(shard.getKey() + "/" + shard.getValue()))
                .append("state", new BsonInt32(1)));
        }
    }

    /**
     * The shard names in order; the first is every database's primary shard.
     *
     * @return the names
     */
    public List<String> shards() {
        return shards;
    }

    /** {@return the primary shard of every database: the first shard} */
    public String primaryShard() {
        return shards.get(0);
    }

    /**
     * The config engine, where mongos runs commands on the {@code config} database.
     *
     * @return the engine
     */
    public StorageEngine configEngine() {
        return config;
    }

    /**
     * Enables sharding for a database, as {@code enableSharding} does.
     *
     * @param database the database
     */
    public void enableSharding(String database) {
        if (shardedDatabases.add(database)) {
            insert("databases", new BsonDocument("_id", new BsonString(database))
                .append("primary", new BsonString(primaryShard()))
                .append("partitioned", BsonBoolean.TRUE));
        }
    }

    /**
     * {@return whether sharding was enabled for {@code database}}
     *
     * @param database the database
     */
    public boolean isShardingEnabled(String database) {
        return shardedDatabases.contains(database);
    }

    /**
     * The routing table of {@code db.collection}, empty when the collection is not sharded.
     *
     * @param namespace {@code db.collection}
     * @return its chunks, or empty
     */
    public Optional<ChunkMap> chunkMap(String namespace) {
        return Optional.ofNullable(collections.get(namespace));
    }

    /**
     * The routing table of {@code db.collection} with its version, empty when the collection is not sharded.
     *
     * @param namespace {@code db.collection}
     * @return its routing table, or empty
     */
    public Optional<CollectionRouting> routing(String namespace) {
        synchronized (this) {
            ChunkMap map = collections.get(namespace);
            return map == null ? Optional.empty() : Optional.of(new CollectionRouting(namespace, map, versions.get(namespace)));
        }
    }

    /**
     * Called with the namespace after every change of a collection's chunks (or its drop), while the change is
     * being committed: the shard primaries that took part learn the new version as part of the commit.
     *
     * @param listener called with the namespace
     */
    public void onChange(Consumer<String> listener) {
        listeners.add(listener);
    }

    /**
     * Records a sharded collection (or replaces its chunks, one version more) and rewrites its config documents.
     *
     * @param namespace {@code db.collection}
     * @param map       its chunks
     * @param unique    whether the shard key is unique
     */
    public synchronized void put(String namespace, ChunkMap map, boolean unique) {
        for (Chunk chunk : map.chunks()) {
            if (!shards.contains(chunk.shard())) {
                throw new IllegalArgumentException("chunk " + chunk + " names an unknown shard; shards are " + shards);
            }
        }
        collections.put(namespace, map);
        versions.merge(namespace, 1L, Long::sum);
        config.run(CONFIG, new BsonDocument("delete", new BsonString("collections")).append("deletes", new BsonArray(List.of(
            new BsonDocument("q", new BsonDocument("_id", new BsonString(namespace))).append("limit", new BsonInt32(0))))));
        ObjectId epoch = new ObjectId();
        insert("collections", new BsonDocument("_id", new BsonString(namespace))
            .append("lastmodEpoch", new BsonObjectId(epoch))
            .append("lastmod", new BsonDateTime(System.currentTimeMillis()))
            .append("dropped", BsonBoolean.FALSE)
            .append("key", map.key().pattern())
            .append("unique", BsonBoolean.valueOf(unique)));
        config.run(CONFIG, new BsonDocument("delete", new BsonString("chunks")).append("deletes", new BsonArray(List.of(
            new BsonDocument("q", new BsonDocument("ns", new BsonString(namespace))).append("limit", new BsonInt32(0))))));
        BsonArray documents = new BsonArray();
        int version = 1;
        for (Chunk chunk : map.chunks()) {
            documents.add(new BsonDocument("_id", new BsonString(namespace + "-" + chunk.min().toJson()))
                .append("ns", new BsonString(namespace))
                .append("min", chunk.min())
                .append("max", chunk.max())
                .append("shard", new BsonString(chunk.shard()))
                .append("lastmod", new BsonTimestamp(version++, 0))
                .append("lastmodEpoch", new BsonObjectId(epoch)));
        }
        config.run(CONFIG, new BsonDocument("insert", new BsonString("chunks")).append("documents", documents));
        listeners.forEach(listener -> listener.accept(namespace));
    }

    /**
     * Forgets a dropped collection's routing table and config documents.
     *
     * @param namespace {@code db.collection}
     */
    public synchronized void remove(String namespace) {
        if (collections.remove(namespace) != null) {
            versions.remove(namespace);
            listeners.forEach(listener -> listener.accept(namespace));
            config.run(CONFIG, new BsonDocument("delete", new BsonString("collections")).append("deletes", new BsonArray(List.of(
                new BsonDocument("q", new BsonDocument("_id", new BsonString(namespace))).append("limit", new BsonInt32(0))))));
            config.run(CONFIG, new BsonDocument("delete", new BsonString("chunks")).append("deletes", new BsonArray(List.of(
                new BsonDocument("q", new BsonDocument("ns", new BsonString(namespace))).append("limit", new BsonInt32(0))))));
        }
    }

    /**
     * Namespaces of the sharded collections of one database.
     *
     * @param database the database
     * @return the namespaces
     */
    public List<String> shardedCollections(String database) {
        return collections.keySet().stream().filter(ns -> ns.startsWith(database + ".")).sorted().toList();
    }

    private void insert(String collection, BsonDocument document) {
        config.run(CONFIG, new BsonDocument("insert", new BsonString(collection))
            .append("documents", new BsonArray(List.of(document))));
    }

    @Override
    public void close() {
        config.close();
    }
}
