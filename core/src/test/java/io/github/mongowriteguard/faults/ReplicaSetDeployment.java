package io.github.mongowriteguard.faults;

import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.bson.BsonDocument;

/** A replica set of 3 replicating members: every fault, failover, restarts and partitions included. */
final class ReplicaSetDeployment implements Deployment {
    private final EmulatedReplicaSet set;
    private final FaultConfig config;

    ReplicaSetDeployment(FaultConfig config) {
        this.config = config;
        this.set = EmulatedCluster.replicaSet()
                .members(3)
                .electionTimeout(config.electionTimeout())
                .start();
    }

    @Override
    public String connectionString() {
        return set.connectionString();
    }

    @Override
    public Runnable inject(Fault fault, Random random) {
        SetFaults.Members members = SetFaults.of(set);
        switch (fault) {
            case FAILOVER:
            case RESTART:
            case PARTITION:
                return SetFaults.inject(fault, random, members);
            default:
                EmulatedNode primary = members.primaryNow();
                return primary == null ? () -> {} : NodeFaults.inject(fault, random, primary, primary, primary, config);
        }
    }

    @Override
    public void quiesce() {
        SetFaults.healAll(SetFaults.of(set));
        set.awaitPrimary(Duration.ofSeconds(30));
        awaitIdle();
        if (!set.awaitReplication(Duration.ofSeconds(30))) {
            throw new IllegalStateException("the set did not catch up after the run");
        }
    }

    private void awaitIdle() {
        try {
            if (!set.truth().awaitIdle(NodeFaults::isWrite, Duration.ofSeconds(60))) {
                throw new IllegalStateException("writes still run 60 s after the run");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public List<ReceivedCommand> clientWriteCommands() {
        return new ArrayList<>(set.truth().commands(NodeFaults::isWrite));
    }

    @Override
    public String summary() {
        return "rolled back " + set.rolledBack().size() + " document change(s) of writes no majority had";
    }

    /** The documents rolled back during the run (writes no majority had when a primary was deposed). */
    List<BsonDocument> rolledBack() {
        return set.rolledBack();
    }

    @Override
    public void close() {
        set.close();
    }
}
