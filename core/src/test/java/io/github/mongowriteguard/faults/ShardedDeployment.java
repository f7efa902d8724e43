package io.github.mongowriteguard.faults;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.bson.BsonDocument;
import org.bson.BsonString;

import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;

/**
 * A sharded cluster of 3 shards (a primary each) behind 2 mongos, the collection sharded hashed on {@code _id}. Write
 * faults go to a mongos or a shard primary; stalls to a shard; the gate's {@code currentOp} faults to every mongos.
 * Failover, restarts and partitions are not injected here (the emulated shards do not replicate).
 */
final class ShardedDeployment implements Deployment {
    private static final int SHARDS = 3;
    private static final int MONGOS = 2;
    private final EmulatedShardedCluster cluster;
    private final FaultConfig config;

    ShardedDeployment(FaultConfig config) {
        this.config = config;
        this.cluster = EmulatedCluster.sharded().shards(SHARDS).mongos(MONGOS).start();
        cluster.shardCollection(Workload.DATABASE + "." + Workload.COLLECTION,
            ShardKey.of(new BsonDocument("_id", new BsonString("hashed"))));
    }

    @Override
    public String connectionString() {
        return cluster.connectionString();
    }

    @Override
    public Runnable inject(Fault fault, Random random) {
        EmulatedNode shard = cluster.shard(random.nextInt(SHARDS));
        EmulatedNode mongos = cluster.mongos(random.nextInt(MONGOS));
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
        for (int i = 0; i < SHARDS; i++) {
            NodeFaults.clear(cluster.shard(i));
        }
        for (int i = 0; i < MONGOS; i++) {
            NodeFaults.clear(cluster.mongos(i));
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
