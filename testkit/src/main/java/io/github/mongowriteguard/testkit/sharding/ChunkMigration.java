package io.github.mongowriteguard.testkit.sharding;

import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonValue;

/**
 * A chunk migration that has committed (the recipient owns the chunk) but whose delete phase has not run: the
 * donor still stores the moved documents as orphans. Reads with a shard version never see them (the donor filters
 * what it does not own); reads with {@code readConcern: "available"} do, so a document can appear twice.
 */
public final class ChunkMigration {
    private final String namespace;
    private final Chunk chunk;
    private final String to;
    private final List<BsonValue> movedIds;
    /** Runs a command against the donor's database (its engine, or its primary's replicated write path). */
    private final java.util.function.UnaryOperator<BsonDocument> donor;

    private final String database;
    private final String collection;
    private boolean deleted;

    ChunkMigration(
            String namespace,
            Chunk chunk,
            String to,
            List<BsonValue> movedIds,
            java.util.function.UnaryOperator<BsonDocument> donor,
            String database,
            String collection) {
        this.namespace = namespace;
        this.chunk = chunk;
        this.to = to;
        this.movedIds = List.copyOf(movedIds);
        this.donor = donor;
        this.database = database;
        this.collection = collection;
    }

    /** {@return the migrated collection, {@code db.collection}} */
    public String namespace() {
        return namespace;
    }

    /**
     * The chunk as it was before the move (its shard is the donor).
     *
     * @return the chunk
     */
    public Chunk chunk() {
        return chunk;
    }

    /** {@return the donor shard's name} */
    public String from() {
        return chunk.shard();
    }

    /** {@return the recipient shard's name} */
    public String to() {
        return to;
    }

    /**
     * The {@code _id}s of the moved documents: the orphans on the donor until {@link #deleteOrphans()}.
     *
     * @return the ids
     */
    public List<BsonValue> movedIds() {
        return movedIds;
    }

    /**
     * The delete phase (the range deleter): removes the orphans from the donor. Idempotent.
     *
     * @return the documents removed (0 after the first call)
     */
    public synchronized int deleteOrphans() {
        if (deleted || movedIds.isEmpty()) {
            deleted = true;
            return 0;
        }
        deleted = true;
        BsonDocument reply = donor.apply(MigrationSourceManager.deleteIds(collection, movedIds));
        return reply.get("n", new BsonInt32(0)).asNumber().intValue();
    }

    @Override
    public String toString() {
        return "ChunkMigration{" + namespace + " " + chunk + " -> " + to + ", " + movedIds.size() + " documents"
                + (deleted ? ", orphans deleted" : ", orphans on " + from()) + "}";
    }
}
