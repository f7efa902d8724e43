package io.github.mongowriteguard.testkit.sharding;

import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.node.NodeInternals;
import io.github.mongowriteguard.testkit.wire.ClientConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * One chunk migration, in the donor's phases (mongodb/mongo {@code src/mongo/db/s/migration_source_manager.cpp}):
 *
 * <ol>
 *   <li><b>clone</b>: the recipient copies the chunk's documents ({@code migration_chunk_cloner_source.cpp},
 *       {@code migration_destination_manager.cpp}); writes keep going to the donor;</li>
 *   <li><b>catch-up</b>: the recipient is "steady" ({@code awaitToCatchUp});</li>
 *   <li><b>enter the critical section</b> on the donor ({@code CollectionCriticalSection}): once the writes running on
 *       the collection finished, within {@code migrationLockAcquisitionMaxWaitMS}, else the migration fails with
 *       LockTimeout; from here a versioned write on the donor waits and then answers StaleConfig
 *       ({@link CollectionCriticalSections});</li>
 *   <li><b>commit on the recipient</b>: it receives the changes made since the clone ({@code _transferMods}; here the
 *       chunk's documents on the donor are compared with the clone) and the retryable-write history of the sessions
 *       that wrote the chunk ({@code session_catalog_migration_source.cpp},
 *       {@code session_catalog_migration_destination.cpp}), so a retry routed to the recipient returns the recorded
 *       result;</li>
 *   <li><b>commit on the config server</b> (one collection version more; the participating primaries learn it), then
 *       <b>exit</b> the critical section: the waiting writes answer StaleConfig and mongos sends them to the recipient
 *       ({@code batch_write_exec.cpp}).</li>
 * </ol>
 *
 * <p>The donor keeps the moved documents as orphans until {@link ChunkMigration#deleteOrphans()}. Tests can hold a
 * migration between phases with {@link MigrationFailPoints}. Not modelled: a failover of the donor or recipient during
 * the migration, reads blocked in the commit phase, transactions waiting on the critical section
 * ({@code metadataRefreshInTransactionMaxWaitMS}).
 */
final class MigrationSourceManager {
    private static final AtomicLong MIGRATION_CONNECTIONS = new AtomicLong(-2_000_000);

    private final Map<String, ShardReplicaSet> sets;
    private final ShardingCatalog catalog;
    private final MigrationFailPoints failPoints;
    private final Duration lockAcquisitionMaxWait;

    MigrationSourceManager(
            Map<String, ShardReplicaSet> sets,
            ShardingCatalog catalog,
            MigrationFailPoints failPoints,
            Duration lockAcquisitionMaxWait) {
        this.sets = sets;
        this.catalog = catalog;
        this.failPoints = failPoints;
        this.lockAcquisitionMaxWait = lockAcquisitionMaxWait;
    }

    ChunkMigration moveChunk(String namespace, BsonDocument document, String toShard, boolean donorOplogRolledOver) {
        ChunkMap map = catalog.chunkMap(namespace)
                .orElseThrow(
                        () -> new IllegalArgumentException(namespace + " is not sharded; call shardCollection first"));
        if (!sets.containsKey(toShard)) {
            throw new IllegalArgumentException("no shard " + toShard + "; shards are " + sets.keySet());
        }
        BsonDocument point = map.key().pointOf(document);
        Chunk chunk =
                map.chunks().stream().filter(c -> c.contains(point)).findFirst().orElseThrow();
        if (chunk.shard().equals(toShard)) {
            throw new IllegalArgumentException("chunk " + chunk + " already lives on " + toShard);
        }
        String database = namespace.substring(0, namespace.indexOf('.'));
        String collection = namespace.substring(namespace.indexOf('.') + 1);
        ShardReplicaSet donorSet = sets.get(chunk.shard());
        ShardReplicaSet recipientSet = sets.get(toShard);
        EmulatedNode donor = donorSet.primary();
        UnaryOperator<BsonDocument> recipientWrite = migrationWrite(recipientSet, recipientSet.primary(), database);
        failPoints.pauseWhileSet("moveChunkHangAtStep2");

        // Clone.
        Map<BsonValue, BsonDocument> cloned = chunkDocuments(donor, database, collection, map.key(), chunk);
        insert(recipientWrite, collection, new ArrayList<>(cloned.values()));
        failPoints.pauseWhileSet("moveChunkHangAtStep3");
        failPoints.pauseWhileSet("moveChunkHangAtStep4");

        // Critical section: the running writes finish first; later ones wait on it.
        CollectionCriticalSections.Held criticalSection;
        try {
            criticalSection = donorSet.criticalSections().enter(namespace, lockAcquisitionMaxWait);
        } catch (IllegalStateException e) {
            deleteIds(recipientWrite, collection, new ArrayList<>(cloned.keySet()));
            throw e;
        }
        List<BsonValue> movedIds;
        try {
            // The changes since the clone (_transferMods): nothing writes the chunk on the donor any more.
            Map<BsonValue, BsonDocument> now = chunkDocuments(donor, database, collection, map.key(), chunk);
            List<BsonValue> stale = new ArrayList<>();
            List<BsonDocument> fresh = new ArrayList<>();
            cloned.forEach((id, copy) -> {
                if (!copy.equals(now.get(id))) {
                    stale.add(id);
                }
            });
            now.forEach((id, current) -> {
                if (!current.equals(cloned.get(id))) {
                    fresh.add(current);
                }
            });
            deleteIds(recipientWrite, collection, stale);
            insert(recipientWrite, collection, fresh);
            movedIds = List.copyOf(now.keySet());
            carrySessionHistory(donor, recipientSet, namespace, map.key(), chunk, donorOplogRolledOver);
            failPoints.pauseWhileSet("moveChunkHangAtStep5");

            // Commit on the config server: the participating primaries learn the new version.
            List<Chunk> chunks = new ArrayList<>();
            for (Chunk c : map.chunks()) {
                chunks.add(c.equals(chunk) ? new Chunk(c.min(), c.max(), toShard) : c);
            }
            catalog.put(namespace, new ChunkMap(map.key(), chunks), false);
        } catch (RuntimeException e) {
            deleteIds(recipientWrite, collection, new ArrayList<>(cloned.keySet()));
            throw e;
        } finally {
            criticalSection.exit();
        }
        failPoints.pauseWhileSet("moveChunkHangAtStep6");
        return new ChunkMigration(
                namespace, chunk, toShard, movedIds, migrationWrite(donorSet, donor, database), database, collection);
    }

    /** The retryable-write history of the sessions that wrote the chunk, or the dead-end sentinel. */
    private static void carrySessionHistory(
            EmulatedNode donor,
            ShardReplicaSet recipientSet,
            String namespace,
            ShardKey key,
            Chunk chunk,
            boolean donorOplogRolledOver) {
        // The session history reaches every member of a replicating recipient (in mongod through its oplog; here in
        // memory).
        List<EmulatedNode> recipients =
                recipientSet.replicates() ? recipientSet.members() : List.of(recipientSet.primary());
        NodeInternals.of(donor)
                .carryRetryHistory(target -> writesTo(target, namespace, key, chunk), donorOplogRolledOver, recipients);
    }

    private static Map<BsonValue, BsonDocument> chunkDocuments(
            EmulatedNode donor, String database, String collection, ShardKey key, Chunk chunk) {
        Map<BsonValue, BsonDocument> documents = new java.util.LinkedHashMap<>();
        for (BsonDocument d : Engines.findAll(donor.engine(), database, collection, new BsonDocument())) {
            if (chunk.contains(key.pointOf(d))) {
                documents.put(d.get("_id"), d);
            }
        }
        return documents;
    }

    private static void insert(UnaryOperator<BsonDocument> write, String collection, List<BsonDocument> documents) {
        if (!documents.isEmpty()) {
            write.apply(new BsonDocument("insert", new BsonString(collection))
                    .append("documents", new BsonArray(new ArrayList<>(documents))));
        }
    }

    private static void deleteIds(UnaryOperator<BsonDocument> write, String collection, List<BsonValue> ids) {
        if (!ids.isEmpty()) {
            write.apply(deleteIds(collection, ids));
        }
    }

    /** The {@code delete} of the documents with these {@code _id}s (the range deleter's, the recipient's cleanup). */
    static BsonDocument deleteIds(String collection, List<BsonValue> ids) {
        return new BsonDocument("delete", new BsonString(collection))
                .append(
                        "deletes",
                        new BsonArray(List.of(new BsonDocument(
                                        "q", new BsonDocument("_id", new BsonDocument("$in", new BsonArray(ids))))
                                .append("limit", new BsonInt32(0)))))
                .append("ordered", BsonBoolean.FALSE);
    }

    /**
     * How a migration writes on a shard: a replicating shard's primary runs the command through its write path (logged
     * and replicated, as the recipient's cloner and the donor's range deleter write); otherwise on the engine. These
     * writes carry no shard version, so no critical section holds them.
     */
    static UnaryOperator<BsonDocument> migrationWrite(ShardReplicaSet set, EmulatedNode primary, String database) {
        if (!set.replicates()) {
            return command -> primary.engine().run(database, command);
        }
        return command -> set.primary()
                .handle(ClientConnection.internal(MIGRATION_CONNECTIONS.decrementAndGet(), null), database, command);
    }

    /** Whether a recorded statement ({@code {ns, op, item}}) wrote a document of {@code chunk}. */
    private static boolean writesTo(BsonDocument target, String namespace, ShardKey key, Chunk chunk) {
        if (!target.getString("ns").getValue().equals(namespace)
                || !target.get("item").isDocument()) {
            return false;
        }
        // The written document's key, as session_catalog_migration_source.cpp reads it from the oplog entry; a
        // statement with no written document recorded (a direct write to the shard) falls back to its filter.
        BsonDocument item = target.getDocument("item");
        Optional<BsonDocument> point = target.getString("op").getValue().equals("insert")
                ? Optional.of(key.pointOf(item))
                : target.isDocument("document")
                        ? Optional.of(key.pointOf(target.getDocument("document")))
                        : key.pointOfFilter(item.getDocument("q", new BsonDocument()));
        return point.isPresent() && chunk.contains(point.get());
    }
}
