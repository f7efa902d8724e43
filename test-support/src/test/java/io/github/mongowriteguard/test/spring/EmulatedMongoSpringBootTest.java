package io.github.mongowriteguard.test.spring;

import static org.assertj.core.api.Assertions.assertThat;

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
import org.springframework.data.mongodb.core.MongoTemplate;

/**
 * One annotation: the application connects to the emulated sharded cluster, not to {@code spring.mongodb.uri}. (The
 * guard's Spring Boot tests on it, round trips included, are the spring-adapter module's.)
 */
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

    @Test
    void applicationConnectsToTheEmulatedCluster_notToSpringMongodbUri() {
        assertThat(connectionDetails.getConnectionString()).isEqualTo(mongo.connectionString());
        assertThat(template.getDb().getName()).isEqualTo("shop");
        assertThat(mongo.sharded().shardNames()).hasSize(5);
        assertThat(template.getDb().runCommand(new Document("buildInfo", 1)).getString("version"))
                .startsWith("6.0");
    }
}
