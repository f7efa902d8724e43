package io.github.mongowriteguard.faults;

/** Where a fault run writes. */
public enum Topology {
    /** An emulated replica set of 3 replicating members (elections, restarts, partitions). */
    REPLICA_SET("replica set (3 members)"),
    /**
     * An emulated sharded cluster of shards of 3 replicating members (3 unless {@link FaultConfig#shards()} says
     * otherwise) behind 2 mongos, the collection sharded hashed on {@code _id}.
     */
    SHARDED("sharded (shards of 3 replicating members, 2 mongos)");

    private final String label;

    Topology(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
