package io.github.mongowriteguard.testkit.sharding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoExecutionTimeoutException;
import com.mongodb.ReadConcern;
import com.mongodb.ReadPreference;
import com.mongodb.Tag;
import com.mongodb.TagSet;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.InsertManyOptions;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Seed part 6's procedure (write-path.md, section 3) on 2 shards of 3 nodes: a secondary learns routing metadata
 * only through a write of its primary, so with the primary's writes stalled a restarted secondary cannot serve,
 * while one that already knew the collection keeps serving.
 */
class SecondaryRoutingRefreshTest {
    private static final String NS = "demo.store_inventory";

    private EmulatedShardedCluster cluster;
    private MongoClient client;
    private MongoCollection<Document> inventory;
    private ShardReplicaSet shardA;
    private EmulatedNode a1;
    private EmulatedNode a2;
    private Document onShardA;

    @BeforeEach
    void twoShardsOfThreeNodes() {
        start(10);
    }

    private void start(int staleConfigRetries) {
        cluster = shards(EmulatedCluster.sharded()
                        .shards(2)
                        .nodesPerShard(3)
                        .routingRefreshLimit(Duration.ofMillis(150))
                        .staleConfigRetries(staleConfigRetries))
                .start();
        client = Clients.client(cluster.connectionString());
        client.getDatabase("admin")
                .runCommand(new Document("shardCollection", NS).append("key", new Document("_id", "hashed")));
        inventory = client.getDatabase("demo").getCollection("store_inventory");
        List<Document> documents = new ArrayList<>();
        for (int p = 1; p <= 100; p++) {
            for (int s = 1; s <= 20; s++) {
                documents.add(new Document("_id", new Document("productId", p).append("storeId", s)).append("qty", 10));
            }
        }
        inventory.insertMany(documents, new InsertManyOptions().ordered(false));
        shardA = cluster.shardSet(0);
        for (int shard = 0; shard < 2; shard++) {
            assertThat(cluster.shardSet(shard).awaitReplication(Duration.ofSeconds(10)))
                    .isTrue();
        }
        a1 = shardA.secondary(0);
        a2 = shardA.secondary(1);
        a1.tags(Map.of("node", "a1"));
        a2.tags(Map.of("node", "a2"));
        cluster.shardSet(1).secondary(0).tags(Map.of("node", "b1"));
        cluster.shardSet(1).secondary(1).tags(Map.of("node", "b2"));
        ChunkMap map = cluster.chunkMap(NS);
        onShardA = documents.stream()
                .filter(d -> map.shardOfDocument(BsonDocument.parse(d.toJson())).equals("shard00"))
                .findFirst()
                .orElseThrow();
    }

    /** The shards' kind: secondaries reading the primary's data here; replicating in the subclass. */
    EmulatedShardedCluster.Builder shards(EmulatedShardedCluster.Builder builder) {
        return builder;
    }

    @AfterEach
    void close() {
        client.close();
        cluster.close();
    }

    private Document readOn(String node, long maxTimeMs) {
        MongoCollection<Document> aimed =
                inventory.withReadPreference(ReadPreference.secondary(new TagSet(new Tag("node", node))));
        var find = aimed.find(new Document("_id", onShardA.get("_id")));
        if (maxTimeMs > 0) {
            find.maxTime(maxTimeMs, TimeUnit.MILLISECONDS);
        }
        return find.first();
    }

    @Test
    void secondary_answersHelloAsASecondaryWithSetNameHostsAndTags() {
        try (MongoClient direct = Clients.client("mongodb://" + a1.address() + "/?directConnection=true")) {
            Document hello = direct.getDatabase("admin").runCommand(new Document("hello", 1));
            assertThat(hello.getBoolean("isWritablePrimary")).isFalse();
            assertThat(hello.getBoolean("secondary")).isTrue();
            assertThat(hello.getString("setName")).isEqualTo("shard00");
            assertThat(hello.getList("hosts", String.class))
                    .hasSize(3)
                    .contains(a1.address(), shardA.primary().address());
            assertThat(hello.getString("primary")).isEqualTo(shardA.primary().address());
            assertThat(hello.get("tags", Document.class)).isEqualTo(new Document("node", "a1"));
        }
    }

    @Test
    void readPreferenceTags_selectTheShardMember() {
        readOn("a1", 0);
        assertThat(a1.commandCount("find")).isPositive();
        assertThat(a2.commandCount("find")).isZero();
        assertThat(shardA.routingVersion(a1, NS)).hasValue(1);
        assertThat(shardA.routingVersion(a2, NS)).isEmpty();
    }

    @Test
    void firstVersionedRead_onASecondary_isStaleConfig_thenRefreshedThroughThePrimarysConfigCacheWrite() {
        assertThat(readOn("a1", 0)).isEqualTo(onShardA);

        assertThat(shardA.staleConfigReplies(a1)).isEqualTo(1);
        assertThat(cluster.routing().staleConfigRetries()).isEqualTo(1);
        assertThat(shardA.primary().truth().commands(c -> c.commandName().equals("forceRoutingTableRefresh")))
                .hasSize(1);
        assertThat(shardA.primary().truth().commands(c -> c.namespace().equals("config.cache.collections")))
                .hasSize(1);
    }

    @Test
    void seedPart6_restartedSecondaryFails_notRestartedOneAnswers_bothAnswerAfterThePrimaryResumes() {
        readOn("a1", 0);
        readOn("a2", 0);
        shardA.restart(a1);
        long a2StaleBefore = shardA.staleConfigReplies(a2);

        try (StallHandle stalled = shardA.stallPrimaryWrites()) {
            assertThatThrownBy(() -> readOn("a1", 1_000)).isInstanceOf(MongoExecutionTimeoutException.class);
            assertThat(readOn("a2", 1_000)).isEqualTo(onShardA);
            assertThat(shardA.refreshLog(a1))
                    .isNotEmpty()
                    .anySatisfy(line ->
                            assertThat(line).contains("Failed to refresh metadata for " + NS, "ExceededTimeLimit"));
            assertThat(shardA.staleConfigReplies(a2)).isEqualTo(a2StaleBefore);

            stalled.release();
            assertThat(readOn("a1", 5_000)).isEqualTo(onShardA);
            assertThat(readOn("a2", 5_000)).isEqualTo(onShardA);
        }
    }

    @Test
    void withoutAClientDeadline_mongosGivesUpAfterItsRetries_andTheClientSeesStaleConfig() {
        close();
        start(2);
        shardA.restart(a1);
        try (StallHandle stalled = shardA.stallPrimaryWrites()) {
            assertThatThrownBy(() -> readOn("a1", 0)).isInstanceOfSatisfying(MongoCommandException.class, e -> {
                assertThat(e.getErrorCode()).isEqualTo(13388);
                assertThat(e.getResponse().getString("shardId").getValue()).isEqualTo("shard00");
            });
            assertThat(shardA.staleConfigReplies(a1)).isEqualTo(3);
        }
    }

    @Test
    void restartingASecondary_thatWasServing_makesItFail() {
        try (StallHandle stalled = shardA.stallPrimaryWrites()) {
            // a1 never read the collection: a first read fails as well.
            assertThatThrownBy(() -> readOn("a1", 500)).isInstanceOf(MongoExecutionTimeoutException.class);
        }
        readOn("a2", 0);
        try (StallHandle stalled = shardA.stallPrimaryWrites()) {
            assertThat(readOn("a2", 500)).isEqualTo(onShardA);
            shardA.restart(a2);
            assertThatThrownBy(() -> readOn("a2", 500)).isInstanceOf(MongoExecutionTimeoutException.class);
        }
    }

    @Test
    void migrationOrphans_areFilteredByVersionedReads_butReturnedWithReadConcernAvailable() {
        ChunkMigration migration = cluster.moveChunk(NS, BsonDocument.parse(onShardA.toJson()), "shard01");
        int moved = migration.movedIds().size();
        assertThat(moved).isPositive();
        assertThat(cluster.chunkMap(NS).shardOfDocument(BsonDocument.parse(onShardA.toJson())))
                .isEqualTo("shard01");

        assertThat(inventory.countDocuments()).isEqualTo(2_000);
        assertThat(inventory.find().into(new ArrayList<>())).hasSize(2_000);
        List<Document> available =
                inventory.withReadConcern(ReadConcern.AVAILABLE).find().into(new ArrayList<>());
        assertThat(available).hasSize(2_000 + moved);
        assertThat(available.stream().map(d -> d.get("_id")).distinct().count()).isEqualTo(2_000);

        assertThat(migration.deleteOrphans()).isEqualTo(moved);
        assertThat(inventory.withReadConcern(ReadConcern.AVAILABLE).find().into(new ArrayList<>()))
                .hasSize(2_000);
    }

    @Test
    void afterAMigration_aSecondaryThatKnewTheOldVersion_refreshesThroughItsPrimary() {
        ReadPreference a2First = ReadPreference.secondary(List.of(new TagSet(new Tag("node", "a2")), new TagSet()));
        inventory.withReadPreference(a2First).find().into(new ArrayList<>());
        cluster.moveChunk(NS, BsonDocument.parse(onShardA.toJson()), "shard01");
        assertThat(shardA.routingVersion(a2, NS)).hasValue(1);
        assertThat(shardA.routingVersion(shardA.primary(), NS)).hasValue(2);
        try (StallHandle stalled = shardA.stallPrimaryWrites()) {
            assertThatThrownBy(() -> inventory
                            .withReadPreference(a2First)
                            .find()
                            .maxTime(500, TimeUnit.MILLISECONDS)
                            .into(new ArrayList<>()))
                    .isInstanceOf(MongoExecutionTimeoutException.class);
        }
        assertThat(inventory.withReadPreference(a2First).find().into(new ArrayList<>()))
                .hasSize(2_000);
        assertThat(shardA.routingVersion(a2, NS)).hasValue(2);
    }

    @Test
    void aTagThatNoMemberOfATargetedShardCarries_failsToSatisfyTheReadPreference() {
        assertThatThrownBy(() -> inventory
                        .withReadPreference(ReadPreference.secondary(new TagSet(new Tag("node", "a1"))))
                        .find()
                        .into(new ArrayList<>()))
                .isInstanceOfSatisfying(
                        MongoCommandException.class,
                        e -> assertThat(e.getErrorCode()).isEqualTo(133));
    }

    @Test
    void secondary_refusesWrites() {
        try (MongoClient direct = Clients.client("mongodb://" + a1.address() + "/?directConnection=true")) {
            assertThatThrownBy(
                            () -> direct.getDatabase("demo").getCollection("x").insertOne(new Document("_id", 1)))
                    .isInstanceOfSatisfying(
                            com.mongodb.MongoException.class,
                            e -> assertThat(e.getCode()).isEqualTo(10107));
        }
        assertThat(new BsonInt32(1)).isNotNull();
    }
}
