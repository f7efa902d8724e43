package io.github.mongowriteguard.testkit.sharding;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Sorts;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * The config server's documents that mongos' catalog cache loader reads, as the server writes them: each chunk's
 * {@code lastmod} kept while the chunk does not change, the next major version for a chunk that moved (and up to 4.4
 * one "control" chunk left on the donor), so that {@code {lastmod: {$gte: <version held>}}} finds exactly what changed
 * (mongodb/mongo {@code src/mongo/db/s/config/sharding_catalog_manager_chunk_operations.cpp},
 * {@code commitChunkMigration}; {@code src/mongo/s/config_server_catalog_cache_loader.cpp},
 * {@code createConfigDiffQueryUuid}); and {@code config.version}'s {@code clusterId}
 * ({@code src/mongo/db/s/config/sharding_catalog_manager.cpp}, {@code _initConfigVersion}).
 */
class ShardingCatalogTest {

    private static final BsonDocument HASHED_ID = new BsonDocument("_id", new BsonString("hashed"));

    @Test
    void migration_givesOnlyTheMovedChunkTheNextMajorVersion_from50() {
        try (EmulatedShardedCluster cluster = EmulatedCluster.sharded()
                        .shards(3)
                        .serverVersion(ServerVersion.V6_0)
                        .start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            cluster.shardCollection("db.c", ShardKey.of(HASHED_ID));
            List<Document> before = chunks(client, new Document());
            BsonTimestamp version = collectionVersion(before);
            assertThat(before).hasSize(6);
            assertThat(version).isEqualTo(new BsonTimestamp(1, 5));

            String from = cluster.chunkMap("db.c").shardOf(pointOf(cluster, 0));
            String to = from.equals("shard00") ? "shard01" : "shard00";
            cluster.moveChunk("db.c", new BsonDocument("_id", new BsonInt64(0)), to);

            List<Document> changed = chunks(client, new Document("lastmod", new Document("$gt", version)));
            assertThat(changed).hasSize(1);
            assertThat(changed.get(0).get("lastmod")).isEqualTo(new BsonTimestamp(2, 0));
            assertThat(changed.get(0).getString("shard")).isEqualTo(to);
            assertThat(chunks(client, new Document("lastmod", new Document("$gte", version))))
                    .as("$gte the version held also finds the chunk at that version")
                    .hasSize(2);
        }
    }

    @Test
    void migration_alsoBumpsAControlChunkOnTheDonor_upTo44() {
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(2).start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            cluster.shardCollection("db.c", ShardKey.of(HASHED_ID));
            BsonTimestamp version = collectionVersion(chunks(client, new Document()));
            String from = cluster.chunkMap("db.c").shardOf(pointOf(cluster, 0));
            String to = from.equals("shard00") ? "shard01" : "shard00";

            cluster.moveChunk("db.c", new BsonDocument("_id", new BsonInt64(0)), to);

            List<Document> changed = chunks(client, new Document("lastmod", new Document("$gt", version)));
            assertThat(changed)
                    .extracting(c -> c.get("lastmod"))
                    .containsExactly(new BsonTimestamp(2, 0), new BsonTimestamp(2, 1));
            assertThat(changed).extracting(c -> c.getString("shard")).containsExactly(to, from);
        }
    }

    @Test
    void droppedAndRecreated_startsAgainAtVersionOne_withANewEpoch_andTheClusterIdStays() {
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(2).start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            Object clusterId = client.getDatabase("config")
                    .getCollection("version")
                    .find()
                    .first()
                    .get("clusterId");
            cluster.shardCollection("db.c", ShardKey.of(HASHED_ID));
            String from = cluster.chunkMap("db.c").shardOf(pointOf(cluster, 0));
            cluster.moveChunk(
                    "db.c", new BsonDocument("_id", new BsonInt64(0)), from.equals("shard00") ? "shard01" : "shard00");
            Object epoch = collection(client).get("lastmodEpoch");

            client.getDatabase("db").getCollection("c").drop();
            cluster.shardCollection("db.c", ShardKey.of(HASHED_ID));

            assertThat(collection(client).get("lastmodEpoch")).isNotEqualTo(epoch);
            assertThat(collectionVersion(chunks(client, new Document()))).isEqualTo(new BsonTimestamp(1, 3));
            assertThat(client.getDatabase("config")
                            .getCollection("version")
                            .find()
                            .first()
                            .get("clusterId"))
                    .isNotNull()
                    .isEqualTo(clusterId);
        }
    }

    private static BsonDocument pointOf(EmulatedShardedCluster cluster, long id) {
        return cluster.chunkMap("db.c").key().pointOf(new BsonDocument("_id", new BsonInt64(id)));
    }

    private static Document collection(MongoClient client) {
        return client.getDatabase("config")
                .getCollection("collections")
                .find(Filters.eq("_id", "db.c"))
                .first();
    }

    private static List<Document> chunks(MongoClient client, Document filter) {
        Document entry = collection(client);
        Document query =
                entry.containsKey("timestamp") ? new Document("uuid", entry.get("uuid")) : new Document("ns", "db.c");
        query.putAll(filter);
        return client.getDatabase("config")
                .getCollection("chunks")
                .find(query)
                .sort(Sorts.ascending("lastmod"))
                .into(new ArrayList<>());
    }

    private static BsonTimestamp collectionVersion(List<Document> chunks) {
        return chunks.stream()
                .map(c -> (BsonTimestamp) c.get("lastmod"))
                .max(BsonTimestamp::compareTo)
                .orElseThrow();
    }
}
