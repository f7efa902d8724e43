package io.github.mongowriteguard.samples.orders;

import io.github.mongowriteguard.test.spring.EmulatedMongoConfiguration;
import org.springframework.boot.SpringApplication;

/**
 * The application as written, on the emulated sharded cluster, for development: {@code mvn -pl samples
 * spring-boot:test-run} (or run this class from the IDE). The cluster comes from the {@code mongo.emulated.*}
 * properties below; Kafka still comes from {@code spring.kafka.bootstrap-servers} (or run the {@code demo} profile,
 * which embeds a broker too).
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
