package io.github.mongowriteguard.faults;

import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.node.Membership;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.bson.BsonDocument;
import org.bson.BsonString;

/**
 * A sharded cluster of {@link FaultConfig#shards()} shards, each a replica set of 3 replicating members, behind 2 mongos,
 * the collection sharded hashed on {@code _id}. Write faults go to a mongos or a shard's primary; stalls to a shard's
 * primary; the gate's {@code currentOp} faults to every mongos; failover, restarts and partitions to the members of a
 * shard (mongos follows the shard's primary as its replica set monitor does); a quarter of the partitions cut a mongos
 * off from the application instead.
 */
final class ShardedDeployment implements Deployment {
    private static final int MEMBERS = 3;
    private static final int MONGOS = 2;
    private final EmulatedShardedCluster cluster;
    private final FaultConfig config;

    ShardedDeployment(FaultConfig config) {
        this.config = config;
        this.cluster = EmulatedCluster.sharded()
                .shards(config.shards())
                .mongos(MONGOS)
                .nodesPerShard(MEMBERS)
                .replicatingShards(true)
                .shardElectionTimeout(config.electionTimeout())
                .start();
        cluster.shardCollection(
                Workload.DATABASE + "." + Workload.COLLECTION,
                ShardKey.of(new BsonDocument("_id", new BsonString("hashed"))));
    }

    @Override
    public String connectionString() {
        return cluster.connectionString();
    }

    private SetFaults.Members shard(int i) {
        return SetFaults.of(cluster.shardSet(i));
    }

    @Override
    public Runnable inject(Fault fault, Random random) {
        SetFaults.Members shardSet = shard(random.nextInt(config.shards()));
        if (fault == Fault.PARTITION && random.nextInt(4) == 0) {
            // A mongos cut off from the application (its calls to the shards go on): the driver uses the other one.
            EmulatedNode cut = cluster.mongos(random.nextInt(MONGOS));
            cut.cutOff(random.nextBoolean() ? Membership.Reach.CLOSED : Membership.Reach.BLACKHOLED);
            return () -> cut.cutOff(Membership.Reach.SERVING);
        }
        if (fault == Fault.FAILOVER || fault == Fault.RESTART || fault == Fault.PARTITION) {
            return SetFaults.inject(fault, random, shardSet);
        }
        EmulatedNode shard = shardSet.primaryNow();
        EmulatedNode mongos = cluster.mongos(random.nextInt(MONGOS));
        if (shard == null) {
            // The shard is electing: faults that need its primary wait for the next turn.
            return () -> {};
        }
        EmulatedNode writes = random.nextBoolean() ? mongos : shard;
        if (fault == Fault.CURRENT_OP_REFUSED || fault == Fault.GATE_CURRENT_OP_FAILS) {
            // The gate asks whichever mongos the driver picks: both fail.
            List<Runnable> heals = new ArrayList<>();
            for (int i = 0; i < MONGOS; i++) {
                heals.add(NodeFaults.inject(fault, random, cluster.mongos(i), shard, cluster.mongos(i), config));
            }
            return () -> heals.forEach(Runnable::run);
        }
        return NodeFaults.inject(fault, random, writes, shard, mongos, config);
    }

    @Override
    public void quiesce() {
        for (int i = 0; i < config.shards(); i++) {
            SetFaults.healAll(shard(i));
        }
        for (int i = 0; i < MONGOS; i++) {
            cluster.mongos(i).cutOff(Membership.Reach.SERVING);
            NodeFaults.clear(cluster.mongos(i));
        }
        for (int i = 0; i < config.shards(); i++) {
            if (!shard(i).awaitPrimary(Duration.ofSeconds(30))) {
                throw new IllegalStateException("shard " + i + " elected no primary 30 s after the run");
            }
        }
        try {
            if (!cluster.truth().awaitIdle(NodeFaults::isWrite, Duration.ofSeconds(60))
                    || !cluster.mongosTruth().awaitIdle(NodeFaults::isWrite, Duration.ofSeconds(60))) {
                throw new IllegalStateException("writes still run 60 s after the run");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        for (int i = 0; i < config.shards(); i++) {
            if (!shard(i).awaitReplication(Duration.ofSeconds(30))) {
                throw new IllegalStateException("shard " + i + " did not catch up after the run");
            }
        }
    }

    @Override
    public String summary() {
        int rolledBack = 0;
        for (int i = 0; i < config.shards(); i++) {
            rolledBack += cluster.shardSet(i).rolledBack().size();
        }
        return "rolled back " + rolledBack + " document change(s) of writes no majority of their shard had";
    }

    @Override
    public List<ReceivedCommand> clientWriteCommands() {
        return new ArrayList<>(cluster.mongosTruth().commands(NodeFaults::isWrite));
    }

    @Override
    public void close() {
        cluster.close();
    }
}
