package io.github.mongowriteguard.samples.orders;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A small order service: a Kafka batch listener ({@link OrderEventListener}) that upserts each batch of order events
 * into MongoDB with one ORDERED {@code bulkOps}, as the articles' applications do. The guard comes from its Spring
 * Boot auto-configuration only (the dependency {@code mongo-write-guard-spring-adapter}); the listener code is what it
 * would be without the guard.
 *
 * <p>Against a real cluster and broker: {@code java -jar sample.jar --spring.mongodb.uri=mongodb://mongos1,mongos2/shop
 * --spring.kafka.bootstrap-servers=kafka:9092}. With the {@code demo} profile ({@code --spring.profiles.active=demo})
 * it starts the testkit's emulated sharded cluster and an embedded Kafka broker itself, publishes order events and
 * prints the guard's meters and health ({@code demo} package).
 */
@SpringBootApplication
public class OrdersApplication {

    public static void main(String[] args) {
        SpringApplication.run(OrdersApplication.class, args);
    }
}
