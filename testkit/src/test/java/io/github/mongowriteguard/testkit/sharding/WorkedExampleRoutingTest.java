package io.github.mongowriteguard.testkit.sharding;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.InsertManyOptions;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * write-path.md, section 1, the worked example: 3 shards A, B, C and 8 documents placed A,B,B,C,A,C,C,B
 * (ranged key {@code _id} 1..8, chunks placed explicitly).
 */
class WorkedExampleRoutingTest {
    private static final String A = "shard00";
    private static final String B = "shard01";
    private static final String C = "shard02";

    private EmulatedShardedCluster cluster;
    private MongoClient client;
    private MongoCollection<Document> items;

    @BeforeEach
    void placeEightDocumentsOnThreeShards() {
        cluster = EmulatedCluster.sharded().shards(3).start();
        client = Clients.client(cluster.connectionString());
        client.getDatabase("admin").runCommand(new Document("enableSharding", "shop"));
        client.getDatabase("admin")
                .runCommand(new Document("shardCollection", "shop.items").append("key", new Document("_id", 1)));
        ShardKey key = cluster.chunkMap("shop.items").key();
        // d1 -> A, d2,d3 -> B, d4 -> C, d5 -> A, d6,d7 -> C, d8 -> B
        cluster.placeChunks(
                "shop.items",
                ChunkMap.splitAt(
                                key,
                                List.of(
                                        new BsonInt32(2),
                                        new BsonInt32(4),
                                        new BsonInt32(5),
                                        new BsonInt32(6),
                                        new BsonInt32(8)),
                                List.of(A, B, C, A, C, B))
                        .chunks());
        items = client.getDatabase("shop").getCollection("items");
    }

    @AfterEach
    void close() {
        client.close();
        cluster.close();
    }

    @Test
    void orderedInsert_isSixRoundsOfOneShardEach() {
        items.insertMany(documents());

        RoutedWrite insert = cluster.routing().last();
        assertThat(insert.ordered()).isTrue();
        assertThat(insert.rounds()).isEqualTo(6);
        assertThat(insert.batches())
                .containsExactly(
                        new ChildBatch(1, A, List.of(0)),
                        new ChildBatch(2, B, List.of(1, 2)),
                        new ChildBatch(3, C, List.of(3)),
                        new ChildBatch(4, A, List.of(4)),
                        new ChildBatch(5, C, List.of(5, 6)),
                        new ChildBatch(6, B, List.of(7)));
        assertThat(cluster.shard(A).commandCount("insert")).isEqualTo(2);
        assertThat(cluster.shard(B).commandCount("insert")).isEqualTo(2);
        assertThat(cluster.shard(C).commandCount("insert")).isEqualTo(2);
        assertThat(items.countDocuments()).isEqualTo(8);
    }

    @Test
    void unorderedInsert_isOneRoundOfThreeChildBatches() {
        items.insertMany(documents(), new InsertManyOptions().ordered(false));

        RoutedWrite insert = cluster.routing().last();
        assertThat(insert.rounds()).isEqualTo(1);
        assertThat(insert.batches())
                .containsExactlyInAnyOrder(
                        new ChildBatch(1, A, List.of(0, 4)),
                        new ChildBatch(1, B, List.of(1, 2, 7)),
                        new ChildBatch(1, C, List.of(3, 5, 6)));
        assertThat(insert.documentsPerShard())
                .containsEntry(A, 2)
                .containsEntry(B, 3)
                .containsEntry(C, 3);
        assertThat(items.find().into(new ArrayList<>())).hasSize(8);
    }

    @Test
    void modelledTime_isTheSumOverRoundsOfTheSlowestBatch() {
        cluster.latency().roundTrip(java.time.Duration.ofMillis(1)).perDocument(java.time.Duration.ofNanos(200_000));

        items.insertMany(documents());
        RoutedWrite ordered = cluster.routing().last();
        items.deleteMany(new Document());
        items.insertMany(documents(), new InsertManyOptions().ordered(false));
        RoutedWrite unordered = cluster.routing().last();

        // ORDERED: 6 round trips + 8 documents x 0.2 ms; UNORDERED: one round, the slowest batch has 3 documents.
        assertThat(ordered.modelledTime()).isEqualTo(java.time.Duration.ofNanos(7_600_000));
        assertThat(unordered.modelledTime()).isEqualTo(java.time.Duration.ofNanos(1_600_000));
    }

    @Test
    void shardingMetadata_isReadableThroughMongos() {
        List<Document> chunks = client.getDatabase("config")
                .getCollection("chunks")
                .find(new Document("ns", "shop.items"))
                .into(new ArrayList<>());
        assertThat(chunks).extracting(c -> c.getString("shard")).containsExactlyInAnyOrder(A, B, C, A, C, B);
        Document collection = client.getDatabase("config")
                .getCollection("collections")
                .find(new Document("_id", "shop.items"))
                .first();
        assertThat(collection).isNotNull();
        assertThat(collection.get("key", Document.class)).isEqualTo(new Document("_id", 1));
    }

    @Test
    void eachShardStoresOnlyItsChunks() {
        items.insertMany(documents());

        assertThat(ids(cluster.shard(A)
                        .engine()
                        .run("shop", new BsonDocument("find", new org.bson.BsonString("items")))))
                .containsExactlyInAnyOrder(1, 5);
        assertThat(ids(cluster.shard(B)
                        .engine()
                        .run("shop", new BsonDocument("find", new org.bson.BsonString("items")))))
                .containsExactlyInAnyOrder(2, 3, 8);
    }

    private static List<Integer> ids(BsonDocument findReply) {
        return findReply.getDocument("cursor").getArray("firstBatch").stream()
                .map(d -> d.asDocument().getInt32("_id").getValue())
                .toList();
    }

    private static List<Document> documents() {
        return IntStream.rangeClosed(1, 8)
                .mapToObj(i -> new Document("_id", i).append("d", "d" + i))
                .toList();
    }
}
