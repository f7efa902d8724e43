package io.github.mongowriteguard.testkit.sharding;

import io.github.mongowriteguard.testkit.auth.Users;
import io.github.mongowriteguard.testkit.engine.StorageEngine;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.node.NodeIdentity;
import io.github.mongowriteguard.testkit.node.NodeInternals;
import io.github.mongowriteguard.testkit.replication.MemberState;
import io.github.mongowriteguard.testkit.replication.PartitionMode;
import io.github.mongowriteguard.testkit.replication.ReplicaSetCoordinator;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.mongowriteguard.testkit.stall.StallMode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.stream.Collectors;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * One shard of an emulated sharded cluster as a replica set: a primary (named like the shard, e.g.
 * {@code shard00}) and secondaries ({@code shard00-1}, {@code shard00-2}, ...), each an {@link EmulatedNode} on its
 * own port that answers {@code hello} as a member of the set {@code shard00}. Every member keeps its own in-memory
 * routing metadata (see {@link ShardServer}).
 *
 * <p>Two kinds: by default secondaries read the primary's data (replication is synchronous) and there are no
 * elections (as with {@code priority: 0} secondaries). A <em>replicating</em> shard
 * ({@code EmulatedShardedCluster.Builder#replicatingShards}) is a replica set of the {@code replication} package:
 * oplogs, appliers, write concern, retryable-write records replicated with the writes, elections, stepdown,
 * restarts, partitions and rollback; {@link #primary()} is then whichever member is primary now, and mongos targets it
 * as its replica set monitor finds it ({@link #targetPrimary}).
 *
 * <pre>{@code
 * ShardReplicaSet shardA = cluster.shardSet(0);
 * shardA.secondary(0).tags(Map.of("node", "a1"));       // as a reconfig with member tags
 * shardA.restart(shardA.secondary(0));                  // its routing metadata is now UNKNOWN
 * try (StallHandle stalled = shardA.stallPrimaryWrites()) {   // heartbeats answered, writes hang
 *     ...
 * }
 * }</pre>
 *
 */
public final class ShardReplicaSet implements AutoCloseable {
    /** mongos' wait for a host matching the read preference ({@code kDefaultFindHostMaxWaitTime}). */
    static final Duration FIND_HOST_MAX_WAIT = Duration.ofSeconds(20);

    private final String name;
    private final List<EmulatedNode> members = new ArrayList<>();
    private final Map<EmulatedNode, ShardServer> servers = new LinkedHashMap<>();
    private final Map<String, CollectionRouting> persisted = new ConcurrentHashMap<>();
    /** The migration critical sections of the shard's collections (held on behalf of its primary). */
    private final CollectionCriticalSections criticalSections = new CollectionCriticalSections();
    /** The replication of a replicating shard, null otherwise. */
    private ReplicaSetCoordinator replication;
    /** The host mongos' replica set monitor takes for the primary (null: find it again). */
    private volatile EmulatedNode monitored;

    private ShardReplicaSet(String name) {
        this.name = name;
    }

    /**
     * Starts the members of shard {@code name} (used by {@code EmulatedShardedCluster}); {@link #bind} completes
     * the wiring once the catalog exists. Refreshes of secondaries wait for their primary on {@code refreshThreads}.
     *
     * @param name           the shard's name
     * @param nodes          members, the primary included
     * @param version        the server version
     * @param refreshLimit   how long a secondary waits for its primary during a refresh
     * @param refreshThreads where refreshes run
     * @return the shard
     */
    public static ShardReplicaSet start(
            String name, int nodes, ServerVersion version, Duration refreshLimit, ExecutorService refreshThreads) {
        ShardReplicaSet set = new ShardReplicaSet(name);
        for (int i = 0; i < nodes; i++) {
            ShardServer server = new ShardServer(
                    name, i == 0, refreshLimit, refreshThreads, set.persisted, null, set.criticalSections);
            EmulatedNode node = i == 0
                    ? new EmulatedNode(name, NodeIdentity.primary(name, version), 0, server)
                    : new EmulatedNode(name + "-" + i, NodeIdentity.secondary(name, version), 0, server);
            set.members.add(node);
            set.servers.put(node, server);
        }
        List<String> hosts = set.members.stream().map(EmulatedNode::address).toList();
        for (EmulatedNode node : set.members) {
            NodeInternals.of(node).hosts(hosts);
            NodeInternals.of(node).primaryAddress(set.primary().address());
        }
        return set;
    }

    /**
     * Starts a replicating shard {@code name}: {@code nodes} members (named {@code shard00}, {@code shard00-1}, ...),
     * the first elected primary, replicating with the {@code replication} package's rules.
     *
     * @param name            the shard's name
     * @param nodes           members, 3 or more for elections that survive one member's loss
     * @param version         the server version
     * @param electionTimeout how long members go without a reachable primary before they elect one
     * @param refreshLimit    how long a secondary waits for its primary during a refresh
     * @param refreshThreads  where refreshes run
     * @return the shard
     */
    public static ShardReplicaSet startReplicating(
            String name,
            int nodes,
            ServerVersion version,
            Duration electionTimeout,
            Duration refreshLimit,
            ExecutorService refreshThreads) {
        ShardReplicaSet set = new ShardReplicaSet(name);
        List<ShardServer> created = new ArrayList<>();
        set.replication = new ReplicaSetCoordinator(
                name,
                version,
                nodes,
                electionTimeout,
                new Users(),
                i -> i == 0 ? name : name + "-" + i,
                (i, member) -> {
                    ShardServer server = new ShardServer(
                            name, false, refreshLimit, refreshThreads, set.persisted, member, set.criticalSections);
                    created.add(server);
                    return server;
                },
                i -> 0);
        List<EmulatedNode> nodesInOrder = set.replication.nodes();
        for (int i = 0; i < nodesInOrder.size(); i++) {
            set.members.add(nodesInOrder.get(i));
            set.servers.put(nodesInOrder.get(i), created.get(i));
        }
        return set;
    }

    /** A shard of one plain node, without routing metadata (the node ignores shard versions). */
    static ShardReplicaSet of(String name, EmulatedNode primary) {
        ShardReplicaSet set = new ShardReplicaSet(name);
        set.members.add(primary);
        return set;
    }

    /**
     * Connects the members to the config server's catalog; the primary learns committed chunk changes.
     *
     * @param catalog the config server's catalog
     */
    public void bind(ShardingCatalog catalog) {
        servers.forEach((node, server) -> server.bind(node, this::primaryOrNull, catalog));
        if (!servers.isEmpty()) {
            // The primary taking part in the commit learns the new version; config.cache.* is shared by the members.
            catalog.onChange(namespace -> {
                EmulatedNode primary = primaryOrNull();
                ShardServer server = primary == null ? null : servers.get(primary);
                (server != null ? server : servers.values().iterator().next()).committed(namespace);
            });
        }
    }

    /**
     * The shard's name, which is also the replica set name.
     *
     * @return the name
     */
    public String name() {
        return name;
    }

    /**
     * The shard's primary: the first member, or for a replicating shard the member primary now (waiting up to 10 s
     * while an election is due).
     *
     * @return the primary
     * @throws IllegalStateException when a replicating shard elects none within 10 s
     */
    public EmulatedNode primary() {
        if (replication == null) {
            return members.get(0);
        }
        EmulatedNode primary = awaitPrimary(Duration.ofSeconds(10));
        if (primary == null) {
            throw new IllegalStateException("shard " + name + " has no primary");
        }
        return primary;
    }

    /** The primary now, or null while a replicating shard has none. */
    EmulatedNode primaryOrNull() {
        return replication == null ? members.get(0) : replication.primary();
    }

    /**
     * Whether the shard is a replicating replica set (elections, failover, restarts, partitions).
     *
     * @return true for a replicating shard
     */
    public boolean replicates() {
        return replication != null;
    }

    /**
     * Secondary {@code i} (from 0).
     *
     * @param i the secondary's index
     * @return the secondary
     */
    public EmulatedNode secondary(int i) {
        return secondaries().get(i);
    }

    /** {@return the shard's secondaries (for a replicating shard: the members not primary now), in order} */
    public List<EmulatedNode> secondaries() {
        if (replication == null) {
            return members.subList(1, members.size());
        }
        EmulatedNode primary = replication.primary();
        return members.stream().filter(m -> m != primary).toList();
    }

    /**
     * Every member, the primary first.
     *
     * @return the members
     */
    public List<EmulatedNode> members() {
        return List.copyOf(members);
    }

    /**
     * The member whose tags hold {@code key: value}.
     *
     * @param key   the tag's name
     * @param value the tag's value
     * @return the member
     * @throws IllegalArgumentException if none does
     */
    public EmulatedNode memberTagged(String key, String value) {
        return members.stream()
                .filter(m -> value.equals(m.tags().get(key)))
                .findFirst()
                .orElseThrow(
                        () -> new IllegalArgumentException("no member of " + name + " is tagged " + key + ":" + value));
    }

    /**
     * {@code mongodb://h1,h2,h3/?replicaSet=shard00}, for a client that talks to the shard directly.
     *
     * @return the connection string
     */
    public String connectionString() {
        return "mongodb://" + members.stream().map(EmulatedNode::address).collect(Collectors.joining(","))
                + "/?replicaSet=" + name;
    }

    /**
     * Restarts a member's mongod. Its in-memory routing metadata is emptied (every sharded collection is UNKNOWN until
     * the member refreshes); {@code config.cache.*} stays. On a non-replicating shard that is all (data stays); on a
     * replicating one the member is also stopped and started ({@link #stop}, {@link #start}).
     *
     * @param member the member to restart
     */
    public void restart(EmulatedNode member) {
        if (replication != null) {
            stop(member);
            start(member);
            return;
        }
        server(member).restart();
    }

    // ---- a replicating shard's faults ---------------------------------------------------------------------

    private ReplicaSetCoordinator replication() {
        if (replication == null) {
            throw new IllegalStateException("shard " + name + " does not replicate: build the cluster with"
                    + " nodesPerShard(3).replicatingShards(true) for elections, restarts and partitions");
        }
        return replication;
    }

    /**
     * {@code replSetStepDown} on the shard's primary (see {@link ReplicaSetCoordinator#stepDown(EmulatedNode, Duration, Duration, boolean)}).
     *
     * @param stepDownPeriod how long the stepped-down primary stays unelectable
     * @param catchUpPeriod  how long to wait for a majority and an electable secondary to catch up
     * @param force          whether to step down after {@code catchUpPeriod} even when no secondary caught up
     * @throws IllegalStateException with the server's error when the stepdown fails
     */
    public void stepDown(Duration stepDownPeriod, Duration catchUpPeriod, boolean force) {
        BsonDocument reply = replication().stepDown(primary(), stepDownPeriod, catchUpPeriod, force);
        if (reply.getNumber("ok").intValue() != 1) {
            throw new IllegalStateException("replSetStepDown on " + name + " failed: " + reply.toJson());
        }
    }

    /**
     * Stops a member at once ({@code kill -9}): connections closed, running operations lost, its oplog kept.
     *
     * @param member the member
     */
    public void stop(EmulatedNode member) {
        replication().stop(member);
    }

    /**
     * Starts a stopped member: data and retryable-write records recovered from its oplog, routing metadata UNKNOWN.
     *
     * @param member the member
     */
    public void start(EmulatedNode member) {
        server(member).restart();
        replication().start(member);
    }

    /**
     * Cuts a member off from mongos, clients and the other members until {@link #heal}.
     *
     * @param member the member
     * @param mode   connections closed, or requests and replies lost
     */
    public void partition(EmulatedNode member, PartitionMode mode) {
        replication().partition(member, mode);
    }

    /**
     * Ends a member's partition.
     *
     * @param member the member
     */
    public void heal(EmulatedNode member) {
        replication().heal(member);
    }

    /**
     * Stops or resumes replication to a secondary ({@code stopReplProducer}).
     *
     * @param member the secondary
     * @param paused true to stop replication to it
     */
    public void pauseReplication(EmulatedNode member, boolean paused) {
        replication().pauseReplication(member, paused);
    }

    /**
     * A member's replication state.
     *
     * @param member the member
     * @return its state
     */
    public MemberState state(EmulatedNode member) {
        return replication().state(member);
    }

    /**
     * Waits until the shard has a reachable primary.
     *
     * @param timeout how long to wait
     * @return the primary, or null after the timeout
     */
    public EmulatedNode awaitPrimary(Duration timeout) {
        if (replication == null) {
            return members.get(0);
        }
        try {
            return replication.awaitPrimary(timeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /**
     * Waits until every reachable, replicating member holds the primary's whole oplog.
     *
     * @param timeout how long to wait
     * @return false after the timeout
     */
    public boolean awaitReplication(Duration timeout) {
        if (replication == null) {
            return true;
        }
        try {
            return replication.awaitReplication(timeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** {@return the documents of the writes rolled back on this shard so far (empty unless it replicates)} */
    public List<BsonDocument> rolledBack() {
        return replication == null ? List.of() : replication.rolledBack();
    }

    /**
     * The host mongos sends a write to: the primary as mongos' replica set monitor finds it
     * ({@code RemoteCommandTargeterRS::findHost}, {@code src/mongo/client/remote_command_targeter_rs.cpp}). The monitor
     * learns elections at once (the streamable {@code hello} of 4.4+) and never offers a host it cannot reach; while
     * the shard has no primary it waits, at most {@code kDefaultFindHostMaxWaitTime} (20 s,
     * {@code src/mongo/client/remote_command_targeter.cpp}) or the operation's own deadline.
     *
     * @param operationLeftNanos what is left of the operation's deadline ({@link Long#MAX_VALUE}: none)
     * @return the primary
     * @throws ShardReadException {@code FailedToSatisfyReadPreference} (133) after the wait, or
     *                            {@code MaxTimeMSExpired} (50) when the operation's deadline ended it
     */
    EmulatedNode targetPrimary(long operationLeftNanos) {
        if (replication == null) {
            return members.get(0);
        }
        EmulatedNode known = monitored;
        if (known != null) {
            io.github.mongowriteguard.testkit.node.Membership role =
                    NodeInternals.of(known).membership();
            boolean saysSecondary = role.reach() == io.github.mongowriteguard.testkit.node.Membership.Reach.SERVING
                    && !role.isWritablePrimary();
            if (!saysSecondary) {
                // Until a send fails, the monitor keeps the host it found, even one that crashed or was cut off.
                return known;
            }
        }
        long wait = Math.min(FIND_HOST_MAX_WAIT.toNanos(), operationLeftNanos);
        EmulatedNode primary = awaitPrimary(Duration.ofNanos(wait));
        if (primary != null) {
            monitored = primary;
            return primary;
        }
        if (operationLeftNanos < FIND_HOST_MAX_WAIT.toNanos()) {
            throw new ShardReadException(StorageEngine.error(50, "MaxTimeMSExpired", "operation timed out"));
        }
        throw new ShardReadException(StorageEngine.error(
                133,
                "FailedToSatisfyReadPreference",
                "Could not find host matching read preference { mode: \"primary\" } for set " + name));
    }

    /**
     * The part 5 state: the primary stays alive and answers {@code hello} (so no election), but every write on it
     * hangs, including the {@code config.cache.*} write a secondary's refresh waits for. Closing the handle
     * resumes the writes.
     *
     * @return the handle that resumes the writes
     */
    public StallHandle stallPrimaryWrites() {
        return primary().stall(new Stall("*", Stall.WRITE_COMMANDS, StallMode.UNINTERRUPTIBLE, Duration.ofDays(1)));
    }

    /**
     * The collection version a member holds in memory, empty when UNKNOWN.
     *
     * @param member    the member
     * @param namespace {@code db.collection}
     * @return the version, or empty
     */
    public OptionalLong routingVersion(EmulatedNode member, String namespace) {
        return server(member).version(namespace);
    }

    /**
     * How many versioned reads a member rejected as stale (each starts a refresh and ends in StaleConfig, or in
     * MaxTimeMSExpired when the read's own deadline ends the refresh first).
     *
     * @param member the member
     * @return the count
     */
    public long staleConfigReplies(EmulatedNode member) {
        return server(member).staleConfigReplies();
    }

    /**
     * The member's refresh-failure log lines ("Failed to refresh metadata for ...").
     *
     * @param member the member
     * @return the lines
     */
    public List<String> refreshLog(EmulatedNode member) {
        return server(member).refreshLog();
    }

    /** {@return the shard's migration critical sections} */
    CollectionCriticalSections criticalSections() {
        return criticalSections;
    }

    private ShardServer server(EmulatedNode member) {
        ShardServer server = servers.get(member);
        if (server == null) {
            throw new IllegalArgumentException(member + " is not a member of " + name + " with routing metadata");
        }
        return server;
    }

    /**
     * The member mongos reads from for a {@code $readPreference} (absent: primary), as a real mongos selects a
     * shard host: the first tag set that matches an eligible member wins; among several matches the first is taken.
     *
     * @throws ShardReadException with {@code FailedToSatisfyReadPreference} (133) when no member qualifies
     */
    EmulatedNode select(BsonValue readPreference) {
        BsonDocument preference = readPreference != null && readPreference.isDocument()
                ? readPreference.asDocument()
                : new BsonDocument();
        String mode = preference.getString("mode", new BsonString("primary")).getValue();
        BsonArray tagSets = preference.getArray("tags", new BsonArray(List.of(new BsonDocument())));
        EmulatedNode chosen;
        switch (mode) {
            case "primary":
            case "primaryPreferred":
                chosen = targetPrimary(Long.MAX_VALUE);
                break;
            case "secondary":
                chosen = match(secondaries(), tagSets);
                break;
            case "secondaryPreferred":
                chosen = match(secondaries(), tagSets);
                chosen = chosen == null ? targetPrimary(Long.MAX_VALUE) : chosen;
                break;
            default:
                chosen = match(members, tagSets);
                break;
        }
        if (chosen == null) {
            throw new ShardReadException(StorageEngine.error(
                    133,
                    "FailedToSatisfyReadPreference",
                    "Could not find host matching read preference " + preference.toJson() + " for set " + name));
        }
        return chosen;
    }

    private static EmulatedNode match(List<EmulatedNode> candidates, BsonArray tagSets) {
        for (BsonValue tagSet : tagSets) {
            for (EmulatedNode node : candidates) {
                boolean all = tagSet.asDocument().entrySet().stream()
                        .allMatch(tag -> tag.getValue().isString()
                                && tag.getValue()
                                        .asString()
                                        .getValue()
                                        .equals(node.tags().get(tag.getKey())));
                if (all) {
                    return node;
                }
            }
        }
        return null;
    }

    /**
     * {@code ReplicaSetMonitor::failedHost}: mongos' monitor no longer takes {@code host} for the primary.
     *
     * @param host the host a send to failed
     */
    void failedHost(EmulatedNode host) {
        if (monitored == host) {
            monitored = null;
        }
    }

    /**
     * {@code RemoteCommandTargeter::updateHostWithStatus} with the command's status and its write-concern status: a
     * not-primary error ({@code ErrorCodes::isNotPrimaryError}), a network error or a shutdown error marks the host
     * failed ({@code src/mongo/client/remote_command_targeter.h}, {@code src/mongo/s/client/shard_remote.cpp}).
     */
    void noteReply(EmulatedNode host, BsonDocument reply) {
        if (replication == null) {
            return;
        }
        int code = reply.get("ok", new org.bson.BsonInt32(1)).asNumber().doubleValue() == 1
                ? 0
                : reply.get("code", new org.bson.BsonInt32(0)).asNumber().intValue();
        BsonValue wce = reply.get("writeConcernError");
        int wceCode = wce != null && wce.isDocument()
                ? wce.asDocument()
                        .get("code", new org.bson.BsonInt32(0))
                        .asNumber()
                        .intValue()
                : 0;
        if (MARKS_HOST_FAILED.contains(code) || MARKS_HOST_FAILED.contains(wceCode)) {
            failedHost(host);
        }
    }

    /**
     * NotPrimary errors (10107, 13435, 13436, 189, 11602), network errors (6, 7, 89, 9001) and shutdown errors
     * (91, 11600), from {@code src/mongo/base/error_codes.yml}'s categories.
     */
    private static final java.util.Set<Integer> MARKS_HOST_FAILED =
            java.util.Set.of(10107, 13435, 13436, 189, 11602, 6, 7, 89, 9001, 91, 11600);

    @Override
    public void close() {
        if (replication != null) {
            replication.close();
            return;
        }
        members.forEach(EmulatedNode::close);
    }

    @Override
    public String toString() {
        return "ShardReplicaSet{" + name + ", " + members.size() + " members}";
    }
}
