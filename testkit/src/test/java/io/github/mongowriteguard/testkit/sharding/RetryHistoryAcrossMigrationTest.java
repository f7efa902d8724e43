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
 * the shard's command error is the write's error ({@code BatchWriteOp::noteBatchError}). The donor tells a statement of
 * the chunk by the key of the document it wrote, read from its oplog entry, not by the statement's filter
 * ({@code session_catalog_migration_source.cpp}).
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

    @Test
    void updateWithAnAndFilter_carriesItsHistoryByTheWrittenDocumentsKey_soTheResendIsReplayed() {
        try (Fixture f = new Fixture()) {
            f.client
                    .getDatabase("shop")
                    .getCollection("items")
                    .insertOne(new org.bson.Document("_id", 5).append("n", 0));
            BsonDocument update = f.retryableInc(BsonDocument.parse("{$and: [{_id: 5}, {n: {$gte: 0}}]}"), 2);

            f.cluster.moveChunk("shop.items", new BsonDocument("_id", new BsonInt32(5)), "shard01");
            BsonDocument resend = f.retryableInc(BsonDocument.parse("{$and: [{_id: 5}, {n: {$gte: 0}}]}"), 2);

            assertThat(update.getNumber("nModified").intValue()).isEqualTo(1);
            assertThat(resend.getNumber("nModified").intValue()).isEqualTo(1);
            assertThat(f.n(5))
                    .as("applied once: the new owner replayed the recorded result")
                    .isEqualTo(1);
            assertThat(f.cluster.shard("shard01").truth().commands("update"))
                    .singleElement()
                    .satisfies(c -> assertThat(c.outcome()).isEqualTo(ReceivedCommand.Outcome.RETRIED_RESULT));
        }
    }

    @Test
    void idFilterOnACollectionShardedOnAnotherKey_carriesItsHistoryByTheWrittenDocumentsKey() {
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(2).start();
                MongoClient client = Clients.client(cluster.connectionString(), b -> b.retryWrites(false));
                ClientSession session = client.startSession()) {
            TwoChunks.splitAt10(cluster, "shop.items", "x");
            org.bson.Document doc =
                    new org.bson.Document("_id", 5).append("x", 5).append("n", 0);
            client.getDatabase("shop").getCollection("items").insertOne(doc);
            BsonDocument inc = BsonDocument.parse(
                    "{update: 'items', updates: [{q: {_id: 5}, u: {$inc: {n: 1}}}], txnNumber: NumberLong(2)}");

            client.getDatabase("shop").runCommand(session, inc, BsonDocument.class);
            cluster.moveChunk("shop.items", new BsonDocument("x", new BsonInt32(5)), "shard01");
            client.getDatabase("shop").runCommand(session, inc, BsonDocument.class);

            assertThat(client.getDatabase("shop")
                            .getCollection("items")
                            .find(new org.bson.Document("_id", 5))
                            .first()
                            .getInteger("n"))
                    .as("applied once: the new owner replayed the recorded result")
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
            TwoChunks.splitAt10(cluster, "shop.items", "_id");
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

        /** A retryable {@code {$inc: {n: 1}}} of the documents {@code filter} matches, on the fixture's session. */
        BsonDocument retryableInc(BsonDocument filter, long txnNumber) {
            return client.getDatabase("shop")
                    .runCommand(
                            session,
                            new BsonDocument("update", new BsonString("items"))
                                    .append(
                                            "updates",
                                            new BsonArray(List.of(new BsonDocument("q", filter)
                                                    .append("u", BsonDocument.parse("{$inc: {n: 1}}")))))
                                    .append("txnNumber", new BsonInt64(txnNumber)),
                            BsonDocument.class);
        }

        int n(int id) {
            return client.getDatabase("shop")
                    .getCollection("items")
                    .find(new org.bson.Document("_id", id))
                    .first()
                    .getInteger("n");
        }

        @Override
        public void close() {
            session.close();
            client.close();
            cluster.close();
        }
    }
}
