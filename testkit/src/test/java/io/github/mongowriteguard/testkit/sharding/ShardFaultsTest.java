package io.github.mongowriteguard.testkit.sharding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.List;
import java.util.stream.IntStream;

import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.InsertManyOptions;

import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;

/** A fault on one shard fails exactly the writes of that shard's child batches, as mongos reports them. */
class ShardFaultsTest {
    private EmulatedShardedCluster cluster;
    private MongoClient client;
    private MongoCollection<Document> items;

    @BeforeEach
    void workedExamplePlacement() {
        cluster = EmulatedCluster.sharded().shards(3).start();
        client = Clients.client(cluster.connectionString());
        ShardKey key = cluster.shardCollection("shop.items", ShardKey.of(new BsonDocument("_id", new BsonInt32(1)))).key();
        cluster.placeChunks("shop.items", ChunkMap.splitAt(key,
            List.of(new BsonInt32(2), new BsonInt32(4), new BsonInt32(5), new BsonInt32(6), new BsonInt32(8)),
            List.of("shard00", "shard01", "shard02", "shard00", "shard02", "shard01")).chunks());
        items = client.getDatabase("shop").getCollection("items");
    }

    @AfterEach
    void close() {
        client.close();
        cluster.close();
    }

    @Test
    void failPointOnOneShard_failsOnlyItsWrites_withTheClientIndices() {
        cluster.shard("shard01").failCommand().configure(BsonDocument.parse(
            "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'], errorCode: 11600}}"));

        MongoBulkWriteException e = catchThrowableOfType(MongoBulkWriteException.class,
            () -> items.insertMany(documents(), new InsertManyOptions().ordered(false)));

        assertThat(e.getWriteErrors()).extracting(BulkWriteError::getIndex).containsExactly(1, 2, 7);
        assertThat(e.getWriteErrors()).allSatisfy(error -> assertThat(error.getCode()).isEqualTo(11600));
        assertThat(items.countDocuments()).isEqualTo(5);
    }

    @Test
    void shardClosingTheConnection_isAHostUnreachableWriteError() {
        cluster.shard("shard02").failCommand().configure(BsonDocument.parse(
            "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'], closeConnection: true}}"));

        MongoBulkWriteException e = catchThrowableOfType(MongoBulkWriteException.class,
            () -> items.insertMany(documents(), new InsertManyOptions().ordered(false)));

        assertThat(e.getWriteErrors()).extracting(BulkWriteError::getIndex).containsExactly(3, 5, 6);
        assertThat(e.getWriteErrors()).allSatisfy(error -> assertThat(error.getCode()).isEqualTo(6));
    }

    @Test
    void orderedBulk_faultOnTheThirdRound_stopsTheBulkThere() {
        cluster.shard("shard02").failCommand().configure(BsonDocument.parse(
            "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'], errorCode: 11600}}"));

        MongoBulkWriteException e = catchThrowableOfType(MongoBulkWriteException.class, () -> items.insertMany(documents()));

        assertThat(e.getWriteErrors()).extracting(BulkWriteError::getIndex).containsExactly(3);
        assertThat(e.getWriteResult().getInsertedCount()).isEqualTo(3);
        assertThat(cluster.routing().last().rounds()).isEqualTo(3);
    }

    private static List<Document> documents() {
        return IntStream.rangeClosed(1, 8).mapToObj(i -> new Document("_id", i)).toList();
    }
}
