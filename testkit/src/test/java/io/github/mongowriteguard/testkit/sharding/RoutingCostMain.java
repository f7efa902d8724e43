package io.github.mongowriteguard.testkit.sharding;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.InsertManyOptions;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.bson.Document;

/**
 * Not a test: prints the wall time of one 1,000-document bulk on a hashed {@code _id} over 5 shards with the
 * articles' costs (1 ms per round trip, 0.2 ms per document, one shard 10x slower), next to write-path.md's
 * Little's-law table. Speed is measured here, never asserted.
 *
 * <pre>
 * java -cp testkit/target/classes:testkit/target/test-classes:$(cat cp.txt) \
 *     io.github.mongowriteguard.testkit.sharding.RoutingCostMain
 * </pre>
 */
public final class RoutingCostMain {
    private RoutingCostMain() {}

    public static void main(String[] args) {
        int n = 1_000;
        int shards = 5;
        for (boolean slow : List.of(false, true)) {
            var builder = EmulatedCluster.sharded()
                    .shards(shards)
                    .roundTrip(Duration.ofNanos(Long.getLong("roundTripNanos", 1_000_000)))
                    .perDocument(Duration.ofNanos(Long.getLong("perDocumentNanos", 200_000)));
            if (slow) {
                builder.slowFactor(shards - 1, 10);
            }
            try (EmulatedShardedCluster cluster = builder.start();
                    MongoClient client = Clients.client(
                            cluster.connectionString(),
                            settings -> settings.retryWrites(!Boolean.getBoolean("noRetryWrites")))) {
                client.getDatabase("admin")
                        .runCommand(new Document("shardCollection", "lab.stock")
                                .append("key", new Document("_id", "hashed")));
                MongoCollection<Document> stock = client.getDatabase("lab").getCollection("stock");
                stock.insertOne(new Document("warm", 1)); // connection pool and session warmed up
                int seed = 0;
                for (boolean ordered : List.of(true, false, true, false)) { // the first two warm the JIT up
                    seed++;
                    long start = System.nanoTime();
                    stock.insertMany(documents(n, seed), new InsertManyOptions().ordered(ordered));
                    long millis = (System.nanoTime() - start) / 1_000_000;
                    RoutedWrite write = cluster.routing().last();
                    System.out.printf(
                            "%-9s %-11s rounds=%4d childBatches=%4d modelled=%5d ms wall=%5d ms%n",
                            ordered ? "ORDERED" : "UNORDERED",
                            slow ? "slow shard" : "normal",
                            write.rounds(),
                            write.childBatches(),
                            write.modelledTime().toMillis(),
                            millis);
                }
            }
        }
        System.out.println("write-path.md: ORDERED 1.0 s / ~2.8 s with the slow shard; UNORDERED 41 ms / 410 ms");
    }

    private static List<Document> documents(int n, int seed) {
        Random random = new Random(seed);
        List<Document> documents = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            documents.add(
                    new Document("_id", new Document("productId", random.nextInt(1_000_000)).append("storeId", i)));
        }
        return documents;
    }
}
