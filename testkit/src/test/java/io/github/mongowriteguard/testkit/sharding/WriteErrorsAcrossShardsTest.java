package io.github.mongowriteguard.testkit.sharding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import java.util.List;
import java.util.stream.IntStream;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** mongos' merged replies: write errors and upserts carry the client's bulk index; ORDERED stops at the first error. */
class WriteErrorsAcrossShardsTest {
    private EmulatedShardedCluster cluster;
    private MongoClient client;
    private MongoCollection<Document> items;

    @BeforeEach
    void threeShardsWithTheWorkedExamplePlacement() {
        cluster = EmulatedCluster.sharded().shards(3).start();
        client = Clients.client(cluster.connectionString());
        ShardKey key = cluster.shardCollection(
                        "shop.items", ShardKey.of(new org.bson.BsonDocument("_id", new BsonInt32(1))))
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
    }

    @AfterEach
    void close() {
        client.close();
        cluster.close();
    }

    @Test
    void orderedBulk_duplicateKeyInTheMiddle_stopsThereWithTheClientIndex() {
        items.insertOne(new Document("_id", 5));
        cluster.routing().reset();

        MongoBulkWriteException e =
                catchThrowableOfType(MongoBulkWriteException.class, () -> items.insertMany(documents()));

        assertThat(e.getWriteErrors())
                .extracting(BulkWriteError::getIndex, BulkWriteError::getCode)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(4, 11000));
        assertThat(e.getWriteResult().getInsertedCount()).isEqualTo(4);
        assertThat(cluster.routing().last().rounds()).isEqualTo(4); // A, B, C, then A fails: nothing more is sent
        assertThat(items.countDocuments()).isEqualTo(5);
    }

    @Test
    void unorderedBulk_duplicateKeysOnTwoShards_reportsEveryErrorWithItsClientIndex() {
        items.insertMany(List.of(new Document("_id", 3), new Document("_id", 6)));

        MongoBulkWriteException e = catchThrowableOfType(
                MongoBulkWriteException.class,
                () -> items.insertMany(documents(), new InsertManyOptions().ordered(false)));

        assertThat(e.getWriteErrors()).extracting(BulkWriteError::getIndex).containsExactly(2, 5);
        assertThat(e.getWriteErrors())
                .allSatisfy(error -> assertThat(error.getCode()).isEqualTo(11000));
        assertThat(e.getWriteResult().getInsertedCount()).isEqualTo(6);
        assertThat(items.countDocuments()).isEqualTo(8);
    }

    @Test
    void unorderedUpserts_reportTheClientIndex() {
        List<WriteModel<Document>> models = List.of(
                new UpdateOneModel<>(Filters.eq("_id", 7), Updates.set("v", 7), new UpdateOptions().upsert(true)),
                new UpdateOneModel<>(Filters.eq("_id", 1), Updates.set("v", 1), new UpdateOptions().upsert(true)),
                new UpdateOneModel<>(Filters.eq("_id", 2), Updates.set("v", 2), new UpdateOptions().upsert(true)));

        BulkWriteResult result = items.bulkWrite(models, new BulkWriteOptions().ordered(false));

        // _id 7 went to shard02, 1 to shard00, 2 to shard01: each upsert comes back with its index in the bulk.
        assertThat(result.getUpserts())
                .extracting(u -> u.getIndex(), u -> u.getId().asInt32().getValue())
                .containsExactlyInAnyOrder(
                        org.assertj.core.groups.Tuple.tuple(0, 7),
                        org.assertj.core.groups.Tuple.tuple(1, 1),
                        org.assertj.core.groups.Tuple.tuple(2, 2));
        assertThat(cluster.routing().last().childBatches()).isEqualTo(3);
    }

    @Test
    void updateManyWithoutTheShardKey_isBroadcastToEveryShard() {
        items.insertMany(documents());
        cluster.routing().reset();

        long modified =
                items.updateMany(Filters.exists("d"), Updates.set("seen", true)).getModifiedCount();

        assertThat(modified).isEqualTo(8);
        assertThat(cluster.routing().last().childBatchesPerShard()).containsOnlyKeys("shard00", "shard01", "shard02");
        assertThat(cluster.routing().last().rounds()).isEqualTo(1);
    }

    /**
     * 4.4 mongos refuses a {@code deleteOne} without the shard key or an exact {@code _id} with
     * {@code ShardKeyNotFound} (61), not {@code InvalidOptions} (72, which is the {@code updateOne} refusal):
     * mongodb/mongo 4.4 {@code src/mongo/s/chunk_manager_targeter.cpp} {@code targetDelete}. This test used to expect 72.
     */
    @Test
    void deleteOneWithoutShardKeyOrId_isRejectedAsByMongos() {
        items.insertMany(documents());

        MongoBulkWriteException e = catchThrowableOfType(
                MongoBulkWriteException.class,
                () -> items.bulkWrite(List.of(new DeleteOneModel<>(Filters.eq("d", "d3")))));

        assertThat(e.getWriteErrors()).singleElement().satisfies(error -> {
            assertThat(error.getCode()).isEqualTo(61);
            assertThat(error.getMessage())
                    .contains("A single delete on a sharded collection must contain an exact match on _id");
        });
        assertThat(items.countDocuments()).isEqualTo(8);
    }

    private static List<Document> documents() {
        return IntStream.rangeClosed(1, 8)
                .mapToObj(i -> new Document("_id", i).append("d", "d" + i))
                .toList();
    }
}
