package io.github.mongowriteguard.testkit.sharding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.InsertManyOptions;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import java.util.List;
import java.util.stream.IntStream;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A fault on one shard, made as a real cluster lets a test make it, fails exactly the writes of that shard's child
 * batches, as mongos reports them.
 *
 * <ul>
 *   <li>A shard's {@code failCommand} ignores mongos' connections (internal clients) unless the fail point says
 *       {@code failInternalCommands: true}: mongodb/mongo {@code src/mongo/db/commands.cpp}
 *       {@code CommandHelpers::shouldActivateFailCommandFailPoint} ({@code kInternalClient} session tag), shown by
 *       {@code jstests/sharding/failcommand_ignores_internal.js}. The tests here used to set the fail point without
 *       it and expected mongos' writes to fail: a real shard would have let them through.</li>
 *   <li>mongos sends a retryable write's child batch again, at most 3 times, after a retryable error
 *       ({@code src/mongo/s/async_requests_sender.cpp} {@code kMaxNumFailedHostRetryAttempts = 3}, policy
 *       {@code kIdempotent} for a {@code txnNumber} outside a transaction in
 *       {@code src/mongo/s/write_ops/batch_write_exec.cpp}): a fault must fire 4 times to reach the client.</li>
 *   <li>A child batch failing as a whole inside an ORDERED bulk is one write error at the batch's first write;
 *       UNORDERED, every write of the batch gets it ({@code BatchWriteOp::noteBatchError},
 *       {@code src/mongo/s/write_ops/batch_write_op.cpp}).</li>
 * </ul>
 */
class ShardFaultsTest {
    private static final String INTERNAL_INSERT_FAULT =
            "{configureFailPoint: 'failCommand', mode: {times: %d}, data: {failCommands: ['insert'], %s, failInternalCommands: true}}";

    private EmulatedShardedCluster cluster;
    private MongoClient client;
    private MongoCollection<Document> items;

    @BeforeEach
    void workedExamplePlacement() {
        cluster = EmulatedCluster.sharded().shards(3).start();
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
    }

    @AfterEach
    void close() {
        client.close();
        cluster.close();
    }

    @Test
    void shardFailPointWithoutFailInternalCommands_ignoresMongos_andStaysArmedForDirectClients() {
        cluster.shard("shard01")
                .failCommand()
                .configure(
                        BsonDocument.parse(
                                "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'], errorCode: 11600}}"));

        items.insertMany(documents(), new InsertManyOptions().ordered(false));

        assertThat(items.countDocuments()).isEqualTo(8);
        assertThat(cluster.routing().shardRetries()).isZero();
        // Not used up by mongos' insert: the next direct client's insert gets it.
        try (MongoClient direct = Clients.client(
                "mongodb://" + cluster.shard("shard01").address() + "/?directConnection=true",
                b -> b.retryWrites(false))) {
            assertThatThrownBy(() ->
                            direct.getDatabase("shop").getCollection("direct").insertOne(new Document("_id", 1)))
                    .isInstanceOfSatisfying(
                            MongoException.class, e -> assertThat(e.getCode()).isEqualTo(11600));
        }
    }

    @Test
    void oneRetryableFault_isRetriedByMongosItself_andTheClientSeesNothing() {
        cluster.shard("shard01")
                .failCommand()
                .configure(BsonDocument.parse(String.format(INTERNAL_INSERT_FAULT, 3, "errorCode: 11600")));

        items.insertMany(documents(), new InsertManyOptions().ordered(false));

        assertThat(items.countDocuments()).isEqualTo(8);
        assertThat(cluster.shard("shard01").commandCount("insert")).isEqualTo(4);
        assertThat(cluster.routing().shardRetries()).isEqualTo(3);
        assertThat(cluster.routing().last().childBatchesPerShard()).containsEntry("shard01", 4);
        assertThat(cluster.mongosTruth().commands("insert")).hasSize(1);
    }

    @Test
    void failPointOnOneShard_outlastingMongosRetries_failsOnlyItsWrites_withTheClientIndices() {
        cluster.shard("shard01")
                .failCommand()
                .configure(BsonDocument.parse(String.format(INTERNAL_INSERT_FAULT, 4, "errorCode: 11600")));

        MongoBulkWriteException e = catchThrowableOfType(
                MongoBulkWriteException.class,
                () -> items.insertMany(documents(), new InsertManyOptions().ordered(false)));

        assertThat(e.getWriteErrors()).extracting(BulkWriteError::getIndex).containsExactly(1, 2, 7);
        assertThat(e.getWriteErrors())
                .allSatisfy(error -> assertThat(error.getCode()).isEqualTo(11600));
        assertThat(items.countDocuments()).isEqualTo(5);
        assertThat(cluster.shard("shard01").commandCount("insert")).isEqualTo(4);
    }

    @Test
    void nonRetryableWrite_isNotRetriedByMongos() {
        cluster.shard("shard01")
                .failCommand()
                .configure(BsonDocument.parse(String.format(INTERNAL_INSERT_FAULT, 1, "errorCode: 11600")));
        try (MongoClient noRetries = Clients.client(cluster.connectionString(), b -> b.retryWrites(false))) {
            MongoBulkWriteException e = catchThrowableOfType(
                    MongoBulkWriteException.class,
                    () -> noRetries
                            .getDatabase("shop")
                            .getCollection("items")
                            .insertMany(documents(), new InsertManyOptions().ordered(false)));

            assertThat(e.getWriteErrors()).extracting(BulkWriteError::getIndex).containsExactly(1, 2, 7);
            assertThat(cluster.routing().shardRetries()).isZero();
        }
    }

    @Test
    void shardClosingTheConnection_isAHostUnreachableWriteError_afterMongosRetries() {
        cluster.shard("shard02")
                .failCommand()
                .configure(BsonDocument.parse(String.format(INTERNAL_INSERT_FAULT, 4, "closeConnection: true")));

        MongoBulkWriteException e = catchThrowableOfType(
                MongoBulkWriteException.class,
                () -> items.insertMany(documents(), new InsertManyOptions().ordered(false)));

        assertThat(e.getWriteErrors()).extracting(BulkWriteError::getIndex).containsExactly(3, 5, 6);
        assertThat(e.getWriteErrors())
                .allSatisfy(error -> assertThat(error.getCode()).isEqualTo(6));
        assertThat(cluster.routing().shardRetries()).isEqualTo(3);
    }

    @Test
    void orderedBulk_faultOnTheThirdRound_stopsTheBulkThere() {
        cluster.shard("shard02")
                .failCommand()
                .configure(BsonDocument.parse(String.format(INTERNAL_INSERT_FAULT, 4, "errorCode: 11600")));

        MongoBulkWriteException e =
                catchThrowableOfType(MongoBulkWriteException.class, () -> items.insertMany(documents()));

        assertThat(e.getWriteErrors()).extracting(BulkWriteError::getIndex).containsExactly(3);
        assertThat(e.getWriteResult().getInsertedCount()).isEqualTo(3);
        assertThat(cluster.routing().last().rounds()).isEqualTo(3);
    }

    @Test
    void orderedBulk_childBatchFailingAsAWhole_isOneWriteErrorAtTheBatchsFirstWrite() {
        // Round 2 is shard01's batch [1, 2]; a non-retryable command error fails it as a whole.
        cluster.shard("shard01")
                .failCommand()
                .configure(BsonDocument.parse(String.format(INTERNAL_INSERT_FAULT, 1, "errorCode: 11601")));

        MongoBulkWriteException e =
                catchThrowableOfType(MongoBulkWriteException.class, () -> items.insertMany(documents()));

        // noteBatchError: ordered, one error (index 0 of the child batch = client index 1); index 2 is not reported.
        assertThat(e.getWriteErrors())
                .extracting(BulkWriteError::getIndex, BulkWriteError::getCode)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(1, 11601));
        assertThat(e.getWriteResult().getInsertedCount()).isEqualTo(1);
        assertThat(cluster.routing().last().rounds()).isEqualTo(2);
        assertThat(items.countDocuments()).isEqualTo(1);
    }

    private static List<Document> documents() {
        return IntStream.rangeClosed(1, 8).mapToObj(i -> new Document("_id", i)).toList();
    }
}
