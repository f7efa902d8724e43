package io.github.mongowriteguard.testkit;

import io.github.mongowriteguard.testkit.auth.Users;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.node.NodeIdentity;
import io.github.mongowriteguard.testkit.node.NodeInternals;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import io.github.mongowriteguard.testkit.sharding.Chunk;
import io.github.mongowriteguard.testkit.sharding.ChunkMap;
import io.github.mongowriteguard.testkit.sharding.ChunkMigration;
import io.github.mongowriteguard.testkit.sharding.MongosRouter;
import io.github.mongowriteguard.testkit.sharding.RoutingStats;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import io.github.mongowriteguard.testkit.sharding.ShardLatency;
import io.github.mongowriteguard.testkit.sharding.ShardReplicaSet;
import io.github.mongowriteguard.testkit.sharding.ShardingCatalog;
import io.github.mongowriteguard.testkit.truth.ServerTruth;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;

/**
 * An emulated sharded cluster: S shards (each a replica set with its own storage engine, named {@code shard00},
 * {@code shard01}, ...; a primary only unless {@link Builder#nodesPerShard}) behind M mongos endpoints that route
 * writes with mongos' batching rules and reads by shard version and {@code $readPreference}.
 *
 * <pre>{@code
 * try (EmulatedShardedCluster cluster = EmulatedCluster.sharded().shards(3).start();
 *      MongoClient client = MongoClients.create(cluster.connectionString())) {
 *     client.getDatabase("admin").runCommand(new Document("shardCollection", "shop.orders")
 *         .append("key", new Document("_id", "hashed")));
 *     client.getDatabase("shop").getCollection("orders").insertMany(documents);
 *     RoutedWrite insert = cluster.routing().last();   // rounds, child batches per shard
 * }
 * }</pre>
 *
 * <p>{@link #truth()} joins the shards' truth (where writes execute and copies are counted);
 * {@link #mongosTruth()} is what the mongos endpoints received from clients.
 */
public final class EmulatedShardedCluster implements EmulatedCluster {
    private final List<ShardReplicaSet> shardSets = new ArrayList<>();
    private final List<EmulatedNode> mongos = new ArrayList<>();
    private final ExecutorService refreshThreads = Executors.newCachedThreadPool(runnable -> {
        Thread thread = new Thread(runnable, "testkit-routing-refresh");
        thread.setDaemon(true);
        return thread;
    });
    private final ShardingCatalog catalog;
    private final MongosRouter router;

    private EmulatedShardedCluster(Builder builder) {
        Map<String, ShardReplicaSet> byName = new LinkedHashMap<>();
        for (int i = 0; i < builder.shards; i++) {
            String name = String.format("shard%02d", i);
            ShardReplicaSet set = builder.replicatingShards
                    ? ShardReplicaSet.startReplicating(
                            name,
                            builder.nodesPerShard,
                            builder.version,
                            builder.shardElectionTimeout,
                            builder.routingRefreshLimit,
                            refreshThreads)
                    : ShardReplicaSet.start(
                            name, builder.nodesPerShard, builder.version, builder.routingRefreshLimit, refreshThreads);
            shardSets.add(set);
            byName.put(name, set);
        }
        Map<String, String> hosts = new LinkedHashMap<>();
        byName.forEach((name, set) -> hosts.put(
                name, set.members().stream().map(EmulatedNode::address).collect(Collectors.joining(","))));
        this.catalog = new ShardingCatalog(hosts, builder.version);
        shardSets.forEach(set -> set.bind(catalog));
        this.router = new MongosRouter(byName, catalog, builder.staleConfigRetries);
        router.latency().roundTrip(builder.latency.roundTrip()).perDocument(builder.latency.perDocument());
        builder.slowFactors.forEach((shard, factor) -> router.latency().slowFactor(shardName(shard), factor));
        for (int i = 0; i < builder.mongos; i++) {
            EmulatedNode endpoint = new EmulatedNode(
                    "mongos" + i,
                    NodeIdentity.mongos(builder.version),
                    builder.port == 0 ? 0 : builder.port + i,
                    router);
            NodeInternals.of(endpoint).users(builder.users);
            mongos.add(endpoint);
        }
    }

    /** {@return a builder with every default (same as {@link EmulatedCluster#sharded()})} */
    public static Builder builder() {
        return new Builder();
    }

    /** Every mongos endpoint: {@code mongodb://127.0.0.1:p1,127.0.0.1:p2/}. */
    @Override
    public String connectionString() {
        return "mongodb://" + mongos.stream().map(EmulatedNode::address).collect(Collectors.joining(",")) + "/";
    }

    /** The shards' commands joined (child batches, copies by lsid/txnNumber, documents applied). */
    @Override
    public ServerTruth truth() {
        return ServerTruth.union(shardSets.stream()
                .flatMap(set -> set.members().stream())
                .map(EmulatedNode::truth)
                .toList());
    }

    /**
     * The users the mongos endpoints authenticate (authorization is on once one exists); the shards trust mongos
     * and see each operation's user as mongos' impersonated-user metadata tells them.
     *
     * @return the users of the mongos endpoints
     */
    public Users users() {
        return NodeInternals.of(mongos.get(0)).users();
    }

    /**
     * The commands the mongos endpoints received from clients.
     *
     * @return the union of every mongos endpoint's truth
     */
    public ServerTruth mongosTruth() {
        return ServerTruth.union(mongos.stream().map(EmulatedNode::truth).toList());
    }

    /**
     * Shard {@code i} (from 0) as a replica set: its secondaries, restarts, stalled primary, routing metadata.
     *
     * @param i the shard's index
     * @return the shard's replica set
     */
    public ShardReplicaSet shardSet(int i) {
        return shardSets.get(i);
    }

    /**
     * The shard named e.g. {@code shard01} as a replica set.
     *
     * @param name the shard's name
     * @return the shard's replica set
     */
    public ShardReplicaSet shardSet(String name) {
        return shardSets.stream()
                .filter(s -> s.name().equals(name))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no shard " + name + "; shards are " + shardNames()));
    }

    /**
     * Migrates the chunk holding {@code document}'s shard key to {@code toShard} up to its commit, with the retry
     * history of its documents' writes; the donor keeps the moved documents as orphans until
     * {@link ChunkMigration#deleteOrphans()}. The migration runs in the server's phases (clone, catch-up, critical
     * section, commit, exit): writes to the collection that reach the donor in the critical section wait, then get
     * StaleConfig and mongos sends them to the owner. Hold it in a phase with {@link #migrationFailPoints()}.
     *
     * @param namespace {@code db.collection}, sharded
     * @param document  a document whose shard key selects the chunk
     * @param toShard   the recipient shard's name
     * @return the migration, to delete the donor's orphans
     */
    public ChunkMigration moveChunk(String namespace, org.bson.BsonDocument document, String toShard) {
        return router.moveChunk(namespace, document, toShard);
    }

    /**
     * The donors' {@code moveChunkHangAtStep*} fail points: a test holds a migration (run on another thread) in one of
     * its phases, e.g. {@code moveChunkHangAtStep5} inside the critical section.
     *
     * @return the fail points
     */
    public io.github.mongowriteguard.testkit.sharding.MigrationFailPoints migrationFailPoints() {
        return router.migrationFailPoints();
    }

    /**
     * {@link #moveChunk} when the donor's oplog no longer holds the sessions' writes to the chunk: the recipient gets
     * the dead-end sentinel, and a retry of those writes fails with {@code IncompleteTransactionHistory} (217).
     *
     * @param namespace {@code db.collection}, sharded
     * @param document  a document whose shard key selects the chunk
     * @param toShard   the recipient shard's name
     * @return the migration, to delete the donor's orphans
     */
    public ChunkMigration moveChunkAfterOplogRollover(
            String namespace, org.bson.BsonDocument document, String toShard) {
        return router.moveChunk(namespace, document, toShard, true);
    }

    /**
     * Shard {@code i}'s primary (from 0): its fail point, stalls, engine, truth and command counters. With replicating
     * shards, the member primary now (waiting up to 10 s while an election is due).
     *
     * @param i the shard's index
     * @return the shard's primary
     */
    public EmulatedNode shard(int i) {
        return shardSets.get(i).primary();
    }

    /**
     * The shard named e.g. {@code shard01}.
     *
     * @param name the shard's name
     * @return the shard's primary
     */
    public EmulatedNode shard(String name) {
        return shardSet(name).primary();
    }

    /** {@return the shards' names, {@code shard00}, {@code shard01}, ...} */
    public List<String> shardNames() {
        return catalog.shards();
    }

    /**
     * Mongos endpoint {@code i} (from 0).
     *
     * @param i the endpoint's index
     * @return the endpoint
     */
    public EmulatedNode mongos(int i) {
        return mongos.get(i);
    }

    /**
     * The write commands mongos routed: rounds and child batches per client command.
     *
     * @return the routing statistics
     */
    public RoutingStats routing() {
        return router.routing();
    }

    /**
     * The simulated cost of child batches; changes apply to the next batch.
     *
     * @return the latency model
     */
    public ShardLatency latency() {
        return router.latency();
    }

    /**
     * Shards a collection, as the {@code shardCollection} command does (an empty collection on a hashed key gets
     * 2 chunks per shard in contiguous runs up to 7.0, one per shard in 8.0; see {@link ChunkMap#hashedInitialChunks}).
     *
     * @param namespace {@code db.collection}
     * @param key       the shard key
     * @return the collection's routing table
     */
    public ChunkMap shardCollection(String namespace, ShardKey key) {
        return router.shardCollection(namespace, key, false, 0);
    }

    /**
     * Replaces the chunks of a sharded collection, so a test gets an exact placement. Documents already stored are
     * not migrated: place chunks before writing.
     *
     * @throws IllegalArgumentException when the collection is not sharded, the chunks do not cover the key space, or
     *                                  a chunk names an unknown shard
     * @param namespace {@code db.collection}, sharded
     * @param chunks    chunks covering the whole key space
     * @return the new routing table
     */
    public ChunkMap placeChunks(String namespace, List<Chunk> chunks) {
        ChunkMap current = chunkMap(namespace);
        ChunkMap map = new ChunkMap(current.key(), chunks);
        catalog.put(namespace, map, false);
        return map;
    }

    /**
     * The routing table of a sharded collection.
     *
     * @param namespace {@code db.collection}
     * @return its chunks and shard key
     * @throws IllegalArgumentException if it is not sharded
     */
    public ChunkMap chunkMap(String namespace) {
        return catalog.chunkMap(namespace)
                .orElseThrow(
                        () -> new IllegalArgumentException(namespace + " is not sharded; call shardCollection first"));
    }

    @Override
    public void close() {
        mongos.forEach(EmulatedNode::close);
        router.close();
        shardSets.forEach(ShardReplicaSet::close);
        refreshThreads.shutdownNow();
        catalog.close();
    }

    @Override
    public String toString() {
        return "EmulatedShardedCluster{" + shardSets.size() + " shards, " + connectionString() + "}";
    }

    private static String shardName(int i) {
        return String.format("shard%02d", i);
    }

    /** Builds and starts an {@link EmulatedShardedCluster}. */
    public static final class Builder {
        private int shards = 2;
        private int mongos = 1;
        private int port;
        private ServerVersion version = ServerVersion.V4_4;
        private int nodesPerShard = 1;
        private boolean replicatingShards;
        private java.time.Duration shardElectionTimeout = java.time.Duration.ofSeconds(10);
        private java.time.Duration routingRefreshLimit = java.time.Duration.ofSeconds(30);
        private int staleConfigRetries = MongosRouter.DEFAULT_STALE_CONFIG_RETRIES;
        private final ShardLatency latency = new ShardLatency();
        private final Map<Integer, Double> slowFactors = new LinkedHashMap<>();
        private final Users users = new Users();

        private Builder() {}

        /**
         * Adds a user in {@code admin} (SCRAM-SHA-256) with built-in roles (see {@link Users}); with one user,
         * authorization is on at every mongos and clients must authenticate.
         *
         * @param name     the user name
         * @param password the user's password
         * @param roles    built-in role names
         * @return this builder
         */
        public Builder user(String name, String password, String... roles) {
            users.add(name, password, roles);
            return this;
        }

        /**
         * The loopback port of the first mongos, default 0 (any free port); mongos {@code i} listens on
         * {@code port + i}. The shards' members take free ports.
         *
         * @param port 0 or 1 to 65535
         * @return this builder
         * @throws IllegalArgumentException outside 0-65535
         */
        public Builder port(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port (" + port + ") must be 0 (any free port) or 1-65535");
            }
            this.port = port;
            return this;
        }

        /**
         * How many shards, default 2.
         *
         * @param count the number of shards, 1 to 64
         * @return this builder
         * @throws IllegalArgumentException below 1 or above 64
         */
        public Builder shards(int count) {
            if (count < 1 || count > 64) {
                throw new IllegalArgumentException("shards (" + count + ") must be 1-64");
            }
            this.shards = count;
            return this;
        }

        /**
         * How many mongos endpoints, default 1.
         *
         * @param count 1 to 16
         * @return this builder
         * @throws IllegalArgumentException below 1 or above 16
         */
        public Builder mongos(int count) {
            if (count < 1 || count > 16) {
                throw new IllegalArgumentException("mongos (" + count + ") must be 1-16");
            }
            this.mongos = count;
            return this;
        }

        /**
         * Members per shard replica set, default 1 (a primary only); the others are secondaries named
         * {@code shard00-1}, {@code shard00-2}, ...
         *
         * @param count 1 to 7
         * @return this builder
         * @throws IllegalArgumentException below 1 or above 7
         */
        public Builder nodesPerShard(int count) {
            if (count < 1 || count > 7) {
                throw new IllegalArgumentException("nodesPerShard (" + count + ") must be 1-7");
            }
            this.nodesPerShard = count;
            return this;
        }

        /**
         * Whether each shard is a replicating replica set (default false): oplogs, write concern, retryable-write
         * records replicated with the writes, elections, stepdown, restarts, partitions and rollback, driven from
         * {@link #shardSet(int)}; mongos follows each shard's primary. Needs {@link #nodesPerShard} of 3 or more (an
         * election needs a majority of the members).
         *
         * @param replicating true for replicating shards
         * @return this builder
         */
        public Builder replicatingShards(boolean replicating) {
            this.replicatingShards = replicating;
            return this;
        }

        /**
         * How long the members of a replicating shard go without a reachable primary before they elect one, default
         * 10 s (mongod's {@code electionTimeoutMillis}); tests scale it down.
         *
         * @param timeout positive
         * @return this builder
         * @throws IllegalArgumentException unless positive
         */
        public Builder shardElectionTimeout(java.time.Duration timeout) {
            Objects.requireNonNull(timeout, "shardElectionTimeout");
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("shardElectionTimeout (" + timeout + ") must be positive");
            }
            this.shardElectionTimeout = timeout;
            return this;
        }

        /**
         * How long a secondary waits for its primary's {@code _flushRoutingTableCacheUpdates} during a refresh,
         * default 30 s as on a real server; tests scale it down.
         *
         * @param limit a positive duration
         * @return this builder
         * @throws IllegalArgumentException unless positive
         */
        public Builder routingRefreshLimit(java.time.Duration limit) {
            Objects.requireNonNull(limit, "routingRefreshLimit");
            if (limit.isNegative() || limit.isZero()) {
                throw new IllegalArgumentException("routingRefreshLimit (" + limit + ") must be positive");
            }
            this.routingRefreshLimit = limit;
            return this;
        }

        /**
         * How many times mongos resends a read after {@code StaleConfig} before the error reaches the client,
         * default 10.
         *
         * @param retries 0 to 100
         * @return this builder
         * @throws IllegalArgumentException below 0 or above 100
         */
        public Builder staleConfigRetries(int retries) {
            if (retries < 0 || retries > 100) {
                throw new IllegalArgumentException("staleConfigRetries (" + retries + ") must be 0-100");
            }
            this.staleConfigRetries = retries;
            return this;
        }

        /**
         * The server version every node reports, default 4.4.
         *
         * @param version the version
         * @return this builder
         */
        public Builder serverVersion(ServerVersion version) {
            this.version = Objects.requireNonNull(version, "serverVersion");
            return this;
        }

        /**
         * Simulated mongos-to-shard round trip per child batch, default zero.
         *
         * @param roundTrip the round trip
         * @return this builder
         */
        public Builder roundTrip(java.time.Duration roundTrip) {
            latency.roundTrip(roundTrip);
            return this;
        }

        /**
         * Simulated cost per write in a child batch, default zero.
         *
         * @param perDocument the cost of one write
         * @return this builder
         */
        public Builder perDocument(java.time.Duration perDocument) {
            latency.perDocument(perDocument);
            return this;
        }

        /**
         * Multiplies the child-batch cost (round trip and documents) of shard {@code i}, default 1.
         *
         * @param shard  the shard's index
         * @param factor the multiplier, at least 1
         * @return this builder
         */
        public Builder slowFactor(int shard, double factor) {
            latency.slowFactor(shardName(shard), factor); // validates the factor now
            slowFactors.put(shard, factor);
            return this;
        }

        /**
         * Starts the shards and the mongos endpoints on loopback ports.
         *
         * @return the running cluster; close it to stop it
         * @throws IllegalStateException when a slow factor names a shard beyond {@link #shards(int)}, or replicating
         *                               shards have fewer than 3 members
         */
        public EmulatedShardedCluster start() {
            if (port != 0 && port + mongos - 1 > 65535) {
                throw new IllegalStateException("port (" + port + ") leaves no room for " + mongos + " mongos on ports "
                        + port + "-" + (port + mongos - 1) + "; lower it");
            }
            for (int shard : slowFactors.keySet()) {
                if (shard < 0 || shard >= shards) {
                    throw new IllegalStateException("slowFactor names shard " + shard + " but there are " + shards
                            + " shards (0-" + (shards - 1) + "); raise shards or fix the index");
                }
            }
            if (replicatingShards && nodesPerShard < 3) {
                throw new IllegalStateException(
                        "replicatingShards needs nodesPerShard of 3 or more (an election needs a"
                                + " majority of the members), not " + nodesPerShard + "; call nodesPerShard(3)");
            }
            return new EmulatedShardedCluster(this);
        }
    }
}
