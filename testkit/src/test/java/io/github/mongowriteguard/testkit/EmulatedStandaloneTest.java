package io.github.mongowriteguard.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.mongodb.MongoClientException;
import com.mongodb.MongoCommandException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.connection.ClusterType;
import com.mongodb.connection.ServerType;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * The emulated standalone follows a standalone {@code mongod}: the driver discovers a standalone, keeps sessions, and
 * a command with a {@code txnNumber} is refused before it runs with {@code IllegalOperation} (20), "Transaction numbers
 * are only allowed on a replica set member or mongos" (mongodb/mongo
 * {@code src/mongo/db/initialize_operation_session_info.cpp}, {@code initializeOperationSessionInfo}).
 */
class EmulatedStandaloneTest {

    @Test
    void theDriverDiscoversAStandalone_andItsWritesCarryNoTxnNumber() {
        try (EmulatedStandalone server = EmulatedCluster.standalone().start();
                MongoClient client = MongoClients.create(server.connectionString())) {
            MongoCollection<Document> orders = client.getDatabase("shop").getCollection("orders");
            orders.insertOne(new Document("_id", 1));
            orders.updateOne(new Document("_id", 1), new Document("$set", new Document("v", 1)));

            assertThat(client.getClusterDescription().getType()).isEqualTo(ClusterType.STANDALONE);
            assertThat(client.getClusterDescription()
                            .getServerDescriptions()
                            .get(0)
                            .getType())
                    .isEqualTo(ServerType.STANDALONE);
            assertThat(orders.find().first()).isEqualTo(new Document("_id", 1).append("v", 1));
            assertThat(server.truth().commands("insert")).hasSize(1);
            assertThat(server.truth().commands("insert").get(0).hasTxnNumber()).isFalse();
        }
    }

    @Test
    void aTxnNumberIsRefused_beforeTheCommandRuns_asTheServerRefusesIt() {
        try (EmulatedStandalone server = EmulatedCluster.standalone().start();
                MongoClient client = MongoClients.create(server.connectionString());
                ClientSession session = client.startSession()) {
            BsonDocument insert = BsonDocument.parse("{insert: 'orders', documents: [{_id: 1}]}")
                    .append("txnNumber", new BsonInt64(1));

            Throwable thrown =
                    catchThrowable(() -> client.getDatabase("shop").runCommand(session, insert, BsonDocument.class));

            assertThat(thrown).isInstanceOf(MongoCommandException.class);
            MongoCommandException refused = (MongoCommandException) thrown;
            assertThat(refused.getErrorCode()).isEqualTo(20);
            assertThat(refused.getErrorCodeName()).isEqualTo("IllegalOperation");
            assertThat(refused.getErrorMessage())
                    .isEqualTo("Transaction numbers are only allowed on a replica set member or mongos");
            assertThat(client.getDatabase("shop").getCollection("orders").countDocuments())
                    .as("refused before it ran")
                    .isZero();
        }
    }

    /**
     * A transaction's first command carries a {@code txnNumber}: refused, which the driver (driver-core
     * {@code CommandOperationHelper.transformWriteException}) reports as it does on a real standalone.
     */
    @Test
    void aTransactionIsRefused() {
        try (EmulatedStandalone server = EmulatedCluster.standalone().start();
                MongoClient client = MongoClients.create(server.connectionString());
                ClientSession session = client.startSession()) {
            MongoCollection<Document> orders = client.getDatabase("shop").getCollection("orders");
            session.startTransaction();
            Throwable thrown = catchThrowable(() -> orders.insertOne(session, new Document("_id", 1)));

            assertThat(thrown)
                    .isInstanceOf(MongoClientException.class)
                    .hasMessageContaining("This MongoDB deployment does not support retryable writes");
            assertThat(thrown.getCause()).isInstanceOf(MongoCommandException.class);
            assertThat(((MongoCommandException) thrown.getCause()).getErrorCode())
                    .isEqualTo(20);
            assertThat(orders.countDocuments()).isZero();
        }
    }
}
