package io.github.mongowriteguard.testkit.sharding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import java.util.List;
import java.util.stream.IntStream;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * Writes whose filter lacks the shard key, targeted as mongos targets them: mongodb/mongo 4.4
 * {@code src/mongo/s/chunk_manager_targeter.cpp} ({@code targetUpdate}, {@code targetDelete}, {@code _targetQuery});
 * 7.0+ runs a single update or delete without shard key in two phases ({@code CollectionRoutingInfoTargeter},
 * {@code useTwoPhaseWriteProtocol}; {@code src/mongo/s/write_ops/write_without_shard_key_util.cpp}). Collection
 * sharded on {@code _id} (ranged), chunks [MinKey,2) shard00, [2,4) shard01, [4,5) shard02, [5,6) shard00,
 * [6,8) shard02, [8,MaxKey) shard01.
 */
class WritesWithoutShardKeyTest {

    @Test
    void updateOneWhoseFilterReachesOneShard_isAllowed_withoutShardKeyEquality() {
        try (Fixture f = new Fixture(ServerVersion.V4_4)) {
            long modified = f.items
                    .updateOne(
                            Filters.and(Filters.gte("_id", 2), Filters.lt("_id", 4), Filters.eq("d", "d3")),
                            Updates.set("seen", true))
                    .getModifiedCount();

            assertThat(modified).isEqualTo(1);
            assertThat(f.cluster.routing().last().childBatchesPerShard()).containsOnlyKeys("shard01");
        }
    }

    @Test
    void updateOneReachingSeveralShards_isInvalidOptions72_on44_andRunsInTwoPhasesFrom70() {
        try (Fixture f = new Fixture(ServerVersion.V4_4)) {
            MongoWriteException e = catchThrowableOfType(
                    MongoWriteException.class,
                    () -> f.items.updateOne(Filters.eq("d", "d3"), Updates.set("seen", true)));
            assertThat(e.getError().getCode()).isEqualTo(72);
            assertThat(e.getError().getMessage())
                    .contains("A {multi:false} update on a sharded collection must either");
        }
        try (Fixture f = new Fixture(ServerVersion.V8_0)) {
            long modified = f.items
                    .updateOne(Filters.eq("d", "d3"), Updates.set("seen", true))
                    .getModifiedCount();

            assertThat(modified).isEqualTo(1);
            assertThat(f.items.countDocuments(Filters.eq("seen", true))).isEqualTo(1);
            assertThat(f.items.find(Filters.eq("seen", true)).first().getInteger("_id"))
                    .isEqualTo(3);
            // Phase 1 asks every shard owning chunks; phase 2 writes on the one that has the document.
            assertThat(f.cluster.routing().last().childBatchesPerShard())
                    .containsEntry("shard01", 2)
                    .containsEntry("shard00", 1)
                    .containsEntry("shard02", 1);
        }
    }

    @Test
    void deleteOneWithoutShardKeyOrId_isShardKeyNotFound61_on44_andDeletesOneDocumentFrom70() {
        try (Fixture f = new Fixture(ServerVersion.V4_4)) {
            MongoWriteException e =
                    catchThrowableOfType(MongoWriteException.class, () -> f.items.deleteOne(Filters.eq("d", "d7")));
            assertThat(e.getError().getCode()).isEqualTo(61);
        }
        try (Fixture f = new Fixture(ServerVersion.V8_0)) {
            assertThat(f.items.deleteOne(Filters.eq("d", "d7")).getDeletedCount())
                    .isEqualTo(1);
            assertThat(f.items.countDocuments()).isEqualTo(7);
            assertThat(f.items.deleteOne(Filters.eq("d", "none")).getDeletedCount())
                    .isZero();
        }
    }

    @Test
    void updateManyWithARangeOnTheKey_goesOnlyToTheShardsOwningMatchingChunks() {
        try (Fixture f = new Fixture(ServerVersion.V4_4)) {
            long modified = f.items
                    .updateMany(Filters.and(Filters.gte("_id", 4), Filters.lt("_id", 6)), Updates.set("seen", true))
                    .getModifiedCount();

            assertThat(modified).isEqualTo(2);
            assertThat(f.cluster.routing().last().childBatchesPerShard()).containsOnlyKeys("shard00", "shard02");
        }
    }

    @Test
    void upsertWithoutTheExactShardKey_isShardKeyNotFound61() {
        try (Fixture f = new Fixture(ServerVersion.V4_4)) {
            MongoBulkWriteException e = catchThrowableOfType(
                    MongoBulkWriteException.class,
                    () -> f.items.bulkWrite(List.of(new UpdateOneModel<>(
                            Filters.gte("_id", 100), Updates.set("v", 1), new UpdateOptions().upsert(true)))));

            assertThat(e.getWriteErrors()).singleElement().satisfies(error -> {
                assertThat(error.getCode()).isEqualTo(61);
                assertThat(error.getMessage())
                        .contains("Failed to target upsert by query :: could not extract exact shard key");
            });
        }
    }

    @Test
    void replacementReachingSeveralShards_isTargetedByItsReplacementsShardKey() {
        try (Fixture f = new Fixture(ServerVersion.V4_4)) {
            long modified = f.items
                    .replaceOne(
                            Filters.eq("d", "d3"), new Document("_id", 3).append("d", "replaced"), new ReplaceOptions())
                    .getModifiedCount();

            assertThat(modified).isEqualTo(1);
            assertThat(f.cluster.routing().last().childBatchesPerShard()).containsOnlyKeys("shard01");
        }
    }

    private static final class Fixture implements AutoCloseable {
        final EmulatedShardedCluster cluster;
        final MongoClient client;
        final MongoCollection<Document> items;

        Fixture(ServerVersion version) {
            cluster = EmulatedCluster.sharded().shards(3).serverVersion(version).start();
            client = Clients.client(cluster.connectionString());
            ShardKey key = cluster.shardCollection("shop.items", ShardKey.of(new BsonDocument("_id", new BsonInt32(1))))
                    .key();
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
                                    List.of("shard00", "shard01", "shard02", "shard00", "shard02", "shard01"))
                            .chunks());
            items = client.getDatabase("shop").getCollection("items");
            items.insertMany(IntStream.rangeClosed(1, 8)
                    .mapToObj(i -> new Document("_id", i).append("d", "d" + i))
                    .toList());
            cluster.routing().reset();
        }

        @Override
        public void close() {
            client.close();
            cluster.close();
        }
    }
}
