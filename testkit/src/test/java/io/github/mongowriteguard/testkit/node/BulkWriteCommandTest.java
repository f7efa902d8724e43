package io.github.mongowriteguard.testkit.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.ClientBulkWriteException;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoNamespace;
import com.mongodb.client.MongoClient;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.bulk.ClientBulkWriteOptions;
import com.mongodb.client.model.bulk.ClientBulkWriteResult;
import com.mongodb.client.model.bulk.ClientNamespacedWriteModel;
import com.mongodb.client.model.bulk.ClientUpdateOneOptions;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** Server 8.0's {@code bulkWrite} command through the driver's {@code MongoClient.bulkWrite}, on a replica set and mongos. */
class BulkWriteCommandTest {
    private static final MongoNamespace ORDERS = new MongoNamespace("shop.orders");
    private static final MongoNamespace STOCK = new MongoNamespace("shop.stock");

    private static List<ClientNamespacedWriteModel> models() {
        return List.of(
                ClientNamespacedWriteModel.insertOne(ORDERS, new Document("_id", 1).append("qty", 1)),
                ClientNamespacedWriteModel.insertOne(STOCK, new Document("_id", "a").append("left", 5)),
                ClientNamespacedWriteModel.insertOne(ORDERS, new Document("_id", 1).append("qty", 2)), // duplicate key
                ClientNamespacedWriteModel.updateOne(STOCK, Filters.eq("_id", "a"), Updates.inc("left", -1)),
                ClientNamespacedWriteModel.updateOne(
                        STOCK,
                        Filters.eq("_id", "b"),
                        Updates.set("left", 9),
                        ClientUpdateOneOptions.clientUpdateOneOptions().upsert(true)),
                ClientNamespacedWriteModel.deleteOne(ORDERS, Filters.eq("_id", 1)));
    }

    @Test
    void unorderedVerbose_onTheReplicaSet_everyOpAndItsError() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet()
                        .serverVersion(ServerVersion.V8_0)
                        .start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            assertUnordered(client);
        }
    }

    @Test
    void unorderedVerbose_throughMongos_onAHashedCollection() {
        try (EmulatedShardedCluster cluster = EmulatedCluster.sharded()
                        .shards(3)
                        .serverVersion(ServerVersion.V8_0)
                        .start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            cluster.shardCollection(
                    ORDERS.getFullName(), ShardKey.of(new BsonDocument("_id", new org.bson.BsonString("hashed"))));
            assertUnordered(client);
        }
    }

    private static void assertUnordered(MongoClient client) {
        assertThatThrownBy(() -> client.bulkWrite(
                        models(),
                        ClientBulkWriteOptions.clientBulkWriteOptions()
                                .ordered(false)
                                .verboseResults(true)))
                .isInstanceOfSatisfying(ClientBulkWriteException.class, e -> {
                    assertThat(e.getWriteErrors()).containsOnlyKeys(2);
                    assertThat(e.getWriteErrors().get(2).getCode()).isEqualTo(11000);
                    ClientBulkWriteResult result = e.getPartialResult().orElseThrow();
                    assertThat(result.getInsertedCount()).isEqualTo(2);
                    assertThat(result.getMatchedCount()).isEqualTo(1);
                    assertThat(result.getModifiedCount()).isEqualTo(1);
                    assertThat(result.getUpsertedCount()).isEqualTo(1);
                    assertThat(result.getDeletedCount()).isEqualTo(1);
                    ClientBulkWriteResult.VerboseResults verbose =
                            result.getVerboseResults().orElseThrow();
                    assertThat(verbose.getInsertResults()).containsOnlyKeys(0, 1);
                    assertThat(verbose.getUpdateResults().get(4).getUpsertedId())
                            .contains(new org.bson.BsonString("b"));
                    assertThat(verbose.getDeleteResults().get(5).getDeletedCount())
                            .isEqualTo(1);
                });
        assertThat(client.getDatabase("shop").getCollection("orders").countDocuments())
                .isZero();
        assertThat(client.getDatabase("shop")
                        .getCollection("stock")
                        .find()
                        .sort(new Document("_id", 1))
                        .into(new java.util.ArrayList<>()))
                .containsExactly(
                        new Document("_id", "a").append("left", 4), new Document("_id", "b").append("left", 9));
    }

    @Test
    void ordered_stopsAtTheFirstFailedOp() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet()
                        .serverVersion(ServerVersion.V8_0)
                        .start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            assertThatThrownBy(() -> client.bulkWrite(
                            models(),
                            ClientBulkWriteOptions.clientBulkWriteOptions().ordered(true)))
                    .isInstanceOfSatisfying(ClientBulkWriteException.class, e -> {
                        assertThat(e.getWriteErrors()).containsOnlyKeys(2);
                        assertThat(e.getPartialResult().orElseThrow().getInsertedCount())
                                .isEqualTo(2);
                    });
            assertThat(client.getDatabase("shop").getCollection("stock").find().into(new java.util.ArrayList<>()))
                    .containsExactly(new Document("_id", "a").append("left", 5));
        }
    }

    @Test
    void success_withoutVerboseResults_countsOnly() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet()
                        .serverVersion(ServerVersion.V8_0)
                        .start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            ClientBulkWriteResult result = client.bulkWrite(List.of(
                    ClientNamespacedWriteModel.insertOne(ORDERS, new Document("_id", 1)),
                    ClientNamespacedWriteModel.updateMany(ORDERS, Filters.exists("_id"), Updates.set("x", 1)),
                    ClientNamespacedWriteModel.deleteMany(STOCK, Filters.exists("_id"))));
            assertThat(result.getInsertedCount()).isEqualTo(1);
            assertThat(result.getModifiedCount()).isEqualTo(1);
            assertThat(result.getVerboseResults()).isEmpty();
        }
    }

    @Test
    void below8_0_theCommandDoesNotExist() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet()
                        .serverVersion(ServerVersion.V7_0)
                        .start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            assertThatThrownBy(() -> client.getDatabase("admin")
                            .runCommand(new BsonDocument("bulkWrite", new BsonInt32(1))
                                    .append("ops", new org.bson.BsonArray())
                                    .append("nsInfo", new org.bson.BsonArray())))
                    .isInstanceOfSatisfying(MongoCommandException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(59);
                        assertThat(e.getErrorCodeName()).isEqualTo("CommandNotFound");
                    });
        }
    }
}
