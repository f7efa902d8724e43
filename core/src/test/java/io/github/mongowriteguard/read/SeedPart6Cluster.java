package io.github.mongowriteguard.read;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.ReadPreference;
import com.mongodb.Tag;
import com.mongodb.TagSet;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.InsertManyOptions;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.sharding.ShardReplicaSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.Document;

/**
 * Seed part 6's cluster, scaled in time: 2 shards of 3 nodes, {@code demo.store_inventory} hashed on {@code _id}
 * with 2,000 documents, shard A's secondaries tagged a1/a2 (shard B's b1/b2), a 150 ms refresh limit.
 */
final class SeedPart6Cluster implements AutoCloseable {
    static final String NS = "demo.store_inventory";

    final EmulatedShardedCluster cluster;
    final MongoClient client;
    final MongoCollection<Document> inventory;
    final ShardReplicaSet shardA;
    final EmulatedNode a1;
    final EmulatedNode a2;
    final List<Document> documents = new ArrayList<>();

    SeedPart6Cluster(int staleConfigRetries) {
        cluster = EmulatedCluster.sharded()
                .shards(2)
                .nodesPerShard(3)
                .routingRefreshLimit(Duration.ofMillis(150))
                .staleConfigRetries(staleConfigRetries)
                .start();
        client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(cluster.connectionString()))
                .applyToClusterSettings(c -> c.serverSelectionTimeout(10, TimeUnit.SECONDS))
                .build());
        client.getDatabase("admin")
                .runCommand(new Document("shardCollection", NS).append("key", new Document("_id", "hashed")));
        inventory = client.getDatabase("demo").getCollection("store_inventory");
        for (int p = 1; p <= 100; p++) {
            for (int s = 1; s <= 20; s++) {
                documents.add(new Document("_id", new Document("productId", p).append("storeId", s)).append("qty", 10));
            }
        }
        inventory.insertMany(documents, new InsertManyOptions().ordered(false));
        shardA = cluster.shardSet(0);
        a1 = shardA.secondary(0);
        a2 = shardA.secondary(1);
        a1.tags(Map.of("node", "a1"));
        a2.tags(Map.of("node", "a2"));
        cluster.shardSet(1).secondary(0).tags(Map.of("node", "b1"));
        cluster.shardSet(1).secondary(1).tags(Map.of("node", "b2"));
    }

    /** Aimed at one node of shard A; any secondary of other shards (a whole-collection read touches both). */
    static ReadPreference aimedAt(String node) {
        return ReadPreference.secondary(List.of(new TagSet(new Tag("node", node)), new TagSet()));
    }

    /** A document that lives on shard A. */
    Document onShardA() {
        return documents.stream()
                .filter(d -> cluster.chunkMap(NS)
                        .shardOfDocument(BsonDocument.parse(d.toJson()))
                        .equals(shardA.name()))
                .findFirst()
                .orElseThrow();
    }

    @Override
    public void close() {
        client.close();
        cluster.close();
    }
}
