package io.github.mongowriteguard.testkit.sharding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import java.time.Duration;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonMaxKey;
import org.bson.BsonMinKey;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/** One test per rule of the sharded cluster's settings and metadata. */
class ShardedClusterSettingsTest {
    private static final ShardKey ID = ShardKey.of(new BsonDocument("_id", new BsonInt32(1)));

    @Test
    void shards_zero_isRejected() {
        assertThatThrownBy(() -> EmulatedCluster.sharded().shards(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("shards (0)");
    }

    @Test
    void slowFactor_beyondTheShards_isRejectedAtStart() {
        assertThatThrownBy(() ->
                        EmulatedCluster.sharded().shards(2).slowFactor(5, 10).start())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("shard 5");
    }

    @Test
    void latency_isRoundTripPlusDocumentsTimesPerDocument_timesTheSlowFactor() {
        try (EmulatedShardedCluster cluster = EmulatedCluster.sharded()
                .shards(5)
                .roundTrip(Duration.ofMillis(1))
                .perDocument(Duration.ofMillis(2))
                .slowFactor(4, 10)
                .start()) {
            assertThat(cluster.latency().costNanos("shard00", 3))
                    .isEqualTo(Duration.ofMillis(7).toNanos());
            assertThat(cluster.latency().costNanos("shard04", 3))
                    .isEqualTo(Duration.ofMillis(70).toNanos());
        }
    }

    /**
     * 4.4 places the initial hashed chunks in contiguous runs per shard, not round robin: chunk i goes to
     * {@code shards[(i / numContiguousChunksPerShard) % n]} (mongodb/mongo 4.4
     * {@code src/mongo/db/s/config/initial_split_policy.cpp} {@code generateShardCollectionInitialChunks}; the run
     * length from {@code src/mongo/db/s/shardsvr_shard_collection.cpp} {@code calculateTargetState}). This test used
     * to expect shard00, shard01, shard00, shard01.
     */
    @Test
    void hashedPresplit_isTwoChunksPerShard_inContiguousRuns_symmetricAroundZero() {
        ChunkMap map = ChunkMap.hashedPresplit(
                ShardKey.of(new BsonDocument("_id", new BsonString("hashed"))), List.of("shard00", "shard01"), 4);

        assertThat(map.chunks()).extracting(Chunk::shard).containsExactly("shard00", "shard00", "shard01", "shard01");
        assertThat(map.chunks().get(0).min().get("_id")).isEqualTo(new BsonMinKey());
        assertThat(map.chunks().get(1).min().get("_id")).isEqualTo(new BsonInt64(-(Long.MAX_VALUE / 4) * 2));
        assertThat(map.chunks().get(2).min().get("_id")).isEqualTo(new BsonInt64(0));
        assertThat(map.chunks().get(3).max().get("_id")).isEqualTo(new BsonMaxKey());
    }

    @Test
    void chunksWithAGap_areRejected() {
        assertThatThrownBy(() -> new ChunkMap(
                        ID,
                        List.of(
                                new Chunk(
                                        new BsonDocument("_id", new BsonMinKey()),
                                        new BsonDocument("_id", new BsonInt32(5)),
                                        "shard00"),
                                new Chunk(
                                        new BsonDocument("_id", new BsonInt32(6)),
                                        new BsonDocument("_id", new BsonMaxKey()),
                                        "shard01"))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("contiguous");
    }

    @Test
    void placeChunks_onAnUnknownShard_isRejected() {
        try (EmulatedShardedCluster cluster =
                EmulatedCluster.sharded().shards(2).start()) {
            cluster.shardCollection("shop.items", ID);
            assertThatThrownBy(() -> cluster.placeChunks(
                            "shop.items", ChunkMap.single(ID, "shard07").chunks()))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("unknown shard");
        }
    }

    @Test
    void filterWithoutEqualityOnTheKey_hasNoPoint() {
        assertThat(ID.pointOfFilter(BsonDocument.parse("{_id: {$gt: 5}}"))).isEmpty();
        assertThat(ID.pointOfFilter(BsonDocument.parse("{_id: {$eq: 5}}"))).contains(BsonDocument.parse("{_id: 5}"));
        assertThat(ID.pointOfFilter(BsonDocument.parse("{other: 5}"))).isEmpty();
    }

    @Test
    void compoundRangedKey_routesByTheFirstFieldThenTheSecond() {
        ShardKey key = ShardKey.of(BsonDocument.parse("{storeId: 1, productId: 1}"));
        ChunkMap map = new ChunkMap(
                key,
                List.of(
                        new Chunk(
                                BsonDocument.parse("{storeId: {$minKey: 1}, productId: {$minKey: 1}}"),
                                BsonDocument.parse("{storeId: 5, productId: 10}"),
                                "shard00"),
                        new Chunk(
                                BsonDocument.parse("{storeId: 5, productId: 10}"),
                                BsonDocument.parse("{storeId: {$maxKey: 1}, productId: {$maxKey: 1}}"),
                                "shard01")));

        assertThat(map.shardOfDocument(BsonDocument.parse("{productId: 100, storeId: 4}")))
                .isEqualTo("shard00");
        assertThat(map.shardOfDocument(BsonDocument.parse("{productId: 9, storeId: 5}")))
                .isEqualTo("shard00");
        assertThat(map.shardOfDocument(BsonDocument.parse("{productId: 10, storeId: 5}")))
                .isEqualTo("shard01");
        assertThat(key.pointOfFilter(BsonDocument.parse("{storeId: 5}"))).isEmpty();
    }
}
