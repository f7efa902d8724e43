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
     * The initial chunks of an empty collection sharded on a hashed key as 4.4 places them: {@code numChunks} ranges
     * of equal width over the signed 64-bit hash space, symmetric around 0
     * ({@code InitialSplitPolicy::calculateHashedSplitPoints}), in contiguous runs per shard in shard order
     * ({@code generateShardCollectionInitialChunks}: chunk i on {@code shards[(i / numContiguousChunksPerShard) % n]},
     * the run length computed by {@code shardsvr_shard_collection.cpp} {@code calculateTargetState}); with fewer
     * chunks than shards the first chunk is on the primary shard (the first).
     *
     * @param key       the hashed shard key
     * @param shards    the shard names, the primary shard first
     * @param numChunks how many chunks
     * @return the routing table
     */
    public static ChunkMap hashedPresplit(ShardKey key, List<String> shards, int numChunks) {
        List<BsonInt64> splitPoints = hashedSplitPoints(key, numChunks);
        // calculateHashedSplitPointsForEmptyCollection: the "initial" points cut the final ones into one big chunk
        // per shard; the run length is final chunks / initial chunks.
        int numShards = shards.size();
        int initialPoints = 0;
        int lastIndex = -1;
        for (int i = 1; i < numShards; i++) {
            int index = (int) (((long) i * numChunks) / numShards) - 1;
            if (lastIndex < index && index < splitPoints.size()) {
                lastIndex = index;
                initialPoints++;
            }
        }
        int contiguous = initialPoints == 0 ? 1 : (splitPoints.size() + 1) / (initialPoints + 1);
        List<String> owners = new ArrayList<>();
        for (int i = 0; i <= splitPoints.size(); i++) {
            owners.add(
                    i == 0 && splitPoints.size() + 1 < numShards
                            ? shards.get(0)
                            : shards.get((i / contiguous) % numShards));
        }
        return splitAt(key, splitPoints, owners);
    }

    /**
     * The initial chunks of an empty hashed collection as the emulated version's config server creates them:
     * <ul>
     *   <li>4.2-7.0: {@link #hashedPresplit} over the shards in name order, {@code numInitialChunks} (0: 2 per shard);
     *       the 6.x/7.0 source ({@code SplitPointsBasedSplitPolicy::createFirstChunks}) still uses
     *       {@code getAllShardIdsSorted}.</li>
     *   <li>8.0: one chunk per shard whatever {@code numInitialChunks} says (SERVER-76405, SERVER-82611), chunk i on
     *       {@code shards[i % n]} of a shuffled list ({@code getAllNonDrainingShardIdsShuffled}: {@code std::shuffle}
     *       with a default-constructed {@code std::default_random_engine}, the same permutation every time;
     *       {@link #shuffledLikeLibstdcxx}).</li>
     * </ul>
     *
     * @param key              the hashed shard key
     * @param shards           the shard names
     * @param numInitialChunks the requested number of chunks (0: 2 per shard); ignored from 8.0
     * @param version          the emulated server version
     * @return the routing table
     */
    public static ChunkMap hashedInitialChunks(
            ShardKey key,
            List<String> shards,
            int numInitialChunks,
            io.github.mongowriteguard.testkit.server.ServerVersion version) {
        if (version.atLeast(io.github.mongowriteguard.testkit.server.ServerVersion.V8_0)) {
            List<String> shuffled = shuffledLikeLibstdcxx(shards);
            List<BsonInt64> splitPoints = hashedSplitPoints(key, shuffled.size());
            List<String> owners = new ArrayList<>();
            for (int i = 0; i <= splitPoints.size(); i++) {
                owners.add(shuffled.get(i % shuffled.size()));
            }
            return splitAt(key, splitPoints, owners);
        }
        return hashedPresplit(key, shards, numInitialChunks > 0 ? numInitialChunks : 2 * shards.size());
    }

    /**
     * {@code std::shuffle(first, last, std::default_random_engine{})} as libstdc++ (GCC 9 to 12) computes it:
     * {@code minstd_rand0} seeded with 1, positions drawn with {@code uniform_int_distribution}'s downscaling
     * (the engine's range {@code 2^31 - 3} is not a power of two), two positions per draw while the squared range
     * fits. Checked against g++ 12 for 1 to 12 elements.
     */
    static <T> List<T> shuffledLikeLibstdcxx(List<T> items) {
        List<T> out = new ArrayList<>(items);
        int n = out.size();
        if (n < 2) {
            return out;
        }
        long[] state = {1};
        long urngRange = 2147483646L - 1; // max() - min() of minstd_rand0
        long range = n;
        if (urngRange / range >= range) {
            int i = 1;
            if (range % 2 == 0) {
                java.util.Collections.swap(out, i++, (int) uniform(state, 0, 1));
            }
            while (i < n) {
                long swapRange = i + 1;
                long x = uniform(state, 0, swapRange * (swapRange + 1) - 1);
                java.util.Collections.swap(out, i++, (int) (x / (swapRange + 1)));
                java.util.Collections.swap(out, i++, (int) (x % (swapRange + 1)));
            }
            return out;
        }
        for (int i = 1; i < n; i++) {
            java.util.Collections.swap(out, i, (int) uniform(state, 0, i));
        }
        return out;
    }

    /** {@code uniform_int_distribution{a, b}(minstd_rand0)}: libstdc++'s downscaling with rejection. */
    private static long uniform(long[] state, long a, long b) {
        long urngRange = 2147483646L - 1;
        long uerange = b - a + 1;
        long scaling = urngRange / uerange;
        long past = uerange * scaling;
        long ret;
        do {
            state[0] = (state[0] * 16807L) % 2147483647L;
            ret = state[0] - 1;
        } while (ret >= past);
        return ret / scaling + a;
    }

    /** {@code InitialSplitPolicy::calculateHashedSplitPoints}: symmetric around 0, sorted. */
    private static List<BsonInt64> hashedSplitPoints(ShardKey key, int numChunks) {
        if (!key.isHashed() || key.fields().size() != 1) {
            throw new IllegalArgumentException("hashed split points take a single hashed field, not " + key);
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
        return points.stream().map(BsonInt64::new).toList();
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
     * The shards owning a chunk the filter can match, in {@code shardOrder} ({@code ChunkManager::getShardIdsForQuery}
     * narrowed to what the emulator reads from a filter): an equality on every key field is one point; otherwise the
     * first key field's equality, {@code $in} or {@code $gt}/{@code $gte}/{@code $lt}/{@code $lte} bounds (equality
     * and {@code $in} only for a hashed field) select the chunks whose range on that field meets them; any other
     * filter reaches every shard that owns a chunk.
     *
     * @param filter     the query filter
     * @param shardOrder every shard's name, in the order wanted
     * @return the matching shards' names, in {@code shardOrder}
     */
    public List<String> shardsForFilter(BsonDocument filter, List<String> shardOrder) {
        filter = flattenAnd(filter);
        java.util.Set<String> owners = new java.util.HashSet<>();
        java.util.Optional<BsonDocument> point = key.pointOfFilter(filter);
        if (point.isPresent()) {
            owners.add(shardOf(point.get()));
        } else {
            String first = key.fields().get(0);
            BsonValue condition = filter.get(first);
            List<BsonValue[]> intervals = intervals(
                    condition, key.isHashed() && key.pattern().get(first).isString());
            for (Chunk chunk : chunks) {
                BsonValue min = chunk.min().get(first);
                BsonValue max = chunk.max().get(first);
                boolean lastField = key.fields().size() == 1;
                for (BsonValue[] interval : intervals) {
                    int minVsHigh = interval[1] == null ? -1 : BsonOrder.INSTANCE.compare(min, interval[1]);
                    boolean belowHigh = interval.length > 2 ? minVsHigh < 0 : minVsHigh <= 0;
                    int maxVsLow = interval[0] == null ? 1 : BsonOrder.INSTANCE.compare(max, interval[0]);
                    boolean aboveLow = lastField ? maxVsLow > 0 : maxVsLow >= 0;
                    if (belowHigh && aboveLow) {
                        owners.add(chunk.shard());
                    }
                }
            }
        }
        return shardOrder.stream().filter(owners::contains).toList();
    }

    /**
     * A top-level {@code $and} of documents merged into one filter, as the query canonicalizer does: conditions on
     * one field join ({@code {_id: {$gte: 2}}} and {@code {_id: {$lt: 4}}} make {@code {_id: {$gte: 2, $lt: 4}}});
     * an equality wins over operators.
     */
    static BsonDocument flattenAnd(BsonDocument filter) {
        if (!filter.containsKey("$and") || !filter.get("$and").isArray()) {
            return filter;
        }
        BsonDocument merged = new BsonDocument();
        List<BsonDocument> parts = new ArrayList<>();
        for (java.util.Map.Entry<String, BsonValue> entry : filter.entrySet()) {
            if (!entry.getKey().equals("$and")) {
                parts.add(new BsonDocument(entry.getKey(), entry.getValue()));
            }
        }
        for (BsonValue clause : filter.getArray("$and")) {
            if (!clause.isDocument()) {
                return filter;
            }
            parts.add(flattenAnd(clause.asDocument()));
        }
        for (BsonDocument part : parts) {
            for (java.util.Map.Entry<String, BsonValue> entry : part.entrySet()) {
                BsonValue existing = merged.get(entry.getKey());
                BsonValue value = entry.getValue();
                if (existing == null) {
                    merged.put(entry.getKey(), value);
                } else if (isOperators(existing) && isOperators(value)) {
                    BsonDocument both = existing.asDocument().clone();
                    value.asDocument().forEach(both::put);
                    merged.put(entry.getKey(), both);
                } else if (isOperators(existing)) {
                    merged.put(entry.getKey(), value);
                }
            }
        }
        return merged;
    }

    private static boolean isOperators(BsonValue value) {
        return value.isDocument()
                && !value.asDocument().isEmpty()
                && value.asDocument().getFirstKey().startsWith("$");
    }

    /** Intervals [low, high] (null: unbounded) of the first key field's values a condition can match. */
    private static List<BsonValue[]> intervals(BsonValue condition, boolean hashed) {
        List<BsonValue[]> all = List.<BsonValue[]>of(new BsonValue[] {null, null});
        if (condition == null) {
            return all;
        }
        if (!condition.isDocument()
                || condition.asDocument().isEmpty()
                || !condition.asDocument().getFirstKey().startsWith("$")) {
            return condition.isArray() || condition.isRegularExpression()
                    ? all
                    : List.<BsonValue[]>of(point(condition, hashed));
        }
        BsonDocument operators = condition.asDocument();
        if (operators.size() == 1 && operators.containsKey("$eq")) {
            return List.<BsonValue[]>of(point(operators.get("$eq"), hashed));
        }
        if (operators.size() == 1
                && operators.containsKey("$in")
                && operators.get("$in").isArray()) {
            List<BsonValue[]> points = new ArrayList<>();
            for (BsonValue value : operators.getArray("$in")) {
                if (value.isArray() || value.isRegularExpression()) {
                    return all;
                }
                points.add(point(value, hashed));
            }
            return points;
        }
        if (hashed) {
            return all;
        }
        BsonValue low = null;
        BsonValue high = null;
        boolean highExclusive = false;
        for (java.util.Map.Entry<String, BsonValue> operator : operators.entrySet()) {
            switch (operator.getKey()) {
                case "$gt", "$gte" -> low = operator.getValue();
                case "$lt" -> {
                    high = operator.getValue();
                    highExclusive = true;
                }
                case "$lte" -> high = operator.getValue();
                default -> {
                    return all;
                }
            }
        }
        // A third element marks an exclusive upper bound ($lt): a chunk starting at it cannot match.
        return List.<BsonValue[]>of(highExclusive ? new BsonValue[] {low, high, high} : new BsonValue[] {low, high});
    }

    private static BsonValue[] point(BsonValue value, boolean hashed) {
        BsonValue at = hashed ? new BsonInt64(ShardKeyHasher.hash(value)) : value;
        return new BsonValue[] {at, at};
    }

    /**
     * The shard an inserted document goes to.
     *
     * @param document the document
     * @return the name of the shard owning its shard key
     */
    public String shardOfDocument(BsonDocument document) {
        return shardOf(key.pointOf(document));
    }

    @Override
    public String toString() {
        return "ChunkMap{key=" + key + ", chunks=" + chunks + "}";
    }
}
