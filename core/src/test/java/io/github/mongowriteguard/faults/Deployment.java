package io.github.mongowriteguard.faults;

import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import java.util.List;
import java.util.Random;

/**
 * An emulated deployment a fault run writes to, and the nemesis' handle on it: each fault is injected on the nodes
 * where it belongs (the primary, a shard, a mongos) and returns what heals it.
 */
public interface Deployment extends AutoCloseable {

    static Deployment start(FaultConfig config) {
        return switch (config.topology()) {
            case REPLICA_SET -> new ReplicaSetDeployment(config);
            case SHARDED -> new ShardedDeployment(config);
        };
    }

    String connectionString();

    /**
     * Injects {@code fault} now.
     *
     * @return what heals it (a no-op when it could not be injected, e.g. while there is no primary)
     */
    Runnable inject(Fault fault, Random random);

    /**
     * Heals everything (fail points off, stalls released, partitions healed, stopped members started, replication
     * resumed) and waits until no write runs any more and the data has settled.
     */
    void quiesce();

    /** What the deployment went through, for the report (e.g. elections and rolled-back writes); may be empty. */
    default String summary() {
        return "";
    }

    /** The write commands clients sent, as the servers they reached recorded them (mongos for a sharded cluster). */
    List<ReceivedCommand> clientWriteCommands();

    @Override
    void close();
}
