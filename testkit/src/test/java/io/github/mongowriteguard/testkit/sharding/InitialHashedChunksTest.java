package io.github.mongowriteguard.testkit.sharding;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.model.Sorts;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.Document;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

/**
 * The chunks {@code shardCollection} creates for an empty collection on a hashed key, read through mongos from
 * {@code config.chunks}:
 * <ul>
 *   <li>4.4: {@code numInitialChunks} (default 2 per shard) symmetric around 0, in contiguous runs per shard in shard
 *       order (mongodb/mongo 4.4 {@code src/mongo/db/s/config/initial_split_policy.cpp}
 *       {@code generateShardCollectionInitialChunks}, {@code src/mongo/db/s/shardsvr_shard_collection.cpp}
 *       {@code calculateTargetState}); the 6.x/7.0 source still sorts the shards ({@code getAllShardIdsSorted}), so the
 *       issue's "shuffled from 5.0" is not what that source does.</li>
 *   <li>8.0: one chunk per shard, {@code numInitialChunks} ignored (SERVER-76405, SERVER-82611), on a shuffled shard
 *       list ({@code getAllNonDrainingShardIdsShuffled}, a default-constructed {@code std::default_random_engine}).</li>
 *   <li>{@code config.chunks}: 4.4 keys a chunk by namespace ({@code _id: "<ns>-<field>_<min>"}, {@code ns}); from 5.0
 *       by the collection's {@code uuid} ({@code src/mongo/s/catalog/type_chunk.cpp}).</li>
 * </ul>
 */
class InitialHashedChunksTest {

    @Test
    void server44_twoChunksPerShard_inContiguousRuns_keyedByNamespace() {
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(3).start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            client.getDatabase("admin")
                    .runCommand(new Document("shardCollection", "shop.h").append("key", new Document("_id", "hashed")));

            List<Document> chunks = client.getDatabase("config")
                    .getCollection("chunks")
                    .find(new Document("ns", "shop.h"))
                    .sort(Sorts.ascending("min"))
                    .into(new ArrayList<>());

            assertThat(chunks)
                    .extracting(c -> c.getString("shard"))
                    .containsExactly("shard00", "shard00", "shard01", "shard01", "shard02", "shard02");
            assertThat(chunks.get(0).getString("_id")).isEqualTo("shop.h-_id_MinKey");
            assertThat(chunks.get(0)).containsKey("lastmodEpoch").doesNotContainKey("uuid");
        }
    }

    @Test
    void server44_fewerChunksPerShard_runsOfOne() {
        ChunkMap map = ChunkMap.hashedInitialChunks(
                ShardKey.of(new BsonDocument("_id", new BsonString("hashed"))),
                List.of("shard00", "shard01"),
                3,
                ServerVersion.V4_4);

        assertThat(map.chunks()).extracting(Chunk::shard).containsExactly("shard00", "shard01", "shard00");
    }

    @Test
    void server80_oneChunkPerShard_onTheShuffledShardList_keyedByUuid() {
        try (EmulatedShardedCluster cluster = EmulatedCluster.sharded()
                        .shards(3)
                        .serverVersion(ServerVersion.V8_0)
                        .start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            client.getDatabase("admin")
                    .runCommand(new Document("shardCollection", "shop.h")
                            .append("key", new Document("_id", "hashed"))
                            .append("numInitialChunks", 12));

            Document collection = client.getDatabase("config")
                    .getCollection("collections")
                    .find(new Document("_id", "shop.h"))
                    .first();
            List<Document> chunks = client.getDatabase("config")
                    .getCollection("chunks")
                    .find(new Document("uuid", collection.get("uuid")))
                    .sort(Sorts.ascending("min"))
                    .into(new ArrayList<>());

            // std::shuffle of [shard00, shard01, shard02] with a default engine is [2, 0, 1] (libstdc++).
            assertThat(chunks).extracting(c -> c.getString("shard")).containsExactly("shard02", "shard00", "shard01");
            assertThat(chunks.get(0).get("_id")).isInstanceOf(ObjectId.class);
            assertThat(chunks.get(0)).doesNotContainKey("ns");
            assertThat(collection).containsKey("timestamp");
        }
    }

    @Test
    void shuffle_isLibstdcxxsWithADefaultEngine() {
        // Printed by g++ 12 (libstdc++) for std::shuffle(v.begin(), v.end(), std::default_random_engine{}).
        List<String> expected = List.of(
                "0",
                "1 0",
                "2 0 1",
                "2 3 1 0",
                "3 0 4 2 1",
                "2 3 1 4 5 0",
                "3 0 4 6 5 1 2",
                "2 7 1 6 5 0 4 3",
                "3 0 4 7 5 1 8 6 2",
                "2 7 1 6 8 0 4 9 5 3",
                "3 0 4 10 5 9 8 6 2 1 7",
                "2 7 10 6 11 0 4 9 5 3 1 8");
        for (int n = 1; n <= 12; n++) {
            List<Integer> shuffled =
                    ChunkMap.shuffledLikeLibstdcxx(IntStream.range(0, n).boxed().toList());
            assertThat(String.join(" ", shuffled.stream().map(String::valueOf).toList()))
                    .as("n = " + n)
                    .isEqualTo(expected.get(n - 1));
        }
    }
}
