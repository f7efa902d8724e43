package io.github.mongowriteguard.testkit.sharding;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Accumulators;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Sorts;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Reads and catalog commands through mongos see the whole collection, wherever its chunks live. */
class ReadsThroughMongosTest {
    private EmulatedShardedCluster cluster;
    private MongoClient client;
    private MongoCollection<Document> orders;

    @BeforeEach
    void fiftyOrdersOnFourShards() {
        cluster = EmulatedCluster.sharded().shards(4).mongos(2).start();
        client = Clients.client(cluster.connectionString());
        client.getDatabase("admin")
                .runCommand(
                        new Document("shardCollection", "shop.orders").append("key", new Document("_id", "hashed")));
        orders = client.getDatabase("shop").getCollection("orders");
        orders.insertMany(IntStream.range(0, 50)
                .mapToObj(i -> new Document("_id", i).append("store", i % 5).append("total", i * 10))
                .toList());
    }

    @AfterEach
    void close() {
        client.close();
        cluster.close();
    }

    @Test
    void connectionString_listsEveryMongos() {
        assertThat(cluster.connectionString()).matches("mongodb://127\\.0\\.0\\.1:\\d+,127\\.0\\.0\\.1:\\d+/");
    }

    @Test
    void documentsAreSpreadOverEveryShard() {
        for (int i = 0; i < 4; i++) {
            assertThat(cluster.shard(i)
                            .truth()
                            .documentsApplied(c -> c.commandName().equals("insert")))
                    .isPositive();
        }
        assertThat(cluster.truth().documentsApplied(c -> c.commandName().equals("insert")))
                .isEqualTo(50);
    }

    @Test
    void find_withFilterSortSkipLimitAndProjection() {
        List<Document> page = orders.find(Filters.gte("total", 100))
                .sort(Sorts.descending("total"))
                .skip(2)
                .limit(3)
                .projection(Projections.include("total"))
                .into(new ArrayList<>());

        assertThat(page).extracting(d -> d.getInteger("total")).containsExactly(470, 460, 450);
        assertThat(page.get(0).keySet()).containsExactlyInAnyOrder("_id", "total");
    }

    @Test
    void countDistinctAndAggregate() {
        assertThat(orders.countDocuments(Filters.eq("store", 3))).isEqualTo(10);
        assertThat(orders.distinct("store", Integer.class).into(new ArrayList<>()))
                .containsExactlyInAnyOrder(0, 1, 2, 3, 4);
        List<Document> totals = orders.aggregate(List.of(
                        Aggregates.group("$store", Accumulators.sum("sum", "$total")),
                        Aggregates.sort(Sorts.ascending("_id"))))
                .into(new ArrayList<>());
        assertThat(totals).extracting(d -> d.getInteger("sum")).containsExactly(2250, 2350, 2450, 2550, 2650);
    }

    @Test
    void createIndexesAndDrop_reachEveryShard() {
        orders.createIndex(Indexes.ascending("store"));
        for (int i = 0; i < 4; i++) {
            assertThat(cluster.shard(i).commandCount("createIndexes")).isEqualTo(1);
        }
        assertThat(orders.listIndexes().into(new ArrayList<>()))
                .extracting(d -> d.getString("name"))
                .contains("store_1");

        orders.drop();

        assertThat(orders.countDocuments()).isZero();
        assertThat(client.getDatabase("config").getCollection("chunks").countDocuments(Filters.eq("ns", "shop.orders")))
                .isZero();
    }

    @Test
    void unshardedCollection_livesOnThePrimaryShard() {
        MongoCollection<Document> audit = client.getDatabase("shop").getCollection("audit");
        audit.insertMany(List.of(new Document("_id", 1), new Document("_id", 2)));

        assertThat(audit.countDocuments()).isEqualTo(2);
        assertThat(cluster.routing().last().batches()).containsExactly(new ChildBatch(1, "shard00", List.of(0, 1)));
        assertThat(client.getDatabase("shop").listCollectionNames().into(new ArrayList<>()))
                .contains("audit", "orders");
    }

    @Test
    void shardServerStatus_countsTheChildBatches() {
        int childBatches = cluster.routing().last().childBatchesPerShard().get("shard00");
        assertThat(childBatches).isGreaterThan(1); // an ORDERED insert of 50 documents over 4 shards
        try (MongoClient direct =
                Clients.client("mongodb://" + cluster.shard(0).address() + "/?directConnection=true")) {
            Document status = direct.getDatabase("admin").runCommand(new Document("serverStatus", 1));
            Document insert = status.get("metrics", Document.class)
                    .get("commands", Document.class)
                    .get("insert", Document.class);
            assertThat(insert.get("total", Number.class).longValue()).isEqualTo(childBatches);
        }
    }
}
