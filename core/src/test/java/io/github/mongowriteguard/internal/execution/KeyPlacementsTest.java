package io.github.mongowriteguard.internal.execution;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoNamespace;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.github.mongowriteguard.internal.ClientPort;
import io.github.mongowriteguard.internal.catalog.CatalogSource;
import io.github.mongowriteguard.internal.plan.KeyPlacement;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/** What the guard learns of where a collection's documents live, from the server, and for how long. */
class KeyPlacementsTest {

    @Test
    void replicaSet_isOnePlace() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = MongoClients.create(cluster.connectionString())) {
            KeyPlacement placement = new KeyPlacements()
                    .forCollection(CatalogSource.of(ClientPort.of(client)), new MongoNamespace("db.c"), 5_000);

            assertThat(placement.isSingleTarget()).isTrue();
        }
    }

    @Test
    void shardedCluster_unshardedIsOnePlace_hashedIdHasShards_otherKeysAreUnknown() {
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(3).start();
                MongoClient client = MongoClients.create(cluster.connectionString())) {
            cluster.shardCollection("db.hashed", ShardKey.of(new BsonDocument("_id", new BsonString("hashed"))));
            cluster.shardCollection("db.tenant", ShardKey.of(new BsonDocument("tenant", new BsonInt32(1))));
            KeyPlacements placements = new KeyPlacements();
            CatalogSource access = CatalogSource.of(ClientPort.of(client));

            KeyPlacement unsharded = placements.forCollection(access, new MongoNamespace("db.plain"), 5_000);
            KeyPlacement hashed = placements.forCollection(access, new MongoNamespace("db.hashed"), 5_000);
            KeyPlacement tenant = placements.forCollection(access, new MongoNamespace("db.tenant"), 5_000);

            assertThat(unsharded.isSingleTarget()).isTrue();
            assertThat(hashed.isSingleTarget()).isFalse();
            // every shard's name, by the emulator's own chunk map, is one shard number
            for (int id = 0; id < 200; id++) {
                String shard =
                        cluster.chunkMap("db.hashed").shardOfDocument(new BsonDocument("_id", new BsonInt32(id)));
                assertThat(hashed.shardOf(new BsonInt32(id)))
                        .as("_id %d on %s", id, shard)
                        .isEqualTo(
                                cluster.shardNames().stream().sorted().toList().indexOf(shard));
            }
            assertThat(tenant.isSingleTarget()).isFalse();
            assertThat(tenant.shardOf(new BsonInt32(1))).isEqualTo(KeyPlacement.UNKNOWN);
        }
    }

    @Test
    void whatWasLearned_isKeptForAMinute_thenAskedAgain() {
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(2).start();
                MongoClient client = MongoClients.create(cluster.connectionString())) {
            AtomicLong now = new AtomicLong();
            KeyPlacements placements = new KeyPlacements(now::get);
            CatalogSource access = CatalogSource.of(ClientPort.of(client));
            MongoNamespace namespace = new MongoNamespace("db.later");

            assertThat(placements.forCollection(access, namespace, 5_000).isSingleTarget())
                    .isTrue();
            cluster.shardCollection("db.later", ShardKey.of(new BsonDocument("_id", new BsonString("hashed"))));
            now.addAndGet(KeyPlacements.TIME_TO_LIVE.toNanos() - 1);
            assertThat(placements.forCollection(access, namespace, 5_000).isSingleTarget())
                    .isTrue();
            now.addAndGet(1);
            assertThat(placements.forCollection(access, namespace, 5_000).isSingleTarget())
                    .isFalse();
        }
    }

    @Test
    void afterTheFirstRead_aRefreshSendsOnlyTheChangedChunks() {
        ShardKey hashedId = ShardKey.of(new BsonDocument("_id", new BsonString("hashed")));
        AtomicLong chunksReceived = new AtomicLong();
        com.mongodb.event.CommandListener countChunks = new com.mongodb.event.CommandListener() {
            @Override
            public void commandSucceeded(com.mongodb.event.CommandSucceededEvent event) {
                BsonDocument cursor = event.getResponse().getDocument("cursor", new BsonDocument());
                if (cursor.getString("ns", new BsonString("")).getValue().equals("config.chunks")) {
                    String batch = cursor.containsKey("firstBatch") ? "firstBatch" : "nextBatch";
                    chunksReceived.addAndGet(cursor.getArray(batch).size());
                }
            }
        };
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(3).start();
                MongoClient client = MongoClients.create(com.mongodb.MongoClientSettings.builder()
                        .applyConnectionString(new com.mongodb.ConnectionString(cluster.connectionString()))
                        .addCommandListener(countChunks)
                        .build())) {
            cluster.shardCollection("db.big", hashedId);
            cluster.placeChunks(
                    "db.big",
                    io.github.mongowriteguard.testkit.sharding.ChunkMap.hashedPresplit(
                                    hashedId, cluster.shardNames(), 1_000)
                            .chunks());
            AtomicLong now = new AtomicLong();
            KeyPlacements placements = new KeyPlacements(now::get);
            CatalogSource access = CatalogSource.of(ClientPort.of(client));
            MongoNamespace namespace = new MongoNamespace("db.big");
            placements.forCollection(access, namespace, 5_000);
            assertThat(chunksReceived).hasValue(1_000);

            now.addAndGet(KeyPlacements.TIME_TO_LIVE.toNanos());
            KeyPlacement again = placements.forCollection(access, namespace, 5_000);

            // nothing changed: only the chunk at the version held comes back, not the 1,000 chunks again
            assertThat(chunksReceived).hasValue(1_001);
            assertThat(again.shardOf(new BsonInt32(1)))
                    .isEqualTo(cluster.shardNames().stream()
                            .sorted()
                            .toList()
                            .indexOf(cluster.chunkMap("db.big")
                                    .shardOfDocument(new BsonDocument("_id", new BsonInt32(1)))));
        }
    }
}
