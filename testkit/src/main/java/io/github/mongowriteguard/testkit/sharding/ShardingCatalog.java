package io.github.mongowriteguard.testkit.sharding;

import io.github.mongowriteguard.testkit.engine.StorageEngine;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.UuidRepresentation;
import org.bson.types.ObjectId;

/**
 * The config server of an emulated sharded cluster: which databases are sharded and every sharded collection's
 * {@link ChunkMap}. The routing decisions use the Java maps; each change is also written as real documents into
 * {@code config.databases}, {@code config.collections} and {@code config.chunks} of the config engine, so a client
 * can {@code find} them through mongos as on a real cluster. The documents have the emulated version's fields
 * (mongodb/mongo {@code src/mongo/s/catalog/type_chunk.cpp}, {@code type_collection.cpp}): up to 4.4 a chunk is
 * keyed by its namespace ({@code _id: "<ns>-<field>_<min>"}, {@code ns}, {@code lastmodEpoch}); from 5.0 by the
 * collection's {@code uuid} ({@code _id} an ObjectId, no {@code ns}), and {@code config.collections} has
 * {@code timestamp}; 7.0 adds {@code onCurrentShardSince}.
 */
public final class ShardingCatalog implements AutoCloseable {
    private static final String CONFIG = "config";

    private final List<String> shards;
    private final ServerVersion version;
    private final StorageEngine config = StorageEngine.scratch();
    /** Per collection, kept across chunk changes as on a real config server: epoch, uuid, creation timestamp. */
    private final Map<String, ObjectId> epochs = new ConcurrentHashMap<>();

    private final Map<String, java.util.UUID> uuids = new ConcurrentHashMap<>();
    private final Map<String, BsonTimestamp> created = new ConcurrentHashMap<>();
    private final Map<String, ChunkMap> collections = new ConcurrentHashMap<>();
    private final Set<String> shardedDatabases = ConcurrentHashMap.newKeySet();
    private final Map<String, Long> versions = new ConcurrentHashMap<>();
    /** Per collection, each chunk's {@code lastmod} in {@code config.chunks}: kept while the chunk does not change. */
    private final Map<String, Map<Chunk, BsonTimestamp>> chunkVersions = new ConcurrentHashMap<>();

    private final List<Consumer<String>> listeners = new CopyOnWriteArrayList<>();

    /**
     * A 4.4 config server.
     *
     * @param shards shard names with their hosts, e.g. {@code shard00 -> 127.0.0.1:40001}
     */
    public ShardingCatalog(Map<String, String> shards) {
        this(shards, ServerVersion.V4_4);
    }

    /**
     * A config server of a given version.
     *
     * @param shards  shard names with their hosts
     * @param version the version whose config documents are written
     */
    public ShardingCatalog(Map<String, String> shards, ServerVersion version) {
        this.version = java.util.Objects.requireNonNull(version, "version");
        this.shards = List.copyOf(shards.keySet());
        // config.version: the cluster's identity, written once when the config servers are first initialized
        // (src/mongo/db/s/config/sharding_catalog_manager.cpp, _initConfigVersion: clusterId OID::gen()).
        insert(
                "version",
                new BsonDocument("_id", new BsonInt32(1)).append("clusterId", new BsonObjectId(new ObjectId())));
        for (Map.Entry<String, String> shard : shards.entrySet()) {
            insert(
                    "shards",
                    new BsonDocument("_id", new BsonString(shard.getKey()))
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
     * The server version the cluster emulates.
     *
     * @return the version
     */
    public ServerVersion version() {
        return version;
    }

    /**
     * The config engine, where mongos runs commands on the {@code config} database.
     *
     * @return the config engine
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
            insert(
                    "databases",
                    new BsonDocument("_id", new BsonString(database))
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
            return map == null
                    ? Optional.empty()
                    : Optional.of(new CollectionRouting(namespace, map, versions.get(namespace)));
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
        ObjectId epoch = epochs.computeIfAbsent(namespace, ns -> new ObjectId());
        java.util.UUID uuid = uuids.computeIfAbsent(namespace, ns -> java.util.UUID.randomUUID());
        BsonTimestamp timestamp = created.computeIfAbsent(
                namespace, ns -> new BsonTimestamp((int) (System.currentTimeMillis() / 1000), 1));
        boolean byUuid = version.atLeast(ServerVersion.V5_0);
        config.run(
                CONFIG,
                new BsonDocument("delete", new BsonString("collections"))
                        .append(
                                "deletes",
                                new BsonArray(List.of(
                                        new BsonDocument("q", new BsonDocument("_id", new BsonString(namespace)))
                                                .append("limit", new BsonInt32(0))))));
        BsonDocument collection = new BsonDocument("_id", new BsonString(namespace))
                .append("lastmodEpoch", new BsonObjectId(epoch))
                .append("lastmod", new BsonDateTime(System.currentTimeMillis()));
        if (byUuid) {
            collection.append("timestamp", timestamp).append("uuid", new BsonBinary(uuid, UuidRepresentation.STANDARD));
        } else {
            collection.append("dropped", BsonBoolean.FALSE);
        }
        collection.append("key", map.key().pattern()).append("unique", BsonBoolean.valueOf(unique));
        if (byUuid) {
            collection.append("noBalance", BsonBoolean.FALSE);
        } else {
            collection.append("uuid", new BsonBinary(uuid, UuidRepresentation.STANDARD));
        }
        insert("collections", collection);
        config.run(
                CONFIG,
                new BsonDocument("delete", new BsonString("chunks"))
                        .append(
                                "deletes",
                                new BsonArray(List.of(new BsonDocument(
                                                "q",
                                                byUuid
                                                        ? new BsonDocument(
                                                                "uuid",
                                                                new BsonBinary(uuid, UuidRepresentation.STANDARD))
                                                        : new BsonDocument("ns", new BsonString(namespace)))
                                        .append("limit", new BsonInt32(0))))));
        BsonArray documents = new BsonArray();
        Map<Chunk, BsonTimestamp> lastmods = chunkVersions(namespace, map);
        for (Chunk chunk : map.chunks()) {
            BsonTimestamp lastmod = lastmods.get(chunk);
            BsonDocument document = byUuid
                    ? new BsonDocument("_id", new BsonObjectId(new ObjectId()))
                            .append("uuid", new BsonBinary(uuid, UuidRepresentation.STANDARD))
                    : new BsonDocument("_id", new BsonString(chunkId(namespace, chunk.min())))
                            .append("ns", new BsonString(namespace));
            document.append("min", chunk.min())
                    .append("max", chunk.max())
                    .append("shard", new BsonString(chunk.shard()))
                    .append("lastmod", lastmod);
            if (!byUuid) {
                document.append("lastmodEpoch", new BsonObjectId(epoch));
            }
            if (version.atLeast(ServerVersion.V7_0)) {
                document.append("onCurrentShardSince", timestamp);
            }
            document.append(
                    "history",
                    new BsonArray(List.of(
                            new BsonDocument("validAfter", timestamp).append("shard", new BsonString(chunk.shard())))));
            documents.add(document);
        }
        // in commands of at most 10,000 documents, each under the 16 MiB limit of a BSON document (100,000 chunks
        // of a hashed key are about 25 MB)
        for (int from = 0; from < documents.size(); from += 10_000) {
            BsonArray batch =
                    new BsonArray(documents.getValues().subList(from, Math.min(documents.size(), from + 10_000)));
            config.run(CONFIG, new BsonDocument("insert", new BsonString("chunks")).append("documents", batch));
        }
        listeners.forEach(listener -> listener.accept(namespace));
    }

    /**
     * Each chunk's {@code lastmod} as the config server gives it: a new collection's chunks {@code 1|0, 1|1, ...}
     * ({@code InitialSplitPolicy}); afterwards a chunk that did not change keeps its version, and the changed ones get
     * the next versions after the collection version (the highest {@code lastmod}): a chunk that moved to another
     * shard the next major version, {@code major+1|0}, and up to 4.4 one unchanged chunk left on the donor (the
     * "control chunk") {@code major+1|1} (src/mongo/db/s/config/sharding_catalog_manager_chunk_operations.cpp,
     * {@code commitChunkMigration}); chunks split or merged the next minor versions ({@code commitChunkSplit},
     * {@code commitChunkMerge}). So mongos' loader, which reads only the chunks at or above the version it holds, sees
     * exactly what changed.
     */
    private Map<Chunk, BsonTimestamp> chunkVersions(String namespace, ChunkMap map) {
        Map<Chunk, BsonTimestamp> previous = chunkVersions.get(namespace);
        Map<Chunk, BsonTimestamp> next = new java.util.HashMap<>();
        if (previous == null) {
            int minor = 0;
            for (Chunk chunk : map.chunks()) {
                next.put(chunk, new BsonTimestamp(1, minor++));
            }
            chunkVersions.put(namespace, next);
            return next;
        }
        BsonTimestamp collectionVersion =
                previous.values().stream().max(BsonTimestamp::compareTo).orElse(new BsonTimestamp(0, 0));
        List<Chunk> changed = new java.util.ArrayList<>();
        Map<List<BsonDocument>, String> ownerOfRange = new java.util.HashMap<>();
        previous.keySet().forEach(old -> ownerOfRange.put(List.of(old.min(), old.max()), old.shard()));
        String donor = null;
        for (Chunk chunk : map.chunks()) {
            BsonTimestamp kept = previous.get(chunk);
            if (kept != null) {
                next.put(chunk, kept);
                continue;
            }
            changed.add(chunk);
            String owner = ownerOfRange.get(List.of(chunk.min(), chunk.max()));
            if (owner != null && !owner.equals(chunk.shard())) {
                donor = owner;
            }
        }
        int major = collectionVersion.getTime();
        int minor = collectionVersion.getInc();
        if (donor != null) {
            major++;
            minor = 0;
            for (Chunk chunk : changed) {
                next.put(chunk, new BsonTimestamp(major, minor++));
            }
            if (!version.atLeast(ServerVersion.V5_0)) {
                for (Chunk chunk : map.chunks()) {
                    if (chunk.shard().equals(donor) && previous.containsKey(chunk)) {
                        next.put(chunk, new BsonTimestamp(major, minor++)); // the control chunk
                        break;
                    }
                }
            }
        } else {
            for (Chunk chunk : changed) {
                next.put(chunk, new BsonTimestamp(major, ++minor));
            }
        }
        chunkVersions.put(namespace, next);
        return next;
    }

    /**
     * Forgets a dropped collection's routing table and config documents.
     *
     * @param namespace {@code db.collection}
     */
    public synchronized void remove(String namespace) {
        if (collections.remove(namespace) != null) {
            versions.remove(namespace);
            chunkVersions.remove(namespace);
            epochs.remove(namespace);
            created.remove(namespace);
            java.util.UUID uuid = uuids.remove(namespace);
            listeners.forEach(listener -> listener.accept(namespace));
            config.run(
                    CONFIG,
                    new BsonDocument("delete", new BsonString("collections"))
                            .append(
                                    "deletes",
                                    new BsonArray(List.of(
                                            new BsonDocument("q", new BsonDocument("_id", new BsonString(namespace)))
                                                    .append("limit", new BsonInt32(0))))));
            BsonDocument chunks = version.atLeast(ServerVersion.V5_0) && uuid != null
                    ? new BsonDocument("uuid", new BsonBinary(uuid, UuidRepresentation.STANDARD))
                    : new BsonDocument("ns", new BsonString(namespace));
            config.run(
                    CONFIG,
                    new BsonDocument("delete", new BsonString("chunks"))
                            .append(
                                    "deletes",
                                    new BsonArray(
                                            List.of(new BsonDocument("q", chunks).append("limit", new BsonInt32(0))))));
        }
    }

    /**
     * A 4.4 chunk's {@code _id}, {@code ChunkType::genID}: the namespace, "-", then per bound field its name, "_"
     * and its value as the server prints it ({@code MinKey}, numbers as digits, strings quoted).
     */
    static String chunkId(String namespace, BsonDocument min) {
        StringBuilder id = new StringBuilder(namespace).append('-');
        for (Map.Entry<String, org.bson.BsonValue> field : min.entrySet()) {
            org.bson.BsonValue value = field.getValue();
            String text = switch (value.getBsonType()) {
                case MIN_KEY -> "MinKey";
                case MAX_KEY -> "MaxKey";
                case INT32 -> String.valueOf(value.asInt32().getValue());
                case INT64 -> String.valueOf(value.asInt64().getValue());
                case DOUBLE -> String.valueOf(value.asDouble().getValue());
                case STRING -> '"' + value.asString().getValue() + '"';
                case OBJECT_ID -> "ObjectId('" + value.asObjectId().getValue().toHexString() + "')";
                default -> value.toString();
            };
            id.append(field.getKey()).append('_').append(text);
        }
        return id.toString();
    }

    /**
     * Namespaces of the sharded collections of one database.
     *
     * @param database the database's name
     * @return the namespaces, sorted
     */
    public List<String> shardedCollections(String database) {
        return collections.keySet().stream()
                .filter(ns -> ns.startsWith(database + "."))
                .sorted()
                .toList();
    }

    private void insert(String collection, BsonDocument document) {
        config.run(
                CONFIG,
                new BsonDocument("insert", new BsonString(collection))
                        .append("documents", new BsonArray(List.of(document))));
    }

    @Override
    public void close() {
        config.close();
    }
}
