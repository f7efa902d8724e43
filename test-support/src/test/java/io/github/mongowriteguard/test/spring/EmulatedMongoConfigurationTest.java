package io.github.mongowriteguard.test.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.mongowriteguard.test.EmulatedMongoCluster;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.mongodb.core.MongoTemplate;

/** The development-time recipe: {@code SpringApplication.from(main).with(EmulatedMongoConfiguration.class)}. */
class EmulatedMongoConfigurationTest {
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class ShopApplication {
        public static void main(String[] args) {
            SpringApplication.run(ShopApplication.class, args);
        }
    }

    @Test
    void runsTheApplicationsOwnMain_onTheDeploymentItsPropertiesDescribe() {
        try (ConfigurableApplicationContext context = SpringApplication.from(ShopApplication::main)
                .with(EmulatedMongoConfiguration.class)
                .run(
                        "--spring.main.web-application-type=none",
                        "--mongo.emulated.shards=2",
                        "--mongo.emulated.database=shop",
                        "--mongo.emulated.sharded-collections[shop.orders]={_id: \"hashed\"}")
                .getApplicationContext()) {
            EmulatedMongoCluster mongo = context.getBean(EmulatedMongoCluster.class);
            assertThat(mongo.sharded().shardNames()).hasSize(2);
            assertThat(mongo.sharded().chunkMap("shop.orders")).isNotNull();

            context.getBean(MongoTemplate.class).insert(new Document("_id", 1), "orders");

            assertThat(mongo.roundTrips()).isEqualTo(1);
        }
    }
}
