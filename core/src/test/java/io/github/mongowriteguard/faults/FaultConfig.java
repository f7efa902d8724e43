package io.github.mongowriteguard.faults;

import java.time.Duration;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * One fault run's parameters: the seed (the workload and the nemesis' choices follow from it; thread timing does not),
 * the deployment, how many clients run how many operations each, which faults the nemesis may inject, and the
 * timeouts both writers use.
 *
 * <p>From system properties ({@link #fromSystemProperties}): {@code faults.seed} (default: a fresh one, printed),
 * {@code faults.operations} (per client, default {@value #DEFAULT_OPERATIONS}), {@code faults.clients} (default 3),
 * {@code faults.shards} (sharded runs: shards of 3 replicating members, default 3).
 *
 * @param socketTimeout  the client's socket read timeout (both writers)
 * @param serverDeadline the guard's {@code maxTimeMS} (below the socket timeout)
 * @param thinkTime      a client's mean pause between two operations
 * @param shards         shards of a sharded run (each a replica set of 3 replicating members), 1 to 8
 */
public record FaultConfig(
        long seed,
        Topology topology,
        int clients,
        int operationsPerClient,
        Set<Fault> faults,
        Duration socketTimeout,
        Duration serverDeadline,
        Duration electionTimeout,
        Duration thinkTime,
        int shards) {
    /** Operations per client when {@code faults.operations} is not set: a bounded run on 2 cores. */
    public static final int DEFAULT_OPERATIONS = 300;

    public FaultConfig {
        Objects.requireNonNull(topology, "topology");
        faults = Set.copyOf(faults);
        if (clients < 1 || operationsPerClient < 1) {
            throw new IllegalArgumentException(
                    "clients (" + clients + ") and operationsPerClient (" + operationsPerClient + ") must be positive");
        }
        if (shards < 1 || shards > 8) {
            throw new IllegalArgumentException("shards (" + shards + ") must be 1-8");
        }
        if (serverDeadline.compareTo(socketTimeout) >= 0) {
            throw new IllegalArgumentException(
                    "serverDeadline (" + serverDeadline + ") must be below socketTimeout (" + socketTimeout + ")");
        }
    }

    /** The faults a topology supports: every one (the sharded cluster's shards replicate). */
    public static Set<Fault> supported(Topology topology) {
        Objects.requireNonNull(topology, "topology");
        return EnumSet.allOf(Fault.class);
    }

    public static FaultConfig of(Topology topology, long seed, int clients, int operationsPerClient) {
        return new FaultConfig(
                seed,
                topology,
                clients,
                operationsPerClient,
                supported(topology),
                Duration.ofMillis(1000),
                Duration.ofMillis(600),
                Duration.ofMillis(300),
                Duration.ofMillis(20),
                3);
    }

    /** A run configured by {@code faults.seed}, {@code faults.operations} and {@code faults.clients}. */
    public static FaultConfig fromSystemProperties(Topology topology) {
        String seed = System.getProperty("faults.seed", "").trim();
        return of(
                        topology,
                        seed.isEmpty() ? System.nanoTime() : Long.parseLong(seed),
                        Integer.getInteger("faults.clients", 3),
                        Integer.getInteger("faults.operations", DEFAULT_OPERATIONS))
                .withShards(Integer.getInteger("faults.shards", 3));
    }

    /** The same run on {@code count} shards (sharded runs only). */
    public FaultConfig withShards(int count) {
        return new FaultConfig(
                seed,
                topology,
                clients,
                operationsPerClient,
                faults,
                socketTimeout,
                serverDeadline,
                electionTimeout,
                thinkTime,
                count);
    }

    /** What the run writes to, e.g. {@code sharded (4 shards of 3 replicating members, 2 mongos)}. */
    public String deployment() {
        return topology == Topology.SHARDED
                ? "sharded (" + shards + " shards of 3 replicating members, 2 mongos)"
                : topology.label();
    }

    public FaultConfig withSeed(long newSeed) {
        return new FaultConfig(
                newSeed,
                topology,
                clients,
                operationsPerClient,
                faults,
                socketTimeout,
                serverDeadline,
                electionTimeout,
                thinkTime,
                shards);
    }

    public FaultConfig withFaults(Set<Fault> only) {
        return new FaultConfig(
                seed,
                topology,
                clients,
                operationsPerClient,
                only,
                socketTimeout,
                serverDeadline,
                electionTimeout,
                thinkTime,
                shards);
    }
}
