package io.github.mongowriteguard.spring.boot;

import static io.github.mongowriteguard.spring.boot.InventoryUpserts.upsert1000;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.spring.data.GuardedMongoTemplate;
import io.github.mongowriteguard.spring.data.GuardedReactiveMongoTemplate;
import io.github.mongowriteguard.test.EmulatedMongo;
import io.github.mongowriteguard.test.EmulatedMongo.ShardedCollection;
import io.github.mongowriteguard.test.EmulatedMongoCluster;
import org.bson.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.data.mongodb.core.BulkOperations.BulkMode;
import org.springframework.data.mongodb.core.FindAndReplaceOptions;
import org.springframework.data.mongodb.core.MongoTemplate;
import org.springframework.data.mongodb.core.ReactiveBulkOperations;
import org.springframework.data.mongodb.core.ReactiveMongoTemplate;
import org.springframework.data.mongodb.core.query.Criteria;
import org.springframework.data.mongodb.core.query.Query;

/**
 * An application with both MongoDB starters ({@code spring-boot-starter-data-mongodb} and
 * {@code spring-boot-starter-data-mongodb-reactive}, both on this module's test class path): Spring Boot builds a
 * synchronous and a reactive client from the same customizers, so the guard configures both builders. The application
 * starts, and its {@code MongoTemplate} writes through the guard (the template finds its own client behind its
 * database factory); so does its {@code ReactiveMongoTemplate} (on the reactive client).
 */
@SpringBootTest
@EmulatedMongo(
        shards = 5,
        database = "shop",
        shardedCollections = @ShardedCollection(namespace = "shop.inventory", key = "{_id: \"hashed\"}"))
class BothStartersBootTest {
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class Application {}

    @Autowired
    MongoTemplate template;

    @Autowired
    ReactiveMongoTemplate reactiveTemplate;

    @Autowired
    com.mongodb.reactivestreams.client.MongoClient reactiveClient;

    @Autowired
    WriteGuard guard;

    @Autowired
    EmulatedMongoCluster mongo;

    @BeforeEach
    void reset() {
        template.getCollection("inventory").deleteMany(new Document());
        mongo.resetCounters();
    }

    @Test
    void bothClientsAreBuilt_andTheGuardConfiguredBoth() {
        assertThat(reactiveClient).isNotNull();
        assertThat(guard.getClientDeadlines()).hasSize(2);
    }

    @Test
    void templatesOrderedBulk_isGuarded_oneRoundTripPerShard() {
        assertThat(template).isInstanceOf(GuardedMongoTemplate.class);

        upsert1000(template.bulkOps(BulkMode.ORDERED, "inventory"), "qty");
        long guarded = mongo.roundTrips();
        mongo.resetCounters();
        try (MongoClient client = MongoClients.create(mongo.connectionString())) {
            upsert1000(new MongoTemplate(client, "shop").bulkOps(BulkMode.ORDERED, "inventory"), "qty");
        }
        long plain = mongo.roundTrips();

        assertThat(guarded).isEqualTo(5);
        assertThat(plain).isGreaterThan(700); // about 1 + 999 x (1 - 1/5)
        assertThat(template.getCollection("inventory").countDocuments()).isEqualTo(1000);
    }

    @Test
    void templatesSingleWrite_carriesTheGuardsDeadline() {
        template.insert(new Document("_id", "one"), "inventory");

        // no socket timeout on @EmulatedMongo: the default server deadline, 10 s
        assertThat(mongo.sharded().mongosTruth().commands("insert"))
                .isNotEmpty()
                .allSatisfy(command -> assertThat(command.maxTimeMs()).isEqualTo(10_000L));
    }

    @Test
    void reactiveTemplate_isGuardedToo_itsOrderedBulkIsOneRoundTripPerShard() {
        assertThat(reactiveTemplate).isInstanceOf(GuardedReactiveMongoTemplate.class);
        reactiveTemplate.insert(new Document("_id", "reactive"), "inventory").block();
        assertThat(mongo.sharded().mongosTruth().commands("insert"))
                .isNotEmpty()
                .allSatisfy(command -> assertThat(command.maxTimeMs()).isEqualTo(10_000L));
        reactiveTemplate.remove(new Query(), "inventory").block();
        mongo.resetCounters();

        ReactiveBulkOperations bulk = reactiveTemplate.bulkOps(BulkMode.ORDERED, "inventory");
        for (int i = 0; i < 1000; i++) {
            bulk.replaceOne(
                    Query.query(Criteria.where("_id").is(i)),
                    new Document("qty", i),
                    FindAndReplaceOptions.options().upsert());
        }
        bulk.execute().block();

        assertThat(mongo.roundTrips()).isEqualTo(5);
        assertThat(template.getCollection("inventory").countDocuments()).isEqualTo(1000);
    }
}
