package io.github.mongowriteguard.internal.execution;

import com.mongodb.MongoNamespace;
import io.github.mongowriteguard.internal.catalog.CatalogSource;
import io.github.mongowriteguard.internal.catalog.ClusterCatalog;
import io.github.mongowriteguard.internal.plan.KeyPlacement;
import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * Where a namespace's documents live ({@link KeyPlacement}), so that the repeated keys of an ordered request travel in
 * as few ORDERED commands and mongos rounds as exactness allows: not behind mongos (a replica set) or not sharded
 * ({@code config.collections} has no entry), every write reaches one place; sharded on {@code {_id: "hashed"}} or
 * {@code {_id: 1}}, the shard of each {@code _id} from the collection's chunks, which the JVM's
 * {@link ClusterCatalog} holds for every guard and refreshes by collection version (only the chunks changed since).
 * Asked only for an ordered request that repeats a key; checked again after {@link #TIME_TO_LIVE}. What it learns
 * decides cost only: a chunk moved since costs more child batches, never a different result. Every read carries the
 * guard's deadline; a failed read gives {@link KeyPlacement#unknown()} (the planner then assumes a shard per key, as
 * without this) for a short while.
 */
final class KeyPlacements {

    /** How long what was learned of a collection is used before it is checked again. */
    public static final Duration TIME_TO_LIVE = ClusterCatalog.CATALOG_TIME_TO_LIVE;

    private final ClusterCatalog catalog;

    /** The placements of the JVM's shared catalog. */
    public KeyPlacements() {
        this(ClusterCatalog.shared());
    }

    /** The placements of {@code catalog}. */
    public KeyPlacements(ClusterCatalog catalog) {
        this.catalog = catalog;
    }

    /** A catalog of its own on {@code nanoClock} (tests). */
    KeyPlacements(LongSupplier nanoClock) {
        this(ClusterCatalog.isolated(ClusterCatalog.Limits.DEFAULT, nanoClock));
    }

    /**
     * The placement of {@code namespace}'s documents: learned now, or within the last {@link #TIME_TO_LIVE}, read
     * through any transport's catalog reads.
     */
    KeyPlacement forCollection(CatalogSource access, MongoNamespace namespace, long maxTimeMs) {
        return catalog.placement(access, namespace, maxTimeMs);
    }
}
