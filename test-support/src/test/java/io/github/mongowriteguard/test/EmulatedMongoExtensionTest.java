package io.github.mongowriteguard.test;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.test.EmulatedMongo.ShardedCollection;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The JUnit 5 extension without Spring: one deployment per class, injected by type. */
@ExtendWith(EmulatedMongoExtension.class)
@EmulatedMongo(
        shards = 3,
        database = "shop",
        shardedCollections = @ShardedCollection(namespace = "shop.orders"),
        options = "socketTimeoutMS=3000")
class EmulatedMongoExtensionTest {
    private final EmulatedMongoCluster injectedIntoTheConstructor;

    EmulatedMongoExtensionTest(EmulatedMongoCluster mongo) {
        this.injectedIntoTheConstructor = mongo;
    }

    @BeforeEach
    void reset(EmulatedMongoCluster mongo) {
        mongo.resetCounters();
    }

    @Test
    void injectsOneDeployment_byEveryType(
            EmulatedMongoCluster mongo, ConnectionString connection, EmulatedShardedCluster sharded) {
        assertThat(injectedIntoTheConstructor).isSameAs(mongo);
        assertThat(mongo.sharded()).isSameAs(sharded);
        assertThat(sharded.shardNames()).hasSize(3);
        assertThat(connection).isEqualTo(mongo.connectionString());
        assertThat(connection.getDatabase()).isEqualTo("shop");
        assertThat(connection.getSocketTimeout()).isEqualTo(3000);
        assertThat(sharded.chunkMap("shop.orders")).isNotNull();
    }

    @Test
    void guardedOrderedBulk_costsOneRoundTripPerShard(EmulatedMongoCluster mongo) {
        WriteGuard guard = WriteGuard.create();
        try (MongoClient client = MongoClients.create(
                guard.configure(MongoClientSettings.builder().applyConnectionString(mongo.connectionString()))
                        .build())) {
            GuardedCollection<Document> orders =
                    guard.guardCollection(client, client.getDatabase("shop").getCollection("orders"));
            List<WriteModel<Document>> inserts = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                inserts.add(new InsertOneModel<>(new Document("_id", i)));
            }

            orders.bulkWrite(inserts, new BulkWriteOptions().ordered(true));

            assertThat(mongo.rounds()).isEqualTo(1);
            assertThat(mongo.roundTrips()).isEqualTo(3);
            assertThat(mongo.truth().commands("insert")).hasSize(3); // one child batch per shard
        }
    }

    @Test
    void countersStartAtZero_afterReset(EmulatedMongoCluster mongo) {
        assertThat(mongo.roundTrips()).isZero();
        assertThat(mongo.truth().commands("insert")).isEmpty();
    }
}
