package io.github.mongowriteguard.internal.catalog;

import io.github.mongowriteguard.internal.plan.KeyPlacement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonMaxKey;
import org.bson.BsonMinKey;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;

/**
 * The chunks of one collection sharded on {@code _id} that the guard holds, and the collection version they make (the
 * highest {@code lastmod}), kept up to date as mongos keeps its routing table: the chunks changed since that version
 * replace the ones they overlap (mongodb/mongo {@code src/mongo/s/catalog_cache.cpp},
 * {@code createUpdatedRoutingTableHistory}; a migration gives the moved chunk, and up to 4.4 a "control" chunk left on
 * the donor, the next major version, {@code src/mongo/db/s/config/sharding_catalog_manager_chunk_operations.cpp}
 * {@code commitChunkMigration}; a split or merge gives every resulting chunk a new version). A change of the
 * collection's identity (its {@code uuid}, {@code lastmodEpoch} or {@code timestamp}: dropped and re-created, or
 * resharded) needs a full load, as in {@code config_server_catalog_cache_loader.cpp}.
 *
 * <p>The chunks are held by lower bound, each with its upper bound and shard: since they cover the key space without
 * gaps, following each chunk's upper bound from {@code MinKey} to {@code MaxKey} finds the current ones, and a chunk a
 * change replaced is the one no walk reaches. A walk that does not reach {@code MaxKey} means the chunks read are not
 * consistent: the table is dropped and loaded again in full. Not thread-safe: {@link ClusterCatalog} changes it under
 * its collection's lock and publishes the immutable {@link #placement()}.
 */
final class RoutingTable {

    /** What must stay the same for chunks read later to change this table rather than replace it. */
    record Identity(
            @Nullable BsonValue uuid,
            @Nullable BsonValue epoch,
            @Nullable BsonValue timestamp,
            BsonDocument key) {
        static Identity of(BsonDocument entry) {
            return new Identity(
                    entry.get("uuid"), entry.get("lastmodEpoch"), entry.get("timestamp"), entry.getDocument("key"));
        }
    }

    private record Chunk(BsonValue max, String shard) {}

    private static final BsonValue MIN = new BsonMinKey();
    private static final BsonValue MAX = new BsonMaxKey();

    private final Identity identity;
    private final Map<BsonValue, Chunk> byMin = new HashMap<>();
    private final Map<String, String> shardNames = new HashMap<>();
    private BsonTimestamp version = new BsonTimestamp(0, 0);
    private KeyPlacement placement = KeyPlacement.unknown();

    RoutingTable(Identity identity) {
        this.identity = identity;
    }

    Identity identity() {
        return identity;
    }

    /** The collection version held: the highest {@code lastmod} of the chunks read. */
    BsonTimestamp version() {
        return version;
    }

    /** How many chunks it holds. */
    int size() {
        return byMin.size();
    }

    /** The placement the chunks give (immutable). */
    KeyPlacement placement() {
        return placement;
    }

    /**
     * Applies chunks read from {@code config.chunks} (all of them for a new table, those changed since
     * {@link #version()} otherwise).
     *
     * @return whether the chunks held are consistent; if not, the table must be dropped
     */
    boolean apply(List<BsonDocument> chunks) {
        boolean changed = false;
        for (BsonDocument chunk : chunks) {
            if (!chunk.isDocument("min")
                    || !chunk.isDocument("max")
                    || !chunk.isString("shard")
                    || !chunk.isTimestamp("lastmod")) {
                return false;
            }
            BsonValue epoch = chunk.get("lastmodEpoch");
            if (epoch != null && identity.epoch() != null && !epoch.equals(identity.epoch())) {
                return false; // chunks of another incarnation of the namespace (4.4 and before: chunks by ns)
            }
            BsonValue min = chunk.getDocument("min").get("_id");
            BsonValue max = chunk.getDocument("max").get("_id");
            if (min == null || max == null) {
                return false;
            }
            BsonTimestamp lastmod = chunk.getTimestamp("lastmod");
            if (lastmod.compareTo(version) > 0) {
                version = lastmod;
            }
            String shard = shardNames.computeIfAbsent(chunk.getString("shard").getValue(), name -> name);
            Chunk previous = byMin.put(min, new Chunk(max, shard));
            changed |= previous == null || !previous.equals(new Chunk(max, shard));
        }
        if (!changed && placement != KeyPlacement.unknown()) {
            return true; // only the chunk at the version held came back: nothing moved
        }
        Set<BsonValue> current = new HashSet<>();
        BsonValue at = MIN;
        while (!at.equals(MAX)) {
            Chunk chunk = byMin.get(at);
            if (chunk == null || !current.add(at)) {
                return false; // a gap, or a loop: not a partition of the key space
            }
            at = chunk.max();
        }
        byMin.keySet().retainAll(current);
        List<BsonDocument> bounds = new ArrayList<>(byMin.size());
        byMin.forEach((min, chunk) -> bounds.add(new BsonDocument("min", new BsonDocument("_id", min))
                .append("shard", new org.bson.BsonString(chunk.shard()))));
        placement = KeyPlacement.fromChunks(identity.key(), bounds);
        return true;
    }

    @Override
    public String toString() {
        return "RoutingTable{" + byMin.size() + " chunks, version " + version + ", " + Objects.toString(placement)
                + '}';
    }
}
