package io.github.mongowriteguard.faults;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.bson.BsonDocument;

import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.replication.MemberState;
import io.github.mongowriteguard.testkit.replication.PartitionMode;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;

/** A replica set of 3 replicating members: every fault, failover, restarts and partitions included. */
final class ReplicaSetDeployment implements Deployment {
    private final EmulatedReplicaSet set;
    private final FaultConfig config;

    ReplicaSetDeployment(FaultConfig config) {
        this.config = config;
        this.set = EmulatedCluster.replicaSet().members(3).electionTimeout(config.electionTimeout()).start();
    }

    @Override
    public String connectionString() {
        return set.connectionString();
    }

    private EmulatedNode primary() {
        try {
            return set.primary();
        } catch (IllegalStateException noPrimary) {
            return null;
        }
    }

    @Override
    public Runnable inject(Fault fault, Random random) {
        EmulatedNode primary = primary();
        switch (fault) {
            case FAILOVER: {
                if (primary == null) {
                    return () -> { };
                }
                // Half the time the secondaries lag first, so that writes the primary alone has (waiting for a majority)
                // are rolled back by the failover.
                List<EmulatedNode> lagging = random.nextBoolean() ? set.secondaries() : List.of();
                lagging.forEach(set::pauseReplication);
                pause(lagging.isEmpty() ? 0 : 100 + random.nextInt(300));
                Runnable heal = () -> lagging.forEach(set::resumeReplication);
                if (random.nextInt(3) == 0) {
                    set.stop(primary);
                    return () -> {
                        heal.run();
                        set.start(primary);
                    };
                }
                try {
                    set.stepDown(Duration.ofSeconds(1), lagging.isEmpty() ? Duration.ofMillis(500) : Duration.ZERO,
                        !lagging.isEmpty() || random.nextBoolean());
                } catch (IllegalStateException failed) {
                    // No secondary caught up in time: the primary stays, as on mongod.
                }
                return heal;
            }
            case RESTART: {
                EmulatedNode member = set.member(random.nextInt(3));
                if (set.state(member) == MemberState.DOWN) {
                    return () -> { };
                }
                set.stop(member);
                return () -> set.start(member);
            }
            case PARTITION: {
                EmulatedNode member = primary != null && random.nextBoolean() ? primary : set.member(random.nextInt(3));
                EmulatedReplicaSet.Partition cut = set.partition(member,
                    random.nextBoolean() ? PartitionMode.CLOSE_CONNECTIONS : PartitionMode.BLACK_HOLE);
                return cut::heal;
            }
            default:
                return primary == null ? () -> { } : NodeFaults.inject(fault, random, primary, primary, primary, config);
        }
    }

    private static void pause(int millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void quiesce() {
        for (EmulatedNode member : set.members()) {
            if (set.state(member) == MemberState.DOWN) {
                set.start(member);
            }
            set.heal(member);
            set.resumeReplication(member);
            NodeFaults.clear(member);
        }
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
