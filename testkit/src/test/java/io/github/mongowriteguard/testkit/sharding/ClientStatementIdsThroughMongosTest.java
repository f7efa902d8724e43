package io.github.mongowriteguard.testkit.sharding;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A client's own statement ids through mongos: mongos gives each child write the id the client's command gives it,
 * {@code stmtIds[i]}, else {@code stmtId + i}, else {@code i} ({@code write_ops::getStmtIdForWriteAt} in mongodb/mongo
 * {@code src/mongo/db/ops/write_ops_parsers.cpp}, called per child write by {@code BatchWriteOp::buildBatchRequest},
 * {@code src/mongo/s/write_ops/batch_write_op.cpp}); each shard's transaction table then answers a statement that
 * already ran under {@code (lsid, txnNumber, stmtId)} from its record
 * ({@code src/mongo/db/transaction/transaction_participant.cpp} {@code checkStatementExecuted}), runs new ids at the
 * same {@code txnNumber} ({@code beginOrContinue}: a retryable write continues at the active number), and refuses a
 * lower {@code txnNumber} with {@code TransactionTooOld} (225).
 */
class ClientStatementIdsThroughMongosTest {

    private static EmulatedShardedCluster twoShards() {
        EmulatedShardedCluster cluster = EmulatedCluster.sharded().shards(2).start();
        ShardKey key = cluster.shardCollection("shop.items", ShardKey.of(new BsonDocument("_id", new BsonInt32(1))))
                .key();
        cluster.placeChunks(
                "shop.items",
                ChunkMap.splitAt(key, List.of(new BsonInt32(100)), List.of("shard00", "shard01"))
                        .chunks());
        return cluster;
    }

    private static Document insert(long txnNumber, List<Document> documents) {
        return new Document("insert", "items").append("documents", documents).append("txnNumber", txnNumber);
    }

    /**
     * {@code stmtId: 10} numbers the statements 10 and 11 on their shards: a later command of the same
     * {@code txnNumber} whose one statement has {@code stmtIds: [11]} is answered from the record of the write to
     * {@code _id: 150} (its shard's statement 11) and does not run.
     */
    @Test
    void stmtIdNumbersTheChildWritesFromIt_andAGivenIdThatRanIsAnsweredFromItsRecord() {
        try (EmulatedShardedCluster cluster = twoShards();
                MongoClient client = Clients.client(cluster.connectionString(), builder -> {});
                ClientSession session = client.startSession()) {
            MongoDatabase shop = client.getDatabase("shop");

            Document first = shop.runCommand(
                    session,
                    insert(3, List.of(new Document("_id", 1), new Document("_id", 150)))
                            .append("stmtId", 10));
            Document replayed = shop.runCommand(
                    session, insert(3, List.of(new Document("_id", 160))).append("stmtIds", List.of(11)));
            Document fresh = shop.runCommand(
                    session, insert(3, List.of(new Document("_id", 170))).append("stmtIds", List.of(12)));

            assertThat(first.get("n", Number.class).intValue()).isEqualTo(2);
            assertThat(replayed.get("n", Number.class).intValue())
                    .as("the stored result of statement 11")
                    .isEqualTo(1);
            assertThat(fresh.get("n", Number.class).intValue()).isEqualTo(1);
            assertThat(shop.getCollection("items")
                            .distinct("_id", Integer.class)
                            .into(new java.util.ArrayList<>()))
                    .as("_id 160 was never inserted: its id named a statement that ran")
                    .containsExactlyInAnyOrder(1, 150, 170);
        }
    }

    /**
     * A lower {@code txnNumber} than one the shard's session ran is {@code TransactionTooOld} at the shard; mongos
     * reports a child batch's error as the write error of each of its writes ({@code BatchWriteOp::noteBatchError},
     * {@code src/mongo/s/write_ops/batch_write_op.cpp}).
     */
    @Test
    void aLowerTxnNumber_isTransactionTooOld() {
        try (EmulatedShardedCluster cluster = twoShards();
                MongoClient client = Clients.client(cluster.connectionString(), builder -> {});
                ClientSession session = client.startSession()) {
            MongoDatabase shop = client.getDatabase("shop");
            shop.runCommand(
                    session, insert(5, List.of(new Document("_id", 150))).append("stmtIds", List.of(0)));

            Document reply = shop.runCommand(
                    session, insert(4, List.of(new Document("_id", 151))).append("stmtIds", List.of(1)));

            assertThat(reply.getList("writeErrors", Document.class))
                    .singleElement()
                    .satisfies(error -> assertThat(error.getInteger("code")).isEqualTo(225));
            assertThat(shop.getCollection("items").countDocuments()).isEqualTo(1);
        }
    }
}
