package io.github.mongowriteguard.internal.catalog;

import com.mongodb.MongoException;
import com.mongodb.MongoNamespace;
import io.github.mongowriteguard.internal.ClientPort;
import io.github.mongowriteguard.internal.plan.KeyPlacement;
import io.github.mongowriteguard.metrics.HeldStructure;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.WeakHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;

/**
 * What the guard knows of each deployment's catalog, read through one path and shared by every guard in the JVM
 * ({@link #shared()}), keyed by the cluster, never by the guard: two clients of one sharded cluster share what either
 * read (a cluster is known by its {@code clusterId}, read once per client from {@code config.version}); two clusters
 * never mix, even with the same namespaces (a replica set, or a cluster whose {@code clusterId} cannot be read, is
 * known only to the clients that asked it).
 *
 * <ul>
 *   <li>the topology: one {@code hello} per client (and one {@code config.version} read behind mongos), kept while an
 *       access to the client is in use (weakly: a guard's executors hold theirs);</li>
 *   <li>a collection's {@code listCollections} entry, for {@link #LIST_COLLECTIONS_TIME_TO_LIVE};</li>
 *   <li>its {@code config.collections} entry, for {@link #CATALOG_TIME_TO_LIVE};</li>
 *   <li>the chunks of a collection sharded on {@code _id}, refreshed at most once per {@link #CATALOG_TIME_TO_LIVE}
 *       as mongos refreshes its routing table: only the chunks whose {@code lastmod} is at or above the collection
 *       version held ({@link RoutingTable}), all of them again only when the collection's identity changed.</li>
 * </ul>
 *
 * <p>Bounded ({@link Limits}): facts of at most {@link Limits#collections()} namespaces; chunks of at most
 * {@link Limits#chunksPerCollection()} per collection and {@link Limits#chunksHeld()} in all (the least recently used
 * collections' chunks are dropped to make room). A collection with more chunks than the bound has no placement the
 * guard can use ({@link KeyPlacement#unknown()}: each repeated key is assumed on its own shard, as when the chunks
 * cannot be read), and its chunks are not read again for {@link #OVER_BOUND_TIME_TO_LIVE} unless it is re-created.
 * A failed read is asked again after {@link #FAILURE_TIME_TO_LIVE}. Thread-safe; not API.
 */
public final class ClusterCatalog {

    /** How long a collection's {@code config.collections} entry and chunks are used before they are asked again. */
    public static final Duration CATALOG_TIME_TO_LIVE = Duration.ofMinutes(1);

    /** How long a collection's {@code listCollections} entry is used before it is asked again. */
    public static final Duration LIST_COLLECTIONS_TIME_TO_LIVE = Duration.ofMinutes(5);

    /** How long a fact learned from a failed read is used: the failure may pass (a failover, a timeout). */
    public static final Duration FAILURE_TIME_TO_LIVE = Duration.ofSeconds(10);

    /** How long a collection with more chunks than the bound is not read again (unless re-created). */
    public static final Duration OVER_BOUND_TIME_TO_LIVE = Duration.ofHours(1);

    /**
     * The bounds of a catalog.
     *
     * @param collections         namespaces whose facts are held (per kind of fact), and collections whose chunks are
     * @param chunksPerCollection chunks held for one collection; a collection with more has no usable placement
     * @param chunksHeld          chunks held in all
     */
    public record Limits(int collections, int chunksPerCollection, int chunksHeld) {
        /** The defaults: 1,000 namespaces, 100,000 chunks per collection, 100,000 chunks in all. */
        public static final Limits DEFAULT = new Limits(1_000, 100_000, 100_000);

        public Limits {
            if (collections < 1 || chunksPerCollection < 1 || chunksHeld < chunksPerCollection) {
                throw new IllegalArgumentException("limits must be positive and chunksHeld (" + chunksHeld
                        + ") at least chunksPerCollection (" + chunksPerCollection + ")");
            }
        }
    }

    /**
     * What one client talks to.
     *
     * @param mongos  whether it is mongos
     * @param cluster what the cluster is known by: its {@code clusterId}, or a token of this client alone
     */
    public record Topology(boolean mongos, Object cluster) {}

    private record Key(Object cluster, String namespace) {}

    /** One collection's chunks, changed under its own lock. */
    private static final class Routing {
        private @Nullable RoutingTable table;
        private volatile KeyPlacement placement = KeyPlacement.unknown();
        private long checkedAtNanos;
        private long timeToLiveNanos;
        private boolean checked;
        /** The identity whose chunks were too many, not read again until {@link #OVER_BOUND_TIME_TO_LIVE}. */
        private RoutingTable.@Nullable Identity overBound;
        /** No longer in the index: nothing is installed in it any more. */
        private boolean evicted;
    }

    private static final ClusterCatalog SHARED = new ClusterCatalog(Limits.DEFAULT, System::nanoTime);

    private final Limits limits;
    private final LongSupplier nanoClock;
    private final Map<Object, Topology> topologies = new WeakHashMap<>();
    private final LearnedFacts<Key, Optional<BsonDocument>> collections;
    private final LearnedFacts<Key, Optional<BsonDocument>> collectionInfos;
    private final LinkedHashMap<Key, Routing> routings = new LinkedHashMap<>(16, 0.75f, true);
    private final AtomicLong chunksHeld = new AtomicLong();
    private final AtomicLong fullLoads = new AtomicLong();
    private final AtomicLong incrementalLoads = new AtomicLong();

    ClusterCatalog(Limits limits, LongSupplier nanoClock) {
        this.limits = limits;
        this.nanoClock = nanoClock;
        this.collections =
                new LearnedFacts<>(limits.collections(), CATALOG_TIME_TO_LIVE, FAILURE_TIME_TO_LIVE, nanoClock);
        this.collectionInfos = new LearnedFacts<>(
                limits.collections(), LIST_COLLECTIONS_TIME_TO_LIVE, FAILURE_TIME_TO_LIVE, nanoClock);
    }

    /** The catalog every guard of the JVM shares. */
    public static ClusterCatalog shared() {
        return SHARED;
    }

    /** A catalog of its own, with its own bounds and clock (tests, and the lab's separate instances). */
    public static ClusterCatalog isolated(Limits limits, LongSupplier nanoClock) {
        return new ClusterCatalog(limits, nanoClock);
    }

    /**
     * What {@code access}'s client talks to, asked once per client.
     *
     * @throws MongoException when {@code hello} fails (asked again next time)
     */
    public Topology topology(ClientPort access, long maxTimeMs) {
        return topology(CatalogSource.of(access), maxTimeMs);
    }

    /** As {@link #topology(ClientPort, long)}, through {@code access}. */
    public Topology topology(CatalogSource access, long maxTimeMs) {
        synchronized (topologies) {
            Topology known = topologies.get(access.client());
            if (known != null) {
                return known;
            }
        }
        boolean mongos = CatalogReads.isMongos(access, maxTimeMs);
        Object cluster = new Object();
        if (mongos) {
            try {
                BsonValue clusterId = CatalogReads.clusterId(access, maxTimeMs);
                if (clusterId != null) {
                    cluster = "clusterId:" + clusterId;
                }
            } catch (MongoException e) {
                // not allowed to read config.version: this client's facts are its own
            }
        }
        Topology topology = new Topology(mongos, cluster);
        synchronized (topologies) {
            return topologies.computeIfAbsent(access.client(), a -> topology);
        }
    }

    /**
     * The collection's {@code config.collections} entry, or empty when it is not sharded (or the client does not talk
     * to mongos).
     *
     * @throws MongoException when a read failed, now or within {@link #FAILURE_TIME_TO_LIVE}
     */
    public Optional<BsonDocument> shardedCollection(ClientPort access, MongoNamespace namespace, long maxTimeMs) {
        return shardedCollection(CatalogSource.of(access), namespace, maxTimeMs);
    }

    /** As {@link #shardedCollection(ClientPort, MongoNamespace, long)}, through {@code access}. */
    public Optional<BsonDocument> shardedCollection(CatalogSource access, MongoNamespace namespace, long maxTimeMs) {
        Topology topology = topology(access, maxTimeMs);
        if (!topology.mongos()) {
            return Optional.empty();
        }
        return collections.get(
                new Key(topology.cluster(), namespace.getFullName()),
                () -> Optional.ofNullable(CatalogReads.shardedCollection(access, namespace, maxTimeMs)));
    }

    /**
     * The collection's {@code listCollections} entry, or empty when it does not exist (yet).
     *
     * @throws MongoException when a read failed, now or within {@link #FAILURE_TIME_TO_LIVE}
     */
    public Optional<BsonDocument> collectionInfo(ClientPort access, MongoNamespace namespace, long maxTimeMs) {
        return collectionInfo(CatalogSource.of(access), namespace, maxTimeMs);
    }

    /** As {@link #collectionInfo(ClientPort, MongoNamespace, long)}, through {@code access}. */
    public Optional<BsonDocument> collectionInfo(CatalogSource access, MongoNamespace namespace, long maxTimeMs) {
        Topology topology = topology(access, maxTimeMs);
        return collectionInfos.get(
                new Key(topology.cluster(), namespace.getFullName()),
                () -> Optional.ofNullable(CatalogReads.collectionInfo(access, namespace, maxTimeMs)));
    }

    /**
     * Where the collection's documents live: one place (a replica set, or a collection that is not sharded), the
     * shard of each {@code _id} (sharded on {@code {_id: "hashed"}} or {@code {_id: 1}}), or not known (another key,
     * more chunks than the bound, or a read that failed). Never throws: a placement decides cost only.
     */
    public KeyPlacement placement(ClientPort access, MongoNamespace namespace, long maxTimeMs) {
        return placement(CatalogSource.of(access), namespace, maxTimeMs);
    }

    /** As {@link #placement(ClientPort, MongoNamespace, long)}, through {@code access}. */
    public KeyPlacement placement(CatalogSource access, MongoNamespace namespace, long maxTimeMs) {
        Topology topology;
        Optional<BsonDocument> entry;
        try {
            topology = topology(access, maxTimeMs);
            if (!topology.mongos()) {
                return KeyPlacement.singleTarget();
            }
            entry = shardedCollection(access, namespace, maxTimeMs);
        } catch (MongoException e) {
            return KeyPlacement.unknown();
        }
        if (entry.isEmpty()) {
            return KeyPlacement.singleTarget(); // not sharded: mongos sends all its writes to one shard
        }
        if (!entry.get().getDocument("key").keySet().equals(java.util.Set.of("_id"))) {
            return KeyPlacement.unknown(); // an _id alone does not say where its document is
        }
        Key key = new Key(topology.cluster(), namespace.getFullName());
        Routing routing;
        List<Routing> evicted = new ArrayList<>();
        synchronized (routings) {
            routing = routings.computeIfAbsent(key, k -> new Routing());
            Iterator<Map.Entry<Key, Routing>> eldest = routings.entrySet().iterator();
            while (routings.size() > limits.collections()) {
                evicted.add(eldest.next().getValue());
                eldest.remove();
            }
        }
        evict(evicted);
        KeyPlacement placement;
        boolean grew = false;
        synchronized (routing) {
            long now = nanoClock.getAsLong();
            boolean due = !routing.checked
                    || now - routing.checkedAtNanos >= routing.timeToLiveNanos
                    || (routing.overBound != null && !routing.overBound.equals(RoutingTable.Identity.of(entry.get())));
            if (!routing.evicted && due) {
                grew = refresh(routing, access, namespace, entry.get(), maxTimeMs);
                routing.checked = true;
                routing.checkedAtNanos = now;
            }
            placement = routing.placement;
        }
        if (grew && chunksHeld.get() > limits.chunksHeld()) {
            makeRoom(key);
        }
        return placement;
    }

    /** Reads the chunks changed since the version held (all of them for a new identity) and applies them. */
    private boolean refresh(
            Routing routing, CatalogSource access, MongoNamespace namespace, BsonDocument entry, long maxTimeMs) {
        RoutingTable.Identity identity = RoutingTable.Identity.of(entry);
        routing.timeToLiveNanos = CATALOG_TIME_TO_LIVE.toNanos();
        RoutingTable table = routing.table;
        boolean full = table == null || !table.identity().equals(identity);
        if (full) {
            forget(routing);
            table = new RoutingTable(identity);
        }
        List<BsonDocument> chunks;
        try {
            chunks = CatalogReads.chunksSince(
                    access,
                    namespace,
                    entry,
                    full ? new BsonTimestamp(0, 0) : table.version(),
                    limits.chunksPerCollection() + 1,
                    maxTimeMs);
        } catch (MongoException e) {
            routing.timeToLiveNanos = FAILURE_TIME_TO_LIVE.toNanos(); // keep what was held: it decides cost only
            return false;
        }
        (full ? fullLoads : incrementalLoads).incrementAndGet();
        if (chunks.size() > limits.chunksPerCollection()) {
            overBound(routing, identity);
            return false;
        }
        int before = full ? 0 : table.size();
        boolean consistent = !chunks.isEmpty() && table.apply(chunks);
        routing.table = table; // held from here, consistent or not, so that forget counts it right
        chunksHeld.addAndGet(table.size() - before);
        if (!consistent) {
            // $gte the version held always finds a chunk while the collection lives: it was dropped or changed under
            // the read; load it in full next time (mongos retries the same way)
            forget(routing);
            routing.timeToLiveNanos = FAILURE_TIME_TO_LIVE.toNanos();
            return false;
        }
        if (table.size() > limits.chunksPerCollection()) { // splits grew it past the bound
            overBound(routing, identity);
            return false;
        }
        routing.placement = table.placement();
        return table.size() > before;
    }

    private void overBound(Routing routing, RoutingTable.Identity identity) {
        forget(routing);
        routing.overBound = identity;
        routing.timeToLiveNanos = OVER_BOUND_TIME_TO_LIVE.toNanos();
    }

    /** Drops the chunks of the least recently used collections until those held fit the bound. */
    private void makeRoom(Key keep) {
        List<Routing> evicted = new ArrayList<>();
        synchronized (routings) {
            long left = chunksHeld.get();
            Iterator<Map.Entry<Key, Routing>> eldest = routings.entrySet().iterator();
            while (left > limits.chunksHeld() && eldest.hasNext()) {
                Map.Entry<Key, Routing> next = eldest.next();
                if (!next.getKey().equals(keep)) {
                    RoutingTable table = next.getValue().table;
                    left -= table == null ? 0 : table.size();
                    eldest.remove();
                    evicted.add(next.getValue());
                }
            }
        }
        evict(evicted);
    }

    /** Forgets collections no longer in the index; a thread still using one installs nothing in it. */
    private void evict(List<Routing> evicted) {
        for (Routing routing : evicted) {
            synchronized (routing) {
                routing.evicted = true;
                forget(routing);
            }
        }
    }

    private void forget(Routing routing) {
        RoutingTable table = routing.table;
        if (table != null) {
            chunksHeld.addAndGet(-table.size());
        }
        routing.table = null;
        routing.placement = KeyPlacement.unknown();
        routing.overBound = null;
    }

    /** The chunks held now, in all. */
    public long chunksHeld() {
        return chunksHeld.get();
    }

    /** How many refreshes read a collection's chunks in full, and how many read only the changed ones. */
    public long[] loads() {
        return new long[] {fullLoads.get(), incrementalLoads.get()};
    }

    /** What this catalog holds, each with its bound. */
    public List<HeldStructure> held() {
        int topologyCount;
        synchronized (topologies) {
            topologyCount = topologies.size();
        }
        int routingCount;
        synchronized (routings) {
            routingCount = routings.size();
        }
        return List.of(
                new HeldStructure("catalog.clients", "clients", topologyCount, HeldStructure.UNBOUNDED),
                new HeldStructure("catalog.collections", "namespaces", collections.size(), collections.bound()),
                new HeldStructure(
                        "catalog.collection.options", "namespaces", collectionInfos.size(), collectionInfos.bound()),
                new HeldStructure("catalog.routing.tables", "collections", routingCount, limits.collections()),
                new HeldStructure("catalog.chunks", "chunks", chunksHeld.get(), limits.chunksHeld()));
    }
}
