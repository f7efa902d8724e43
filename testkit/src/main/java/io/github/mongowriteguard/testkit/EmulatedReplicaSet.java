package io.github.mongowriteguard.testkit;

import io.github.mongowriteguard.testkit.auth.Users;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.node.NodeIdentity;
import io.github.mongowriteguard.testkit.node.NodeInternals;
import io.github.mongowriteguard.testkit.replication.MemberState;
import io.github.mongowriteguard.testkit.replication.PartitionMode;
import io.github.mongowriteguard.testkit.replication.ReplicaSetCoordinator;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import io.github.mongowriteguard.testkit.server.Storage;
import io.github.mongowriteguard.testkit.truth.ServerTruth;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;
import org.bson.BsonDocument;

/**
 * An emulated replica set. By default one member, a primary that announces itself with {@code setName}, so the driver
 * discovers a replica set, attaches {@code lsid} to commands and {@code txnNumber} to retryable writes.
 *
 * <p>With {@link Builder#members(int) members(3)} it replicates: every member has its own data and oplog, secondaries
 * apply the primary's oplog (documents and retryable-write records), {@code w: "majority"} waits for them, and the set
 * elects a new primary when the primary steps down, stops or is partitioned away; what a deposed primary wrote alone is
 * rolled back when it rejoins.
 *
 * <pre>{@code
 * try (EmulatedReplicaSet set = EmulatedCluster.replicaSet().members(3).electionTimeout(Duration.ofMillis(300)).start()) {
 *     EmulatedNode old = set.primary();
 *     set.pauseReplication(set.secondaries().get(0));  // leave w:1 writes unreplicated on one secondary
 *     set.stepDown(Duration.ofSeconds(60), Duration.ZERO, true);
 *     EmulatedNode next = set.awaitPrimary(Duration.ofSeconds(5));
 *     set.restart(old);
 *     try (EmulatedReplicaSet.Partition cut = set.partition(next, PartitionMode.BLACK_HOLE)) { ... }
 * }
 * }</pre>
 */
public final class EmulatedReplicaSet implements EmulatedCluster {
    private final EmulatedNode single;
    private final ReplicaSetCoordinator replication;
    private final String setName;
    private final Users users;

    private EmulatedReplicaSet(Builder builder) {
        this.setName = builder.setName;
        this.users = builder.users;
        if (builder.members == 1) {
            this.single = new EmulatedNode(
                    builder.setName,
                    NodeIdentity.primary(builder.setName, builder.version),
                    builder.port,
                    builder.storage);
            NodeInternals.of(single).users(builder.users);
            this.replication = null;
        } else {
            this.single = null;
            int port = builder.port;
            this.replication = new ReplicaSetCoordinator(
                    builder.setName,
                    builder.version,
                    builder.members,
                    builder.electionTimeout,
                    builder.users,
                    i -> builder.setName + "-" + i,
                    (i, member) -> member,
                    i -> port == 0 ? 0 : port + i);
        }
    }

    /** {@return a builder with every default (same as {@link EmulatedCluster#replicaSet()})} */
    public static Builder builder() {
        return new Builder();
    }

    /** {@code mongodb://h1,h2,h3/?replicaSet=rs0}: every member, so the driver finds the primary after a failover. */
    @Override
    public String connectionString() {
        return "mongodb://" + members().stream().map(EmulatedNode::address).collect(Collectors.joining(","))
                + "/?replicaSet=" + setName;
    }

    /**
     * The primary: fail points, stalls, kills and its own truth. In a replicating set, the member that is primary now.
     *
     * @return the primary node
     * @throws IllegalStateException while the set has no primary (an election is due; see {@link #awaitPrimary})
     */
    public EmulatedNode primary() {
        if (single != null) {
            return single;
        }
        EmulatedNode primary = replication.primary();
        if (primary == null) {
            throw new IllegalStateException(setName + " has no primary now (an election is due); call awaitPrimary");
        }
        return primary;
    }

    /**
     * Every member, in a fixed order (member 0 is the first primary).
     *
     * @return the members, member 0 first
     */
    public List<EmulatedNode> members() {
        return single != null ? List.of(single) : replication.nodes();
    }

    /**
     * Member {@code i} (from 0).
     *
     * @param i the member's index, from 0
     * @return the member
     */
    public EmulatedNode member(int i) {
        return members().get(i);
    }

    /**
     * The members that are secondaries now.
     *
     * @return the secondaries; none for a single-member set
     */
    public List<EmulatedNode> secondaries() {
        return members().stream()
                .filter(m -> single == null && replication.state(m) == MemberState.SECONDARY)
                .toList();
    }

    /**
     * A member's state now.
     *
     * @param member a member of this set
     * @return its state; {@code PRIMARY} for a single-member set
     */
    public MemberState state(EmulatedNode member) {
        return single != null ? MemberState.PRIMARY : replication.state(member);
    }

    /** The union of every member's truth: a retry on a new primary is the same copy as its original. */
    @Override
    public ServerTruth truth() {
        return single != null
                ? single.truth()
                : ServerTruth.union(members().stream().map(EmulatedNode::truth).toList());
    }

    /**
     * The users the set authenticates (authorization is on once one exists); users may be added while it runs.
     *
     * @return the users, shared by every member
     */
    public Users users() {
        return users;
    }

    /**
     * Whether the set replicates (more than one member).
     *
     * @return true when the set has more than one member
     */
    public boolean replicates() {
        return replication != null;
    }

    // ---- replication, elections and faults (members(2+) only) ---------------------------------------------

    /**
     * {@code replSetStepDown} on the primary: kills its writes, waits up to {@code catchUpPeriod} for a majority and an
     * electable secondary to reach its last write (unless {@code force}, which steps down after that period anyway),
     * steps down and stays unelectable for {@code stepDownPeriod}. A caught-up secondary is elected at once; otherwise
     * an election follows after the election timeout.
     *
     * @throws IllegalStateException with the server's error when the stepdown fails (e.g. {@code ExceededTimeLimit})
     * @param stepDownPeriod how long the stepped-down primary stays unelectable
     * @param catchUpPeriod  how long to wait for a majority and an electable secondary to catch up
     * @param force          whether to step down after {@code catchUpPeriod} even when no secondary caught up
     */
    public void stepDown(Duration stepDownPeriod, Duration catchUpPeriod, boolean force) {
        BsonDocument reply = replication().stepDown(primary(), stepDownPeriod, catchUpPeriod, force);
        if (reply.getNumber("ok").intValue() != 1) {
            throw new IllegalStateException("replSetStepDown failed: " + reply.toJson());
        }
    }

    /** {@code replSetStepDown: 60} with the default catch-up period of 10 s, not forced. */
    public void stepDown() {
        stepDown(Duration.ofSeconds(60), Duration.ofSeconds(10), false);
    }

    /**
     * {@code replSetStepUp} on {@code member}: it becomes primary now if it can win an election.
     *
     * @param member the member to elect
     * @throws IllegalStateException with the server's error when the step-up fails
     */
    public void stepUp(EmulatedNode member) {
        BsonDocument reply = replication().stepUp(member);
        if (reply.getNumber("ok").intValue() != 1) {
            throw new IllegalStateException("replSetStepUp failed: " + reply.toJson());
        }
    }

    /**
     * Waits until a primary is elected and reachable.
     *
     * @param timeout how long to wait
     * @return the primary (the only member of a single-member set, at once)
     * @throws IllegalStateException after the timeout, or when the wait is interrupted
     */
    public EmulatedNode awaitPrimary(Duration timeout) {
        if (single != null) {
            return single;
        }
        try {
            EmulatedNode primary = replication.awaitPrimary(timeout);
            if (primary == null) {
                throw new IllegalStateException(setName + " elected no primary within " + timeout);
            }
            return primary;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for a primary", e);
        }
    }

    /**
     * Stops replication to a secondary ({@code true}) or resumes it, as the {@code stopReplProducer} fail point does:
     * writes the primary takes meanwhile stay unreplicated on it, so {@code w: "majority"} waits and a forced failover
     * can roll back {@code w: 1} writes. Survives restarts of the member.
     *
     * @param secondary the secondary to stop or resume replicating to
     * @param paused    true to stop replication to it, false to resume it
     */
    public void pauseReplication(EmulatedNode secondary, boolean paused) {
        replication().pauseReplication(secondary, paused);
    }

    /**
     * {@link #pauseReplication(EmulatedNode, boolean) pauseReplication(secondary, true)}.
     *
     * @param secondary the secondary to stop replicating to
     */
    public void pauseReplication(EmulatedNode secondary) {
        pauseReplication(secondary, true);
    }

    /**
     * {@link #pauseReplication(EmulatedNode, boolean) pauseReplication(secondary, false)}.
     *
     * @param secondary the secondary to resume replicating to
     */
    public void resumeReplication(EmulatedNode secondary) {
        pauseReplication(secondary, false);
    }

    /**
     * Waits until every reachable, replicating member holds the primary's whole oplog.
     *
     * @param timeout how long to wait
     * @return true once they do (at once for a single-member set), false after the timeout or when interrupted
     */
    public boolean awaitReplication(Duration timeout) {
        if (single != null) {
            return true;
        }
        try {
            return replication.awaitReplication(timeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Stops a member at once (kill -9): connections closed, running operations lost, its oplog kept for {@link #start}.
     *
     * @param member the member to stop
     */
    public void stop(EmulatedNode member) {
        replication().stop(member);
    }

    /**
     * Starts a stopped member: it recovers from its oplog and rejoins as a secondary.
     *
     * @param member the stopped member to start
     */
    public void start(EmulatedNode member) {
        replication().start(member);
    }

    /**
     * {@link #stop} then {@link #start}: majority-committed data and retryable-write records survive.
     *
     * @param member the member to restart
     */
    public void restart(EmulatedNode member) {
        stop(member);
        start(member);
    }

    /** A network partition around one member, until {@link Partition#heal()} (or {@code close()}). */
    public interface Partition extends AutoCloseable {
        /** {@return the partitioned member} */
        EmulatedNode member();

        /**
         * Ends the partition: the member is reachable again.
         */
        void heal();

        @Override
        default void close() {
            heal();
        }
    }

    /**
     * Cuts {@code member} off from clients and the other members (connections closed, or a black hole).
     *
     * @param member the member to cut off
     * @param mode   whether its connections are closed or its requests and replies are lost
     * @return the partition, to heal it
     */
    public Partition partition(EmulatedNode member, PartitionMode mode) {
        ReplicaSetCoordinator coordinator = replication();
        coordinator.partition(member, mode);
        return new Partition() {
            @Override
            public EmulatedNode member() {
                return member;
            }

            @Override
            public void heal() {
                coordinator.heal(member);
            }
        };
    }

    /**
     * Heals any partition of {@code member} (nothing happens when it is not partitioned).
     *
     * @param member the member to reconnect
     */
    public void heal(EmulatedNode member) {
        replication().heal(member);
    }

    /**
     * The documents of the writes rolled back so far, as rollback files list them ({@code {op, ns, o}}).
     *
     * @return the rolled-back writes' documents; none for a single-member set
     */
    public List<BsonDocument> rolledBack() {
        return single != null ? List.of() : replication.rolledBack();
    }

    /**
     * How many oplog entries a member holds (its last applied optime's index).
     *
     * @param member a member of this set
     * @return the number of entries in its oplog
     */
    public int oplogSize(EmulatedNode member) {
        return replication().oplogSize(member);
    }

    private ReplicaSetCoordinator replication() {
        if (replication == null) {
            throw new UnsupportedOperationException("a single-member set does not replicate, elect or restart;"
                    + " start one with EmulatedCluster.replicaSet().members(3)");
        }
        return replication;
    }

    @Override
    public void close() {
        if (single != null) {
            single.close();
        } else {
            replication.close();
        }
    }

    @Override
    public String toString() {
        return "EmulatedReplicaSet{" + connectionString() + "}";
    }

    /** Builds and starts an {@link EmulatedReplicaSet}. */
    public static final class Builder {
        private String setName = "rs0";
        private ServerVersion version = ServerVersion.V4_4;
        private int port;
        private int members = 1;
        private Storage storage = Storage.MEMORY;
        private Duration electionTimeout = Duration.ofSeconds(10);
        private final Users users = new Users();

        private Builder() {}

        /**
         * Adds a user in {@code admin} (SCRAM-SHA-256) with built-in roles (see {@link Users}); with one user,
         * authorization is on and every client must authenticate ({@code mongodb://user:password@host/?authSource=admin}).
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
         * The replica set name, default {@code rs0}.
         *
         * @param name the replica set name
         * @return this builder
         */
        public Builder setName(String name) {
            this.setName = Objects.requireNonNull(name, "setName");
            return this;
        }

        /**
         * The server version to report and follow, default 4.4 (wire version 9).
         *
         * @param version the version
         * @return this builder
         */
        public Builder serverVersion(ServerVersion version) {
            this.version = Objects.requireNonNull(version, "serverVersion");
            return this;
        }

        /**
         * The loopback port of the first member, default 0 (any free port); member {@code i} of a set of several listens on
         * {@code port + i}.
         *
         * @param port 0 or 1 to 65535
         * @return this builder
         */
        public Builder port(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port (" + port + ") must be 0 (any free port) or 1-65535");
            }
            this.port = port;
            return this;
        }

        /**
         * How many members, default 1 (a primary that does not replicate). With 2-7 the set replicates, elects and
         * can restart and partition members (each on a port of its own).
         *
         * @param count 1 to 7
         * @return this builder
         * @throws IllegalArgumentException outside 1-7
         */
        public Builder members(int count) {
            if (count < 1 || count > 7) {
                throw new IllegalArgumentException("members (" + count + ") must be 1-7");
            }
            this.members = count;
            return this;
        }

        /**
         * How long the members wait without a reachable primary before they elect one, and how long a primary that
         * cannot see a majority stays primary; default 10 s (mongod's {@code electionTimeoutMillis}). Tests scale it
         * down.
         *
         * @param timeout positive
         * @return this builder
         * @throws IllegalArgumentException unless positive
         */
        public Builder electionTimeout(Duration timeout) {
            Objects.requireNonNull(timeout, "electionTimeout");
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("electionTimeout (" + timeout + ") must be positive");
            }
            this.electionTimeout = timeout;
            return this;
        }

        /**
         * Where the set keeps what it is asked to write, default {@link Storage#MEMORY}. {@link Storage#NONE} stores
         * nothing and answers writes by count (for benchmarks of the client; see {@link Storage#NONE} for what each
         * write is answered); only for a set of one member (replication copies stored documents).
         *
         * @param where {@code MEMORY} or {@code NONE}
         * @return this builder
         */
        public Builder storage(Storage where) {
            this.storage = Objects.requireNonNull(where, "storage");
            return this;
        }

        /**
         * Starts the set on loopback ports.
         *
         * @return the running replica set; close it to stop it
         * @throws IllegalStateException when {@code Storage.NONE} is given for a set of several members, or the members'
         *                               ports would pass 65535
         */
        public EmulatedReplicaSet start() {
            if (port != 0 && port + members - 1 > 65535) {
                throw new IllegalStateException("port (" + port + ") leaves no room for " + members
                        + " members on ports " + port + "-" + (port + members - 1) + "; lower it");
            }
            if (members > 1 && storage != Storage.MEMORY) {
                throw new IllegalStateException("storage (" + storage + ") applies to a set of one member; a set of "
                        + members + " members replicates stored documents: use members(1) or Storage.MEMORY");
            }
            return new EmulatedReplicaSet(this);
        }
    }
}
