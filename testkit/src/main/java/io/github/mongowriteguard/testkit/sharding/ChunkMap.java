package io.github.mongowriteguard.testkit.sharding;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.TreeSet;

import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonMaxKey;
import org.bson.BsonMinKey;
import org.bson.BsonValue;

/**
 * The routing table of one sharded collection: its key and the chunks that cover the key space from
 * {@code MinKey} to {@code MaxKey} without gaps, as mongos' ChunkManager holds it.
 *
 * <pre>{@code
 * ChunkMap map = ChunkMap.splitAt(ShardKey.of(new BsonDocument("_id", new BsonInt32(1))),
 *     List.of(new BsonInt32(2), new BsonInt32(4)), List.of("shard00", "shard01", "shard02"));
 * String owner = map.shardOfDocument(new BsonDocument("_id", new BsonInt32(3)));  // "shard01"
 * }</pre>
 */
public final class ChunkMap {
    private final ShardKey key;
    private final List<Chunk> chunks;

    /**
     * A routing table of contiguous chunks.
     *
     * @param key    the shard key
     * @param chunks chunks covering the key space from MinKey to MaxKey, in any order
     * @throws IllegalArgumentException when the chunks leave a gap, overlap, or do not reach MinKey and MaxKey
     */
    public ChunkMap(ShardKey key, List<Chunk> chunks) {
        this.key = Objects.requireNonNull(key, "key");
        List<Chunk> sorted = new ArrayList<>(chunks);
        sorted.sort(Comparator.comparing(Chunk::min, ShardKey::comparePoints));
        if (sorted.isEmpty()) {
            throw new IllegalArgumentException("a chunk map needs at least one chunk");
        }
        if (ShardKey.comparePoints(sorted.get(0).min(), key.bound(new BsonMinKey())) != 0
            || ShardKey.comparePoints(sorted.get(sorted.size() - 1).max(), key.bound(new BsonMaxKey())) != 0) {
            throw new IllegalArgumentException("chunks must cover the key space from MinKey to MaxKey: " + sorted);
        }
        for (int i = 1; i < sorted.size(); i++) {
            if (ShardKey.comparePoints(sorted.get(i - 1).max(), sorted.get(i).min()) != 0) {
                throw new IllegalArgumentException("chunks must be contiguous; gap or overlap between "
                    + sorted.get(i - 1) + " and " + sorted.get(i));
            }
        }
        this.chunks = List.copyOf(sorted);
    }

    /**
     * One chunk over the whole key space, as {@code shardCollection} creates on a ranged key.
     *
     * @param key   the shard key
     * @param shard the shard owning it all
     * @return the map
     */
    public static ChunkMap single(ShardKey key, String shard) {
        return new ChunkMap(key, List.of(new Chunk(key.bound(new BsonMinKey()), key.bound(new BsonMaxKey()), shard)));
    }

    /**
     * Chunks of a single-field key split at the given points; chunk {@code i} goes to {@code shards.get(i)}, so
     * {@code shards} has one entry more than {@code splitPoints}. For a hashed key the points are {@code NumberLong}s.
     *
     * @param key         a single-field shard key
     * @param splitPoints the bounds between chunks, ascending
     * @param shards      the owner of each chunk
     * @return the map
     */
    public static ChunkMap splitAt(ShardKey key, List<? extends BsonValue> splitPoints, List<String> shards) {
        if (key.fields().size() != 1) {
            throw new IllegalArgumentException("splitAt takes a single-field key, not " + key);
        }
        if (shards.size() != splitPoints.size() + 1) {
            throw new IllegalArgumentException("splitAt needs one shard per chunk: " + (splitPoints.size() + 1)
                + " chunks but " + shards.size() + " shards");
        }
        String field = key.fields().get(0);
        List<Chunk> chunks = new ArrayList<>();
        BsonValue lower = new BsonMinKey();
        for (int i = 0; i <= splitPoints.size(); i++) {
            BsonValue upper = i < splitPoints.size() ? splitPoints.get(i) : new BsonMaxKey();
            chunks.add(new Chunk(new BsonDocument(field, lower), new BsonDocument(field, upper), shards.get(i)));
            lower = upper;
        }
        return new ChunkMap(key, chunks);
    }

    /**
     * The initial chunks of an empty collection sharded on a hashed key: {@code numChunks} ranges of equal width
     * over the signed 64-bit hash space, symmetric around 0 as the 4.4 server computes them
     * ({@code InitialSplitPolicy::calculateHashedSplitPoints}), assigned to the shards round-robin.
     *
     * @param key       a hashed shard key
     * @param shards    the shards
     * @param numChunks how many chunks
     * @return the map
     */
    public static ChunkMap hashedPresplit(ShardKey key, List<String> shards, int numChunks) {
        if (!key.isHashed() || key.fields().size() != 1) {
            throw new IllegalArgumentException("hashedPresplit takes a single hashed field, not " + key);
        }
        if (numChunks < 1) {
            throw new IllegalArgumentException("numInitialChunks (" + numChunks + ") must be at least 1");
        }
        TreeSet<Long> points = new TreeSet<>();
        long interval = (Long.MAX_VALUE / numChunks) * 2;
        if (numChunks % 2 == 0) {
            points.add(0L);
            for (int i = 1; i < numChunks / 2; i++) {
                points.add(i * interval);
                points.add(-i * interval);
            }
        } else {
            for (int i = 0; i < numChunks / 2; i++) {
                points.add(interval / 2 + i * interval);
                points.add(-(interval / 2 + i * interval));
            }
        }
        List<BsonInt64> splitPoints = points.stream().map(BsonInt64::new).toList();
        List<String> owners = new ArrayList<>();
        for (int i = 0; i <= splitPoints.size(); i++) {
            owners.add(shards.get(i % shards.size()));
        }
        return splitAt(key, splitPoints, owners);
    }

    /** {@return the shard key} */
    public ShardKey key() {
        return key;
    }

    /**
     * The chunks in key order.
     *
     * @return the chunks
     */
    public List<Chunk> chunks() {
        return chunks;
    }

    /**
     * The shard owning a point of the key space (see {@link ShardKey#pointOf}).
     *
     * @param point a point of the key space
     * @return the owning shard's name
     */
    public String shardOf(BsonDocument point) {
        int low = 0;
        int high = chunks.size() - 1;
        while (low <= high) {
            int mid = (low + high) >>> 1;
            Chunk chunk = chunks.get(mid);
            if (ShardKey.comparePoints(point, chunk.min()) < 0) {
                high = mid - 1;
            } else if (ShardKey.comparePoints(point, chunk.max()) >= 0) {
                low = mid + 1;
            } else {
                return chunk.shard();
            }
        }
        throw new IllegalStateException("no chunk holds " + point.toJson() + " (chunks: " + chunks + ")");
    }

    /**
     * The shard an inserted document goes to.
     *
     * @param document the document
     * @return the owning shard's name
     */
    public String shardOfDocument(BsonDocument document) {
        return shardOf(key.pointOf(document));
    }

    @Override
    public String toString() {
        return "ChunkMap{key=" + key + ", chunks=" + chunks + "}";
    }
}
