package io.github.mongowriteguard.test;

import com.mongodb.ConnectionString;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.EmulatedStandalone;
import io.github.mongowriteguard.testkit.truth.ServerTruth;
import java.util.Objects;

/**
 * A running emulated deployment, as a test sees it: where to connect, and the counters a real server does not give
 * (mongos-to-shard round trips, server copies of each write). Everything else of the testkit (fail points, stalls,
 * failovers, chunk migrations) is on {@link #sharded()} and {@link #replicaSet()}.
 *
 * <pre>{@code
 * mongo.resetCounters();
 * template.bulkOps(BulkMode.ORDERED, Item.class).insert(items).execute();
 * assertThat(mongo.roundTrips()).isEqualTo(5);                          // one child batch per shard
 * assertThat(mongo.truth().maxConcurrentCopies(c -> c.commandName().equals("insert"))).isEqualTo(1);
 * }</pre>
 */
public final class EmulatedMongoCluster implements AutoCloseable {
    private final EmulatedCluster cluster;
    private final EmulatedMongoSpec spec;
    private final ConnectionString connectionString;

    EmulatedMongoCluster(EmulatedCluster cluster, EmulatedMongoSpec spec) {
        this.cluster = Objects.requireNonNull(cluster, "cluster");
        this.spec = Objects.requireNonNull(spec, "spec");
        this.connectionString = new ConnectionString(withDatabaseAndOptions(cluster.connectionString(), spec));
    }

    /** The testkit's connection string with the spec's database and options added, as the driver parses them. */
    static String withDatabaseAndOptions(String base, EmulatedMongoSpec spec) {
        int query = base.indexOf('?');
        String hosts = query < 0 ? base : base.substring(0, query);
        String existing = query < 0 ? "" : base.substring(query + 1);
        if (!hosts.endsWith("/")) {
            hosts = hosts + "/";
        }
        String options = existing.isEmpty()
                ? spec.options()
                : spec.options().isEmpty() ? existing : existing + "&" + spec.options();
        return hosts + spec.database() + (options.isEmpty() ? "" : "?" + options);
    }

    /** {@return the connection string: the deployment's hosts, the spec's database and options} */
    public ConnectionString connectionString() {
        return connectionString;
    }

    /** {@return what was started} */
    public EmulatedMongoSpec spec() {
        return spec;
    }

    /** {@return whether this is a sharded cluster} */
    public boolean isSharded() {
        return cluster instanceof EmulatedShardedCluster;
    }

    /**
     * The sharded cluster, for the testkit's own API: {@code shard(i).failCommand()}, {@code shard(i).stall(...)},
     * {@code routing()}, {@code moveChunk(...)}, {@code shardSet(i)} ...
     *
     * @return the cluster
     * @throws IllegalStateException when this is a replica set
     */
    public EmulatedShardedCluster sharded() {
        if (cluster instanceof EmulatedShardedCluster sharded) {
            return sharded;
        }
        throw new IllegalStateException(
                "this emulated deployment is a replica set; set shards (e.g. shards = 3) for a" + " sharded cluster");
    }

    /**
     * The standalone mongod, for the testkit's own API: {@code node().failCommand()}, {@code node().loseReplies(...)}
     * ...
     *
     * @return the standalone server
     * @throws IllegalStateException when this is a replica set or a sharded cluster
     */
    public EmulatedStandalone standalone() {
        if (cluster instanceof EmulatedStandalone standalone) {
            return standalone;
        }
        throw new IllegalStateException("this emulated deployment is not a standalone; set standalone = true");
    }

    /**
     * The replica set, for the testkit's own API: {@code primary().failCommand()}, {@code primary().stall(...)},
     * {@code stepDown(...)}, {@code restart(member)} ...
     *
     * @return the replica set
     * @throws IllegalStateException when this is a sharded cluster
     */
    public EmulatedReplicaSet replicaSet() {
        if (cluster instanceof EmulatedReplicaSet replicaSet) {
            return replicaSet;
        }
        throw new IllegalStateException(
                cluster instanceof EmulatedStandalone
                        ? "this emulated deployment is a standalone, not a replica set; use standalone()"
                        : "this emulated deployment is a sharded cluster, not a replica set; use sharded()");
    }

    /**
     * The mongos-to-shard round trips (child batches) of every {@code insert}, {@code update} and {@code delete} command
     * mongos routed since the start or the last {@link #resetCounters()}: what an ORDERED bulk multiplies and a guarded
     * bulk keeps to one per shard. A {@code findAndModify} (Spring's {@code findAndModify}, {@code findAndReplace},
     * {@code findAndRemove}) is not counted.
     *
     * @return the round trips
     * @throws IllegalStateException when this is a replica set (no mongos)
     */
    public long roundTrips() {
        return sharded().routing().childBatches();
    }

    /**
     * The rounds mongos ran: one per routed write command (each round sends its child batches to the shards at once).
     *
     * @return the rounds since the start or the last {@link #resetCounters()}
     * @throws IllegalStateException when this is a replica set (no mongos)
     */
    public long rounds() {
        return sharded().routing().rounds();
    }

    /**
     * What the servers saw (on a sharded cluster, the shards): commands, and copies of each write grouped by
     * {@code (lsid, txnNumber)}, e.g. {@code truth().maxConcurrentCopies(c -> c.commandName().equals("insert"))}.
     *
     * @return the server-side truth
     */
    public ServerTruth truth() {
        return cluster.truth();
    }

    /** Sets the counters back to zero: round trips, rounds and the servers' command records. */
    public void resetCounters() {
        if (cluster instanceof EmulatedShardedCluster sharded) {
            sharded.routing().reset();
            sharded.mongosTruth().reset();
        }
        cluster.truth().reset();
    }

    /** Stops the deployment; its data is gone. */
    @Override
    public void close() {
        cluster.close();
    }

    @Override
    public String toString() {
        return "EmulatedMongoCluster" + spec + " at " + connectionString;
    }
}
