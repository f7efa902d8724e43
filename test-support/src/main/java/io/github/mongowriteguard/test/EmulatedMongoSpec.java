package io.github.mongowriteguard.test;

import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.bson.BsonDocument;
import org.bson.json.JsonParseException;

/**
 * What to start: the attributes of {@link EmulatedMongo}, or the {@code mongo.emulated.*} properties, validated before
 * anything starts. A value: two specs with the same values start equal deployments (Spring's context cache keys on
 * it).
 *
 * @param shards             0 for a replica set, else the number of shards
 * @param mongos             mongos routers of a sharded cluster
 * @param members            members of a replica set
 * @param shardedCollections namespace to shard key pattern, in order
 * @param serverVersion      the emulated server version
 * @param database           the connection string's database, or empty
 * @param options            connection string options, or empty
 * @param standalone         a standalone mongod instead of a replica set (no retryable writes, no transactions)
 */
public record EmulatedMongoSpec(
        int shards,
        int mongos,
        int members,
        Map<String, BsonDocument> shardedCollections,
        ServerVersion serverVersion,
        String database,
        String options,
        boolean standalone) {

    /**
     * A replica set or a sharded cluster, as {@link #EmulatedMongoSpec(int, int, int, Map, ServerVersion, String, String,
     * boolean)} without a standalone.
     *
     * @param shards             0 for a replica set, else 1 to 64
     * @param mongos             1 to 16
     * @param members            1 to 7, replica sets only
     * @param shardedCollections namespace to shard key pattern, sharded clusters only
     * @param serverVersion      the emulated server version
     * @param database           the connection string's database, or empty
     * @param options            connection string options, or empty
     */
    public EmulatedMongoSpec(
            int shards,
            int mongos,
            int members,
            Map<String, BsonDocument> shardedCollections,
            ServerVersion serverVersion,
            String database,
            String options) {
        this(shards, mongos, members, shardedCollections, serverVersion, database, options, false);
    }

    /**
     * Validates every value (the message names the attribute and the fix) and copies the collections.
     *
     * @param shards             0 for a replica set, else 1 to 64
     * @param mongos             1 to 16
     * @param members            1 to 7, replica sets only
     * @param shardedCollections namespace to shard key pattern, sharded clusters only
     * @param serverVersion      the emulated server version
     * @param database           the connection string's database, or empty
     * @param options            connection string options, or empty
     * @param standalone         a standalone mongod (no shards, one member)
     * @throws IllegalArgumentException naming the value at fault
     */
    public EmulatedMongoSpec {
        if (shards < 0 || shards > 64) {
            throw new IllegalArgumentException("shards (" + shards + ") must be 0 (a replica set) to 64");
        }
        if (mongos < 1 || mongos > 16) {
            throw new IllegalArgumentException("mongos (" + mongos + ") must be 1 to 16");
        }
        if (members < 1 || members > 7) {
            throw new IllegalArgumentException("members (" + members + ") must be 1 to 7");
        }
        if (shards > 0 && members != 1) {
            throw new IllegalArgumentException(
                    "members (" + members + ") applies to a replica set; with shards (" + shards + ") leave it at 1");
        }
        if (standalone && (shards != 0 || members != 1)) {
            throw new IllegalArgumentException(
                    "standalone is one mongod: leave shards (" + shards + ") at 0 and members (" + members + ") at 1");
        }
        shardedCollections = Collections.unmodifiableMap(new LinkedHashMap<>(shardedCollections));
        if (shards == 0 && !shardedCollections.isEmpty()) {
            throw new IllegalArgumentException("shardedCollections " + shardedCollections.keySet()
                    + " need a sharded cluster; set shards (e.g. shards = 3)");
        }
        shardedCollections.keySet().forEach(namespace -> {
            if (namespace.indexOf('.') <= 0 || namespace.endsWith(".")) {
                throw new IllegalArgumentException("sharded collection namespace '" + namespace
                        + "' must be database.collection, e.g. shop.orders");
            }
        });
        Objects.requireNonNull(serverVersion, "serverVersion");
        database = Objects.requireNonNull(database, "database").strip();
        options = Objects.requireNonNull(options, "options").strip();
        if (options.startsWith("?")) {
            options = options.substring(1);
        }
    }

    /**
     * The spec an annotation describes.
     *
     * @param annotation the test class's annotation
     * @return the validated spec
     * @throws IllegalArgumentException naming the attribute at fault
     */
    public static EmulatedMongoSpec of(EmulatedMongo annotation) {
        Map<String, BsonDocument> sharded = new LinkedHashMap<>();
        for (EmulatedMongo.ShardedCollection collection : annotation.shardedCollections()) {
            sharded.put(collection.namespace(), parseKey(collection.namespace(), collection.key()));
        }
        return new EmulatedMongoSpec(
                annotation.shards(),
                annotation.mongos(),
                annotation.members(),
                sharded,
                parseVersion(annotation.serverVersion()),
                annotation.database(),
                annotation.options(),
                annotation.standalone());
    }

    /** {@return the spec of a replica set of one member, server 4.4, with no database or options} */
    public static EmulatedMongoSpec defaults() {
        return new EmulatedMongoSpec(0, 1, 1, Map.of(), ServerVersion.V4_4, "", "");
    }

    /**
     * A shard key pattern written as JSON.
     *
     * @param namespace the sharded collection, for the message
     * @param json      the pattern, e.g. {@code {_id: "hashed"}}
     * @return the pattern
     * @throws IllegalArgumentException when it is not JSON or empty
     */
    public static BsonDocument parseKey(String namespace, String json) {
        try {
            BsonDocument key = BsonDocument.parse(json);
            if (key.isEmpty()) {
                throw new IllegalArgumentException(
                        "the shard key of " + namespace + " is empty; use e.g. {_id: \"hashed\"}");
            }
            return key;
        } catch (JsonParseException e) {
            throw new IllegalArgumentException(
                    "the shard key of " + namespace + " (" + json + ") is not JSON: " + e.getMessage()
                            + "; use e.g. {_id: \"hashed\"}",
                    e);
        }
    }

    private static ServerVersion parseVersion(String version) {
        return ServerVersion.parse(version.strip()); // its message lists the versions emulated
    }

    /**
     * Starts the deployment this spec describes, its collections sharded.
     *
     * @return the running deployment; close it to stop it
     */
    public EmulatedMongoCluster start() {
        if (standalone) {
            return new EmulatedMongoCluster(
                    EmulatedCluster.standalone().serverVersion(serverVersion).start(), this);
        }
        if (shards == 0) {
            EmulatedReplicaSet replicaSet = EmulatedCluster.replicaSet()
                    .members(members)
                    .serverVersion(serverVersion)
                    .start();
            return new EmulatedMongoCluster(replicaSet, this);
        }
        EmulatedShardedCluster cluster = EmulatedCluster.sharded()
                .shards(shards)
                .mongos(mongos)
                .serverVersion(serverVersion)
                .start();
        try {
            shardedCollections.forEach((namespace, key) -> cluster.shardCollection(namespace, ShardKey.of(key)));
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
        return new EmulatedMongoCluster(cluster, this);
    }
}
