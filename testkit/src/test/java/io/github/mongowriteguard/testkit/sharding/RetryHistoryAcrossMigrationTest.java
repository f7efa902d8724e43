package io.github.mongowriteguard.testkit.sharding;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/**
 * A retryable write's history moves with its chunk: the migration's session catalog step copies the sessions' oplog
 * entries for the chunk's documents (mongodb/mongo {@code src/mongo/db/s/session_catalog_migration_source.cpp},
 * {@code session_catalog_migration_destination.cpp}), so a resend routed to the new owner returns the recorded result.
 * When the donor's oplog no longer has them, the recipient gets the dead-end sentinel and a resend fails with
 * {@code IncompleteTransactionHistory} (217) ({@code TransactionParticipant::_checkStatementExecuted},
 * {@code src/mongo/db/transaction_participant.cpp}: "Incomplete history detected for transaction"); through mongos
 * the shard's command error is the write's error ({@code BatchWriteOp::noteBatchError}).
 */
class RetryHistoryAcrossMigrationTest {

    @Test
    void resendAfterTheChunkMoved_returnsTheRecordedResult_fromTheNewOwner() {
        try (Fixture f = new Fixture()) {
            BsonDocument first = f.send();
            assertThat(first.getNumber("n").intValue()).isEqualTo(1);

            f.cluster.moveChunk("shop.items", new BsonDocument("_id", new BsonInt32(5)), "shard01");
            BsonDocument resend = f.send();

            assertThat(resend.containsKey("writeErrors"))
                    .as("no duplicate key: the insert did not run again")
                    .isFalse();
            assertThat(resend.getNumber("n").intValue()).isEqualTo(1);
            assertThat(f.cluster.shard("shard01").truth().commands("insert"))
                    .singleElement()
                    .satisfies(c -> assertThat(c.outcome()).isEqualTo(ReceivedCommand.Outcome.RETRIED_RESULT));
        }
    }

    @Test
    void resendAfterTheHistoryWasLost_isIncompleteTransactionHistory() {
        try (Fixture f = new Fixture()) {
            f.send();

            f.cluster.moveChunkAfterOplogRollover("shop.items", new BsonDocument("_id", new BsonInt32(5)), "shard01");
            BsonDocument resend = f.send();

            assertThat(resend.getArray("writeErrors")).singleElement().satisfies(error -> {
                assertThat(error.asDocument().getNumber("code").intValue()).isEqualTo(217);
                assertThat(error.asDocument().getString("errmsg").getValue())
                        .contains("Incomplete history detected for transaction");
            });
            assertThat(f.cluster
                            .shard("shard01")
                            .engine()
                            .run("shop", new BsonDocument("count", new BsonString("items")))
                            .getNumber("n")
                            .intValue())
                    .as("only the migrated copy")
                    .isEqualTo(1);
        }
    }

    /** {@code _id} ranged, [MinKey, 10) on shard00, [10, MaxKey) on shard01; one session, txnNumber 1. */
    private static final class Fixture implements AutoCloseable {
        final EmulatedShardedCluster cluster =
                EmulatedCluster.sharded().shards(2).start();
        final MongoClient client = Clients.client(cluster.connectionString(), b -> b.retryWrites(false));
        final ClientSession session = client.startSession();

        Fixture() {
            ShardKey key = cluster.shardCollection("shop.items", ShardKey.of(new BsonDocument("_id", new BsonInt32(1))))
                    .key();
            cluster.placeChunks(
                    "shop.items",
                    ChunkMap.splitAt(key, List.of(new BsonInt32(10)), List.of("shard00", "shard01"))
                            .chunks());
        }

        /** The same retryable insert each time: same lsid (the session), same txnNumber. */
        BsonDocument send() {
            return client.getDatabase("shop")
                    .runCommand(
                            session,
                            new BsonDocument("insert", new BsonString("items"))
                                    .append(
                                            "documents",
                                            new BsonArray(List.of(new BsonDocument("_id", new BsonInt32(5)))))
                                    .append("txnNumber", new BsonInt64(1)),
                            BsonDocument.class);
        }

        @Override
        public void close() {
            session.close();
            client.close();
            cluster.close();
        }
    }
}
