package io.github.mongowriteguard.internal.plan;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.bson.BsonDocument;
import org.bson.BsonType;
import org.bson.BsonValue;

/**
 * Where the document of an {@code _id} lives, as far as the planner needs it to choose how an ORDERED request's
 * repeated keys travel: one place for every {@code _id} (a replica set, or a collection that is not sharded), the shard
 * of each {@code _id} (a collection sharded on {@code {_id: "hashed"}} or {@code {_id: 1}}, from its chunks), or not
 * known. It decides cost only, never correctness: an ORDERED command of key runs is exact wherever its writes land
 * (see {@link KeyRuns}); a stale placement (a chunk moved since it was read) only costs more mongos rounds.
 *
 * <pre>{@code
 * KeyPlacement placement = KeyPlacement.fromChunks(new BsonDocument("_id", new BsonString("hashed")), chunks);
 * placement.shardOf(new BsonInt32(7));   // 2: the third of the chunks' shards by name; -1 when not known
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public final class KeyPlacement {

    /** What {@link #shardOf} returns for an {@code _id} whose shard is not known. */
    public static final int UNKNOWN = -1;

    private static final KeyPlacement UNKNOWN_PLACEMENT = new KeyPlacement(false, Kind.NONE, new Bound[0], "not known");
    private static final KeyPlacement SINGLE_TARGET =
            new KeyPlacement(true, Kind.NONE, new Bound[0], "one place (replica set or unsharded collection)");

    private enum Kind {
        NONE,
        HASHED,
        RANGE
    }

    /** A chunk's lower bound (inclusive) and its shard's number; chunks sorted by bound. */
    private record Bound(BsonValue min, long hashedMin, int shard) {}

    private final boolean singleTarget;
    private final Kind kind;
    private final Bound[] bounds;
    private final String description;

    private KeyPlacement(boolean singleTarget, Kind kind, Bound[] bounds, String description) {
        this.singleTarget = singleTarget;
        this.kind = kind;
        this.bounds = bounds;
        this.description = description;
    }

    /**
     * Nothing known: each repeated key of an ordered request is assumed to be on a shard of its own.
     *
     * @return the shared instance
     */
    public static KeyPlacement unknown() {
        return UNKNOWN_PLACEMENT;
    }

    /**
     * Every write of the collection reaches one place: a replica set or standalone server, or a collection that is not
     * sharded (mongos sends all of its writes to one shard).
     *
     * @return the shared instance
     */
    public static KeyPlacement singleTarget() {
        return SINGLE_TARGET;
    }

    /**
     * The placement that a sharded collection's chunks give, for the shard keys an {@code _id} decides:
     * {@code {_id: "hashed"}} (the server's hash of the {@code _id}, compared with the chunks' bounds) and
     * {@code {_id: 1}}. Any other shard key, or chunks that cannot be read, give {@link #unknown()}.
     *
     * @param shardKey the {@code key} of the collection's {@code config.collections} entry
     * @param chunks   its {@code config.chunks} documents ({@code min}, {@code max}, {@code shard}), in any order
     * @return the placement
     * @throws NullPointerException if an argument is null
     */
    public static KeyPlacement fromChunks(BsonDocument shardKey, List<BsonDocument> chunks) {
        Objects.requireNonNull(shardKey, "shardKey");
        Objects.requireNonNull(chunks, "chunks");
        if (shardKey.size() != 1 || !shardKey.containsKey("_id") || chunks.isEmpty()) {
            return UNKNOWN_PLACEMENT;
        }
        BsonValue pattern = shardKey.get("_id");
        Kind kind;
        if (pattern.isString() && pattern.asString().getValue().equals("hashed")) {
            kind = Kind.HASHED;
        } else if (pattern.isNumber() && pattern.asNumber().doubleValue() == 1) {
            kind = Kind.RANGE;
        } else {
            return UNKNOWN_PLACEMENT;
        }
        // Shards numbered in the order of their names: the number says the order in which key runs are sent.
        java.util.TreeSet<String> names = new java.util.TreeSet<>();
        for (BsonDocument chunk : chunks) {
            if (!chunk.isString("shard")
                    || !chunk.isDocument("min")
                    || !chunk.getDocument("min").containsKey("_id")) {
                return UNKNOWN_PLACEMENT;
            }
            names.add(chunk.getString("shard").getValue());
        }
        Map<String, Integer> shardNumbers = new HashMap<>();
        names.forEach(name -> shardNumbers.put(name, shardNumbers.size()));
        List<Bound> bounds = new ArrayList<>(chunks.size());
        for (BsonDocument chunk : chunks) {
            BsonValue min = chunk.getDocument("min").get("_id");
            long hashedMin = 0;
            if (kind == Kind.HASHED) {
                if (min.getBsonType() == BsonType.MIN_KEY) {
                    hashedMin = Long.MIN_VALUE;
                } else if (min.isInt64() || min.isInt32()) {
                    hashedMin = min.asNumber().longValue();
                } else {
                    return UNKNOWN_PLACEMENT;
                }
            } else if (IdOrder.rank(min) == IdOrder.NOT_COMPARABLE) {
                return UNKNOWN_PLACEMENT;
            }
            bounds.add(new Bound(
                    min, hashedMin, shardNumbers.get(chunk.getString("shard").getValue())));
        }
        Bound[] sorted = bounds.toArray(new Bound[0]);
        if (kind == Kind.HASHED) {
            // MinKey first among equal longs: a chunk starting at NumberLong(Long.MIN_VALUE) follows it
            Arrays.sort(
                    sorted,
                    (a, b) -> a.hashedMin() != b.hashedMin()
                            ? Long.compare(a.hashedMin(), b.hashedMin())
                            : Boolean.compare(
                                    a.min().getBsonType() != BsonType.MIN_KEY,
                                    b.min().getBsonType() != BsonType.MIN_KEY));
        } else {
            Arrays.sort(sorted, (a, b) -> IdOrder.compare(a.min(), b.min()));
        }
        return new KeyPlacement(
                false,
                kind,
                sorted,
                chunks.size() + " chunks of {_id: " + (kind == Kind.HASHED ? "\"hashed\"" : "1") + "} on "
                        + shardNumbers.size() + " shards");
    }

    /**
     * Whether every write of the collection reaches one place.
     *
     * @return {@code true} for {@link #singleTarget()}
     */
    public boolean isSingleTarget() {
        return singleTarget;
    }

    /**
     * The shard of the document with {@code _id} {@code id}, as a number: two {@code _id}s with the same number are on
     * the same shard.
     *
     * @param id the {@code _id}
     * @return the shard's number (0 and up), or {@link #UNKNOWN}; always {@link #UNKNOWN} for a {@link #singleTarget()}
     *     or {@link #unknown()} placement
     */
    public int shardOf(BsonValue id) {
        if (kind == Kind.NONE || id == null) {
            return UNKNOWN;
        }
        int found;
        if (kind == Kind.HASHED) {
            if (!HashedIds.canHash(id)) {
                return UNKNOWN;
            }
            long hash = HashedIds.hash(id);
            found = floor(position -> Long.compare(bounds[position].hashedMin(), hash) <= 0);
        } else {
            if (IdOrder.rank(id) == IdOrder.NOT_COMPARABLE) {
                return UNKNOWN;
            }
            found = floor(position -> IdOrder.compare(bounds[position].min(), id) <= 0);
        }
        return found < 0 ? UNKNOWN : bounds[found].shard();
    }

    /** The last position whose bound is at or below the value, or -1. */
    private int floor(java.util.function.IntPredicate atOrBelow) {
        int low = 0;
        int high = bounds.length - 1;
        int found = -1;
        while (low <= high) {
            int middle = (low + high) >>> 1;
            if (atOrBelow.test(middle)) {
                found = middle;
                low = middle + 1;
            } else {
                high = middle - 1;
            }
        }
        return found;
    }

    @Override
    public String toString() {
        return "KeyPlacement{" + description + '}';
    }
}
