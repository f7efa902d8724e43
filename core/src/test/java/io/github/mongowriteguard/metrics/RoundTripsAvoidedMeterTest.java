package io.github.mongowriteguard.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.internal.MicrometerGuardMetrics;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.stream.IntStream;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * {@code mongodb.guard.roundtrips.avoided}: the plan's estimate of the round trips saved against the driver's ORDERED
 * bulk, for the caller's ORDERED bulks only, beside what the emulated mongos counted for the same bulk both ways.
 */
class RoundTripsAvoidedMeterTest {
    private static List<WriteModel<Document>> upserts1000() {
        return IntStream.range(0, 1000)
                .<WriteModel<Document>>mapToObj(i -> new ReplaceOneModel<>(
                        Filters.eq("_id", i), new Document("qty", i), new ReplaceOptions().upsert(true)))
                .toList();
    }

    @Test
    void orderedBulkOnFiveShards_countsThePlansEstimate_closeToWhatMongosSaved_andUnorderedBulksCountNothing() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        WriteGuard guard = WriteGuard.builder()
                .meterRegistry(registry)
                .roundTripEstimateShards(5)
                .build();
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(5).start();
                MongoClient client = MongoClients.create(guard.configure(MongoClientSettings.builder()
                                .applyConnectionString(new ConnectionString(cluster.connectionString())))
                        .build());
                MongoClient plain = MongoClients.create(cluster.connectionString())) {
            cluster.shardCollection("shop.inventory", ShardKey.of(new BsonDocument("_id", new BsonString("hashed"))));
            GuardedCollection<Document> guarded =
                    guard.guardCollection(client, client.getDatabase("shop").getCollection("inventory"));

            guarded.bulkWrite(upserts1000(), new BulkWriteOptions().ordered(false));
            assertThat(registry.find("mongodb.guard.roundtrips.avoided").counter())
                    .as("an UNORDERED bulk saves nothing against the driver's")
                    .isNull();

            cluster.routing().reset();
            guarded.bulkWrite(upserts1000(), new BulkWriteOptions().ordered(true));
            long guardedTrips = cluster.routing().childBatches();
            cluster.routing().reset();
            plain.getDatabase("shop").getCollection("inventory").bulkWrite(upserts1000());
            long driverTrips = cluster.routing().childBatches();

            io.micrometer.core.instrument.Counter avoided = registry.get("mongodb.guard.roundtrips.avoided")
                    .tags("namespace", "shop.inventory")
                    .counter();
            assertThat(avoided.getId().getDescription()).startsWith("Estimate:").contains("5 shards");
            assertThat(avoided.getId().getBaseUnit()).isEqualTo("round trips");
            double estimate = avoided.count();
            // 1 + 999 x (1 - 1/5) = 800.2 for the driver's ORDERED bulk, 1 for the plan's one unordered round
            assertThat(estimate).isEqualTo(799.2, org.assertj.core.data.Offset.offset(1e-9));
            assertThat(driverTrips - guardedTrips)
                    .as("what mongos counted: the estimate is close")
                    .isBetween(700L, 900L);
        }
    }

    @Test
    void withoutAShardCount_theMeterIsNotRegistered() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        MicrometerGuardMetrics metrics =
                new MicrometerGuardMetrics(registry, new io.github.mongowriteguard.internal.copies.LiveCopyLedger());
        metrics.orderedBulkRegrouped(new GuardEventListener.OrderedBulkRegrouped("db.c", "bulkWrite", null));
        assertThat(registry.find("mongodb.guard.roundtrips.avoided").counter()).isNull();
    }

    @Test
    void aNegativeShardCount_isRefused() {
        assertThatThrownBy(() -> WriteGuard.builder().roundTripEstimateShards(-1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("roundTripEstimateShards (-1) must not be negative");
    }
}
