package io.github.mongowriteguard.testkit.sharding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.InsertManyOptions;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.bson.types.MaxKey;
import org.bson.types.MinKey;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * 1,000 documents with a compound {@code _id: {productId, storeId}} hashed on {@code _id}: an ORDERED insert
 * costs one round trip per shard change, 1 + (n - 1)(1 - 1/S) on average; UNORDERED costs one round of S batches.
 * The prediction is computed here from {@link ShardKeyHasher} and the chunks read from {@code config.chunks}
 * through mongos, independently of the router.
 */
class HashedKeyRoundTripsTest {
    private static final int N = 1_000;
    private static final int SEEDS = 5;

    @ParameterizedTest(name = "S = {0}")
    @ValueSource(ints = {2, 3, 4, 5, 6, 8})
    void orderedBulkOnHashedKey_costsOneRoundTripPerShardChange(int shards) {
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(shards).start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            double sum = 0;
            for (int seed = 1; seed <= SEEDS; seed++) {
                String collection = "stock" + seed;
                shardOnHashedId(client, "shop." + collection);
                List<Chunk> chunks = chunksThroughMongos(client, "shop." + collection);
                assertThat(chunks).hasSize(2 * shards);
                List<Document> documents = documents(seed);

                client.getDatabase("shop").getCollection(collection).insertMany(documents);

                RoutedWrite insert = cluster.routing().last();
                int predicted = predictedRoundTrips(documents, chunks);
                assertThat(insert.rounds()).isEqualTo(predicted);
                assertThat(insert.childBatches()).isEqualTo(predicted);
                assertThat(insert.documentsPerShard().values().stream()
                                .mapToInt(Integer::intValue)
                                .sum())
                        .isEqualTo(N);
                sum += insert.rounds();
            }
            double expected = 1 + (N - 1) * (1 - 1.0 / shards);
            assertThat(sum / SEEDS).isCloseTo(expected, within(0.05 * expected));
            assertThat(client.getDatabase("shop").getCollection("stock1").countDocuments())
                    .isEqualTo(N);
        }
    }

    @ParameterizedTest(name = "S = {0}")
    @ValueSource(ints = {2, 5, 8})
    void unorderedBulkOnHashedKey_isOneRoundOfOneBatchPerShard(int shards) {
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(shards).start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            shardOnHashedId(client, "shop.stock");
            MongoCollection<Document> stock = client.getDatabase("shop").getCollection("stock");

            stock.insertMany(documents(42), new InsertManyOptions().ordered(false));

            RoutedWrite insert = cluster.routing().last();
            assertThat(insert.rounds()).isEqualTo(1);
            assertThat(insert.childBatches()).isEqualTo(shards);
            assertThat(insert.childBatchesPerShard())
                    .hasSize(shards)
                    .allSatisfy((shard, batches) -> assertThat(batches).isEqualTo(1));
            for (int i = 0; i < shards; i++) {
                assertThat(cluster.shard(i).commandCount("insert")).isEqualTo(1);
            }
            assertThat(stock.countDocuments()).isEqualTo(N);
        }
    }

    private static void shardOnHashedId(MongoClient client, String namespace) {
        client.getDatabase("admin")
                .runCommand(new Document("shardCollection", namespace).append("key", new Document("_id", "hashed")));
    }

    /** 1 + the number of times consecutive writes go to different shards. */
    private static int predictedRoundTrips(List<Document> documents, List<Chunk> chunks) {
        int roundTrips = 1;
        String previous = null;
        for (Document document : documents) {
            BsonDocument id = document.toBsonDocument().getDocument("_id");
            long hash = ShardKeyHasher.hash(id);
            String shard = chunks.stream()
                    .filter(c -> inRange(hash, c))
                    .findFirst()
                    .orElseThrow()
                    .shard();
            if (previous != null && !shard.equals(previous)) {
                roundTrips++;
            }
            previous = shard;
        }
        return roundTrips;
    }

    private static boolean inRange(long hash, Chunk chunk) {
        var min = chunk.min().get("_id");
        var max = chunk.max().get("_id");
        return (min.getBsonType() == org.bson.BsonType.MIN_KEY || min.asInt64().getValue() <= hash)
                && (max.getBsonType() == org.bson.BsonType.MAX_KEY
                        || hash < max.asInt64().getValue());
    }

    private static List<Chunk> chunksThroughMongos(MongoClient client, String namespace) {
        List<Chunk> chunks = new ArrayList<>();
        for (Document chunk :
                client.getDatabase("config").getCollection("chunks").find(new Document("ns", namespace))) {
            chunks.add(new Chunk(
                    bound(chunk.get("min", Document.class)),
                    bound(chunk.get("max", Document.class)),
                    chunk.getString("shard")));
        }
        return chunks;
    }

    private static BsonDocument bound(Document bound) {
        Object value = bound.get("_id");
        return new BsonDocument(
                "_id",
                value instanceof MinKey
                        ? new org.bson.BsonMinKey()
                        : value instanceof MaxKey ? new org.bson.BsonMaxKey() : new org.bson.BsonInt64((Long) value));
    }

    private static List<Document> documents(int seed) {
        Random random = new Random(seed);
        List<Document> documents = new ArrayList<>();
        for (int i = 0; i < N; i++) {
            documents.add(new Document("_id", new Document("productId", random.nextInt(1_000_000)).append("storeId", i))
                    .append("qty", new BsonInt32(random.nextInt(100)).getValue()));
        }
        return documents;
    }
}
