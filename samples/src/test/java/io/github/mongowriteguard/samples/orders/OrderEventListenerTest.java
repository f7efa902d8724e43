package io.github.mongowriteguard.samples.orders;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.mongowriteguard.test.EmulatedMongo;
import io.github.mongowriteguard.test.EmulatedMongo.ShardedCollection;
import io.github.mongowriteguard.test.EmulatedMongoCluster;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.data.mongodb.core.MongoTemplate;
import tools.jackson.databind.json.JsonMapper;

/**
 * The listener's bulk on the emulated 3-shard cluster, through {@code @EmulatedMongo} alone (no Kafka broker: the
 * listener is called as its container would call it): a poll of 3 events for each of 200 orders is 3 guarded rounds
 * (one per event of an order), each one child batch per shard.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.NONE,
        properties = {"spring.kafka.listener.auto-startup=false", "demo.exit=false"})
@EmulatedMongo(
        shards = 3,
        database = "shop",
        options = "socketTimeoutMS=30000",
        shardedCollections = @ShardedCollection(namespace = "shop.orders"))
class OrderEventListenerTest {
    @Autowired
    OrderEventListener listener;

    @Autowired
    MongoTemplate mongoTemplate;

    @Autowired
    EmulatedMongoCluster mongo;

    @Autowired
    JsonMapper json;

    @Test
    void aPollOfThreeEventsPerOrder_isThreeRounds_ofOneRoundTripPerShard() {
        List<String> poll = new ArrayList<>();
        for (OrderStatus status : List.of(OrderStatus.CREATED, OrderStatus.PAID, OrderStatus.SHIPPED)) {
            for (int i = 0; i < 200; i++) {
                poll.add(json.writeValueAsString(new OrderEvent("o-" + i, "c-" + (i % 7), status, 1000L + i)));
            }
        }
        mongo.resetCounters();

        listener.onEvents(poll);

        assertThat(mongo.rounds()).isEqualTo(3);
        assertThat(mongo.roundTrips()).isEqualTo(9);
        assertThat(mongoTemplate.findAll(Order.class)).hasSize(200).allMatch(o -> o.status() == OrderStatus.SHIPPED);
    }
}
