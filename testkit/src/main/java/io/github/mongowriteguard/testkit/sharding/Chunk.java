package io.github.mongowriteguard.testkit.sharding;

import java.util.Objects;
import org.bson.BsonDocument;

/**
 * One chunk: the key range {@code [min, max)} and the shard that owns it, as a document of
 * {@code config.chunks}. Bounds hold the key fields in pattern order; {@code MinKey}/{@code MaxKey} mark the
 * ends of the key space, and bounds of a hashed field are {@code NumberLong} hashes.
 *
 * <pre>{@code
 * new Chunk(new BsonDocument("_id", new BsonMinKey()), new BsonDocument("_id", new BsonInt32(2)), "shard00")
 * }</pre>
 */
public record Chunk(BsonDocument min, BsonDocument max, String shard) {
    /**
     * Copies the bounds (the record is immutable).
     *
     * @param min   the lower bound, included
     * @param max   the upper bound, excluded
     * @param shard the shard that owns the range
     * @throws IllegalArgumentException unless {@code min} is below {@code max}
     */
    public Chunk {
        Objects.requireNonNull(min, "min");
        Objects.requireNonNull(max, "max");
        Objects.requireNonNull(shard, "shard");
        min = min.clone();
        max = max.clone();
        if (ShardKey.comparePoints(min, max) >= 0) {
            throw new IllegalArgumentException("chunk min " + min.toJson() + " must be below max " + max.toJson());
        }
    }

    /**
     * Whether {@code point} (see {@link ShardKey#pointOf}) lies in {@code [min, max)}.
     *
     * @param point a point of the key space
     * @return true when the chunk holds it
     */
    public boolean contains(BsonDocument point) {
        return ShardKey.comparePoints(min, point) <= 0 && ShardKey.comparePoints(point, max) < 0;
    }

    /** {@return a copy of the lower bound, included} */
    @Override
    public BsonDocument min() {
        return min.clone();
    }

    /** {@return a copy of the upper bound, excluded} */
    @Override
    public BsonDocument max() {
        return max.clone();
    }

    @Override
    public String toString() {
        return "[" + min.toJson() + ", " + max.toJson() + ") -> " + shard;
    }
}
