package io.github.mongowriteguard.testkit.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.ClientBulkWriteException;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoNamespace;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.model.bulk.ClientBulkWriteOptions;
import com.mongodb.client.model.bulk.ClientNamespacedWriteModel;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * Server 8.0's {@code bulkWrite} inside a multi-document transaction: a failed op is an error item of an {@code ok: 1}
 * reply, the command stops there whether ordered or not, and the transaction is aborted, as mongodb/mongo
 * {@code src/mongo/db/commands/query_cmd/bulk_write.cpp} does ({@code addErrorReply}, then
 * {@code write_ops_exec::handleError} in {@code src/mongo/db/ops/write_ops_exec.cpp}: "If we are in a transaction, we
 * must fail the whole batch", {@code abortTransaction}). The driver raises {@code ClientBulkWriteException} with the
 * op's write error, not the command's error.
 */
class BulkWriteInTransactionTest {
    private static final MongoNamespace ORDERS = new MongoNamespace("shop.orders");
    private static final MongoNamespace STOCK = new MongoNamespace("shop.stock");

    private static List<ClientNamespacedWriteModel> models() {
        return List.of(
                ClientNamespacedWriteModel.insertOne(ORDERS, new Document("_id", 1).append("qty", 1)),
                ClientNamespacedWriteModel.insertOne(ORDERS, new Document("_id", 1).append("qty", 2)), // duplicate
                ClientNamespacedWriteModel.insertOne(STOCK, new Document("_id", "a").append("left", 5)));
    }

    @Test
    void writeError_onTheReplicaSet_isTheOpsErrorAndAbortsTheTransaction() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet()
                        .serverVersion(ServerVersion.V8_0)
                        .start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            assertWriteErrorAborts(client);
        }
    }

    @Test
    void writeError_throughMongos_isTheOpsErrorAndAbortsTheTransaction() {
        try (EmulatedShardedCluster cluster = EmulatedCluster.sharded()
                        .shards(2)
                        .serverVersion(ServerVersion.V8_0)
                        .start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            cluster.shardCollection(
                    ORDERS.getFullName(), ShardKey.of(new BsonDocument("_id", new BsonString("hashed"))));
            assertWriteErrorAborts(client);
        }
    }

    private static void assertWriteErrorAborts(MongoClient client) {
        // The collections exist before the transaction starts (shardCollection created the sharded one).
        if (client.getDatabase("shop")
                .listCollectionNames()
                .into(new ArrayList<>())
                .isEmpty()) {
            client.getDatabase("shop").createCollection("orders");
        }
        client.getDatabase("shop").createCollection("stock");
        try (ClientSession session = client.startSession()) {
            session.startTransaction();
            // UNORDERED: outside a transaction the third op would still run; inside one the batch stops at the error.
            assertThatThrownBy(() -> client.bulkWrite(
                            session,
                            models(),
                            ClientBulkWriteOptions.clientBulkWriteOptions().ordered(false)))
                    .isInstanceOfSatisfying(ClientBulkWriteException.class, e -> {
                        assertThat(e.getCause()).isNull();
                        assertThat(e.getWriteErrors()).containsOnlyKeys(1);
                        assertThat(e.getWriteErrors().get(1).getCode()).isEqualTo(11000);
                        assertThat(e.getPartialResult().orElseThrow().getInsertedCount())
                                .isEqualTo(1);
                    });
            // The server aborted the transaction: its commit finds none.
            assertThatThrownBy(session::commitTransaction)
                    .isInstanceOfSatisfying(
                            MongoCommandException.class,
                            e -> assertThat(e.getErrorCode()).isEqualTo(251));
        }
        assertThat(client.getDatabase("shop").getCollection("orders").find().into(new ArrayList<>()))
                .isEmpty();
        assertThat(client.getDatabase("shop").getCollection("stock").find().into(new ArrayList<>()))
                .isEmpty();
    }
}
