package io.github.mongowriteguard.spring.boot.slice;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.mongowriteguard.spring.data.GuardedMongoTemplate;
import io.github.mongowriteguard.test.EmulatedMongo;
import io.github.mongowriteguard.test.EmulatedMongo.ShardedCollection;
import io.github.mongowriteguard.test.EmulatedMongoCluster;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurationPackage;
import org.springframework.boot.data.mongodb.test.autoconfigure.DataMongoTest;
import org.springframework.data.annotation.Id;
import org.springframework.data.mongodb.core.MongoTemplate;
import org.springframework.data.mongodb.core.mapping.Document;
import org.springframework.data.mongodb.repository.MongoRepository;
import org.springframework.data.mongodb.repository.config.EnableMongoRepositories;

/**
 * Spring Boot's MongoDB slice, {@code @DataMongoTest}, on the emulated sharded cluster: its auto-configuration imports
 * include the guard's (this module's {@code META-INF/spring/...AutoConfigureDataMongo.imports}), so the slice's
 * template and repositories write through the guard as the application's do. {@code saveAll} of 1,000 new entities on
 * 5 shards is one insert per shard (Spring's plain template: one round trip per change of shard, about 800).
 */
@DataMongoTest
@EmulatedMongo(
        shards = 5,
        database = "shop",
        shardedCollections = @ShardedCollection(namespace = "shop.orders", key = "{_id: \"hashed\"}"))
class DataMongoSliceTest {
    @SpringBootConfiguration
    @AutoConfigurationPackage // as @SpringBootApplication's: where the slice looks for @Document entities
    @EnableMongoRepositories(considerNestedRepositories = true, basePackageClasses = DataMongoSliceTest.class)
    static class Application {}

    @Document("orders")
    static class Order {
        @Id
        String id;

        String customer;
        int quantity;

        Order(String customer, int quantity) {
            this.customer = customer;
            this.quantity = quantity;
        }
    }

    interface OrderRepository extends MongoRepository<Order, String> {}

    @Autowired
    OrderRepository orders;

    @Autowired
    MongoTemplate template;

    @Autowired
    EmulatedMongoCluster mongo;

    @BeforeEach
    void reset() {
        orders.deleteAll();
        mongo.resetCounters();
    }

    @Test
    void theSlicesTemplate_isTheGuardedOne() {
        assertThat(template).isInstanceOf(GuardedMongoTemplate.class);
    }

    @Test
    void saveAllOf1000NewEntities_isOneRoundTripPerShard() {
        List<Order> saved = orders.saveAll(IntStream.range(0, 1000)
                .mapToObj(i -> new Order("customer-" + i, i))
                .toList());

        assertThat(mongo.roundTrips()).isEqualTo(5);
        assertThat(saved).allSatisfy(order -> assertThat(order.id).isNotNull());
        assertThat(orders.count()).isEqualTo(1000);
    }
}
