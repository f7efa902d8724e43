package io.github.mongowriteguard.test.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.data.mongodb.core.query.Criteria.where;
import static org.springframework.data.mongodb.core.query.Query.query;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.github.mongowriteguard.spring.data.GuardedMongoTemplate;
import io.github.mongowriteguard.test.EmulatedMongo;
import io.github.mongowriteguard.test.EmulatedMongo.ShardedCollection;
import io.github.mongowriteguard.test.EmulatedMongoCluster;
import org.bson.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.mongodb.autoconfigure.MongoConnectionDetails;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.data.mongodb.core.BulkOperations;
import org.springframework.data.mongodb.core.BulkOperations.BulkMode;
import org.springframework.data.mongodb.core.FindAndReplaceOptions;
import org.springframework.data.mongodb.core.MongoTemplate;

/** One annotation: the application connects to the emulated sharded cluster and the test reads its round trips. */
@SpringBootTest(properties = "spring.mongodb.uri=mongodb://nowhere.invalid:1/ignored")
@EmulatedMongo(
        shards = 5,
        database = "shop",
        serverVersion = "6.0",
        shardedCollections = @ShardedCollection(namespace = "shop.inventory", key = "{_id: \"hashed\"}"))
class EmulatedMongoSpringBootTest {
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class Application {}

    @Autowired
    MongoTemplate template;

    @Autowired
    EmulatedMongoCluster mongo;

    @Autowired
    MongoConnectionDetails connectionDetails;

    @BeforeEach
    void reset() {
        template.getCollection("inventory").deleteMany(new Document());
        mongo.resetCounters();
    }

    private static void upsert1000(BulkOperations bulk) {
        for (int i = 0; i < 1000; i++) {
            bulk.replaceOne(
                    query(where("_id").is(i)),
                    new Document("qty", i),
                    FindAndReplaceOptions.options().upsert());
        }
        bulk.execute();
    }

    @Test
    void applicationConnectsToTheEmulatedCluster_notToSpringMongodbUri() {
        assertThat(connectionDetails.getConnectionString()).isEqualTo(mongo.connectionString());
        assertThat(template.getDb().getName()).isEqualTo("shop");
        assertThat(mongo.sharded().shardNames()).hasSize(5);
        assertThat(template.getDb().runCommand(new Document("buildInfo", 1)).getString("version"))
                .startsWith("6.0");
    }

    @Test
    void guardedOrderedBulk_isOneRoundTripPerShard_whereSpringsPlainTemplatePaysOnePerShardChange() {
        assertThat(template).isInstanceOf(GuardedMongoTemplate.class);

        upsert1000(template.bulkOps(BulkMode.ORDERED, "inventory"));
        long guarded = mongo.roundTrips();
        mongo.resetCounters();
        try (MongoClient client = MongoClients.create(mongo.connectionString())) {
            upsert1000(new MongoTemplate(client, "shop").bulkOps(BulkMode.ORDERED, "inventory"));
        }
        long plain = mongo.roundTrips();

        assertThat(guarded).isEqualTo(5);
        assertThat(plain).isGreaterThan(700); // about 1 + 999 x (1 - 1/5)
        assertThat(template.getCollection("inventory").countDocuments()).isEqualTo(1000);
    }
}
