package io.github.mongowriteguard.testkit.sharding;

import java.util.Objects;

/**
 * One sharded collection's routing table at one version, as a shard node caches it in memory (its "ownership
 * list") and as mongos attaches it to requests. The version is the collection's major version: it grows by one
 * with every change of its chunks (shardCollection, placeChunks, a migration's commit).
 *
 * @param namespace {@code db.collection}
 * @param chunks    the chunks at that version
 * @param version   1 after shardCollection, then one more per change
 */
public record CollectionRouting(String namespace, ChunkMap chunks, long version) {
    /**
     * Checks the components.
     *
     * @param namespace {@code db.collection}
     * @param chunks    the chunks at that version
     * @param version   1 after shardCollection, then one more per change
     * @throws IllegalArgumentException for a version below 1
     */
    public CollectionRouting {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(chunks, "chunks");
        if (version < 1) {
            throw new IllegalArgumentException("version (" + version + ") must be at least 1");
        }
    }

    /**
     * Whether {@code shard} owns the document at this version (an orphan is a document it does not own).
     *
     * @param shard    the shard's name
     * @param document the document
     * @return true when the document's chunk is on {@code shard}
     */
    public boolean owns(String shard, org.bson.BsonDocument document) {
        return chunks.shardOfDocument(document).equals(shard);
    }

    @Override
    public String toString() {
        return namespace + " v" + version + " (" + chunks.chunks().size() + " chunks)";
    }
}
