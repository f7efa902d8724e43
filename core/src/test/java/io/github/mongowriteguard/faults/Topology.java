package io.github.mongowriteguard.faults;

/** Where a fault run writes. */
public enum Topology {
    /** An emulated replica set of 3 replicating members (elections, restarts, partitions). */
    REPLICA_SET("replica set (3 members)"),
    /** An emulated sharded cluster of 3 shards behind 2 mongos, the collection sharded hashed on {@code _id}. */
    SHARDED("sharded (3 shards, 2 mongos)");

    private final String label;

    Topology(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
