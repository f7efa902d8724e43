package io.github.mongowriteguard.samples.orders;

import io.github.mongowriteguard.test.spring.EmulatedMongoConfiguration;
import org.springframework.boot.SpringApplication;

/**
 * The application as written, on the emulated sharded cluster, for development. After {@code mvn install -DskipTests}
 * (the sample's sibling modules),
 * {@code mvn -pl samples spring-boot:test-run -Dspring-boot.run.main-class=io.github.mongowriteguard.samples.orders.TestOrdersApplication},
 * or run this class from the IDE. The cluster comes from the {@code mongo.emulated.*} properties of
 * {@code application-emulated.properties}; Kafka still comes from {@code spring.kafka.bootstrap-servers} (add
 * {@code --spring.kafka.listener.auto-startup=false} without a broker, or run the {@code demo} profile, which embeds
 * one).
 */
public final class TestOrdersApplication {
    private TestOrdersApplication() {}

    public static void main(String[] args) {
        SpringApplication.from(OrdersApplication::main)
                .with(EmulatedMongoConfiguration.class)
                .withAdditionalProfiles("emulated")
                .run(args);
    }
}
