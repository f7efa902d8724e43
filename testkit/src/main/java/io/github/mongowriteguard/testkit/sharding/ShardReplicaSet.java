package io.github.mongowriteguard.testkit.sharding;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.stream.Collectors;

import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

import io.github.mongowriteguard.testkit.ServerVersion;
import io.github.mongowriteguard.testkit.engine.StorageEngine;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.node.NodeIdentity;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.mongowriteguard.testkit.stall.StallMode;

/**
 * One shard of an emulated sharded cluster as a replica set: a primary (named like the shard, e.g.
 * {@code shard00}) and secondaries ({@code shard00-1}, {@code shard00-2}, ...), each an {@link EmulatedNode} on its
 * own port that answers {@code hello} as a member of the set {@code shard00}. Secondaries read the primary's data
 * (replication is synchronous) but keep their own in-memory routing metadata (see {@link ShardServer}).
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
 * <p>Elections are not emulated: the primary stays primary (as with {@code priority: 0} secondaries).
 */
public final class ShardReplicaSet implements AutoCloseable {
    private final String name;
    private final List<EmulatedNode> members = new ArrayList<>();
    private final Map<EmulatedNode, ShardServer> servers = new LinkedHashMap<>();

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
    public static ShardReplicaSet start(String name, int nodes, ServerVersion version, Duration refreshLimit,
                                 ExecutorService refreshThreads) {
        ShardReplicaSet set = new ShardReplicaSet(name);
        for (int i = 0; i < nodes; i++) {
            ShardServer server = new ShardServer(name, i == 0, refreshLimit, refreshThreads);
            EmulatedNode node = i == 0
                ? new EmulatedNode(name, NodeIdentity.primary(name, version), 0, server)
                : new EmulatedNode(name + "-" + i, NodeIdentity.secondary(name, version), 0, server);
            set.members.add(node);
            set.servers.put(node, server);
        }
        List<String> hosts = set.members.stream().map(EmulatedNode::address).toList();
        for (EmulatedNode node : set.members) {
            node.hosts(hosts);
            node.primaryAddress(set.primary().address());
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
        ShardServer primaryServer = servers.get(primary());
        servers.forEach((node, server) -> server.bind(node, primary(), primaryServer, catalog));
        if (primaryServer != null) {
            catalog.onChange(primaryServer::committed);
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

    /** {@return the shard's primary} */
    public EmulatedNode primary() {
        return members.get(0);
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

    /** {@return the shard's secondaries, in order} */
    public List<EmulatedNode> secondaries() {
        return members.subList(1, members.size());
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
        return members.stream().filter(m -> value.equals(m.tags().get(key))).findFirst()
            .orElseThrow(() -> new IllegalArgumentException("no member of " + name + " is tagged " + key + ":" + value));
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
     * Restarts a member's mongod as far as routing goes: its in-memory routing metadata is emptied (every sharded
     * collection is UNKNOWN until the member refreshes); data and the primary's {@code config.cache.*} stay.
     *
     * @param member the member to restart
     */
    public void restart(EmulatedNode member) {
        server(member).restart();
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
            ? readPreference.asDocument() : new BsonDocument();
        String mode = preference.getString("mode", new BsonString("primary")).getValue();
        BsonArray tagSets = preference.getArray("tags", new BsonArray(List.of(new BsonDocument())));
        EmulatedNode chosen;
        switch (mode) {
            case "primary":
            case "primaryPreferred":
                chosen = primary();
                break;
            case "secondary":
                chosen = match(secondaries(), tagSets);
                break;
            case "secondaryPreferred":
                chosen = match(secondaries(), tagSets);
                chosen = chosen == null ? primary() : chosen;
                break;
            default:
                chosen = match(members, tagSets);
                break;
        }
        if (chosen == null) {
            throw new ShardReadException(StorageEngine.error(133, "FailedToSatisfyReadPreference",
                "Could not find host matching read preference " + preference.toJson() + " for set " + name));
        }
        return chosen;
    }

    private static EmulatedNode match(List<EmulatedNode> candidates, BsonArray tagSets) {
        for (BsonValue tagSet : tagSets) {
            for (EmulatedNode node : candidates) {
                boolean all = tagSet.asDocument().entrySet().stream().allMatch(tag -> tag.getValue().isString()
                    && tag.getValue().asString().getValue().equals(node.tags().get(tag.getKey())));
                if (all) {
                    return node;
                }
            }
        }
        return null;
    }

    @Override
    public void close() {
        members.forEach(EmulatedNode::close);
    }

    @Override
    public String toString() {
        return "ShardReplicaSet{" + name + ", " + members.size() + " members}";
    }
}
