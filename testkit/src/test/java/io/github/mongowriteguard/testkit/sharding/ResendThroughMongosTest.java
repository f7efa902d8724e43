package io.github.mongowriteguard.testkit.sharding;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A driver resend through mongos carries the same lsid and txnNumber; mongos forwards them with the statements'
 * ids, so every shard answers the resend from its transaction table and each document is written once.
 */
class ResendThroughMongosTest {
    private static final Predicate<ReceivedCommand> INSERTS =
            c -> c.commandName().equals("insert");

    @Test
    void socketTimeoutOnASlowShard_driverResend_isDeduplicatedAtEveryShard() throws Exception {
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(2).start();
                MongoClient client = Clients.client(
                        cluster.connectionString(),
                        builder -> builder.retryWrites(true)
                                .applyToSocketSettings(socket -> socket.readTimeout(700, TimeUnit.MILLISECONDS)))) {
            ShardKey key = cluster.shardCollection(
                            "shop.items", ShardKey.of(new org.bson.BsonDocument("_id", new BsonInt32(1))))
                    .key();
            cluster.placeChunks(
                    "shop.items",
                    ChunkMap.splitAt(key, List.of(new BsonInt32(100)), List.of("shard00", "shard01"))
                            .chunks());
            MongoCollection<Document> items = client.getDatabase("shop").getCollection("items");

            // shard01 holds the first copy for longer than the socket timeout; the resend waits for its session.
            try (StallHandle stall =
                    cluster.shard(1).stall(Stall.uninterruptible("shop.items", Duration.ofMillis(1_000)))) {
                items.insertMany(List.of(new Document("_id", 1), new Document("_id", 150)));
            }

            assertThat(cluster.mongosTruth().commands(INSERTS)).hasSize(2);
            assertThat(cluster.mongosTruth().copies(INSERTS)).hasSize(1);
            for (int shard = 0; shard < 2; shard++) {
                var truth = cluster.shard(shard).truth();
                assertThat(truth.awaitIdle(INSERTS, Duration.ofSeconds(5))).isTrue();
                assertThat(truth.commands(INSERTS)).hasSize(2);
                assertThat(truth.copies(INSERTS)).hasSize(1);
                assertThat(truth.commands(INSERTS))
                        .filteredOn(c -> c.outcome() == ReceivedCommand.Outcome.RETRIED_RESULT)
                        .hasSize(1);
                assertThat(truth.documentsApplied(INSERTS)).isEqualTo(1);
            }
            assertThat(items.countDocuments()).isEqualTo(2);
        }
    }

    @Test
    void resentIncrement_isAppliedOnce() throws Exception {
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(2).start();
                MongoClient client = Clients.client(
                        cluster.connectionString(),
                        builder -> builder.retryWrites(true)
                                .applyToSocketSettings(socket -> socket.readTimeout(700, TimeUnit.MILLISECONDS)))) {
            ShardKey key = cluster.shardCollection(
                            "shop.items", ShardKey.of(new org.bson.BsonDocument("_id", new BsonInt32(1))))
                    .key();
            cluster.placeChunks(
                    "shop.items",
                    ChunkMap.splitAt(key, List.of(new BsonInt32(100)), List.of("shard00", "shard01"))
                            .chunks());
            MongoCollection<Document> items = client.getDatabase("shop").getCollection("items");
            items.insertMany(
                    List.of(new Document("_id", 1).append("qty", 0), new Document("_id", 150).append("qty", 0)));

            try (StallHandle stall =
                    cluster.shard(1).stall(Stall.uninterruptible("shop.items", Duration.ofMillis(1_000)))) {
                items.bulkWrite(List.of(
                        new com.mongodb.client.model.UpdateOneModel<>(
                                com.mongodb.client.model.Filters.eq("_id", 1),
                                com.mongodb.client.model.Updates.inc("qty", 1)),
                        new com.mongodb.client.model.UpdateOneModel<>(
                                com.mongodb.client.model.Filters.eq("_id", 150),
                                com.mongodb.client.model.Updates.inc("qty", 1))));
            }

            Predicate<ReceivedCommand> updates = c -> c.commandName().equals("update");
            assertThat(cluster.mongosTruth().commands(updates)).hasSize(2);
            assertThat(cluster.truth().awaitIdle(updates, Duration.ofSeconds(5)))
                    .isTrue();
            assertThat(items.find().into(new java.util.ArrayList<>()))
                    .extracting(d -> d.getInteger("qty"))
                    .containsExactly(1, 1);
            assertThat(cluster.truth().documentsApplied(updates)).isEqualTo(2);
        }
    }
}
