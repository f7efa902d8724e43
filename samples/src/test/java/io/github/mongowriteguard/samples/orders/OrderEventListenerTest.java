package io.github.mongowriteguard.samples.orders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchException;
import static org.springframework.data.mongodb.core.query.Criteria.where;
import static org.springframework.data.mongodb.core.query.Query.query;

import io.github.mongowriteguard.test.EmulatedMongo;
import io.github.mongowriteguard.test.EmulatedMongo.ShardedCollection;
import io.github.mongowriteguard.test.EmulatedMongoCluster;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.data.mongodb.core.MongoTemplate;
import org.springframework.kafka.listener.DefaultErrorHandler;
import tools.jackson.databind.json.JsonMapper;

/**
 * The listener's bulk on the emulated 3-shard cluster, through {@code @EmulatedMongo} alone (no Kafka broker: the
 * listener is called as its container would call it): a poll of 3 events for each of 200 orders is 3 guarded rounds
 * (one per event of an order), each one child batch per shard; and the sample's error handler after write-concern
 * errors.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.NONE,
        properties = {
            "spring.kafka.listener.auto-startup=false",
            "demo.exit=false",
            "spring.kafka.bootstrap-servers=localhost:1",
            "spring.kafka.producer.properties.max.block.ms=1000"
        })
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

    @Autowired
    DefaultErrorHandler errorHandler;

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

    /**
     * The sample's own error handler ({@link KafkaErrorHandling}) after a poll whose bulk met write-concern errors, as
     * its listener container would call it: it settles the UNKNOWN writes first (the same server copies, which had
     * applied), so nothing is dead-lettered, and hands back only the events held back behind them, to be delivered
     * again. Without {@code settleWith(guard)} it would dead-letter the CREATED events whose writes applied (the
     * dead-letter topic's producer has no broker here and gives up after a second).
     */
    @Test
    void aPollWhoseWritesMetWriteConcernErrors_isSettled_nothingDeadLettered_theHeldBackEventsDeliveredAgain() {
        List<ConsumerRecord<String, String>> poll = new ArrayList<>();
        for (OrderStatus status : List.of(OrderStatus.CREATED, OrderStatus.PAID)) {
            for (int i = 0; i < 6; i++) {
                String value = json.writeValueAsString(new OrderEvent("w-" + i, "c-1", status, 100L + i));
                poll.add(new ConsumerRecord<>("orders", 0, poll.size(), "w-" + i, value));
            }
        }
        // Every shard answers its next update with a write-concern error: applied on the primary, not confirmed.
        for (String shard : mongo.sharded().shardNames()) {
            mongo.sharded()
                    .shard(shard)
                    .failCommand()
                    .configure(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1}, data:"
                            + " {failCommands: ['update'], failInternalCommands: true, writeConcernError: {code: 64,"
                            + " codeName: 'WriteConcernFailed', errmsg: 'waiting for replication timed out'}}}"));
        }

        Exception thrown = catchException(
                () -> listener.onEvents(poll.stream().map(ConsumerRecord::value).toList()));
        for (String shard : mongo.sharded().shardNames()) { // a shard that held none of these orders
            mongo.sharded()
                    .shard(shard)
                    .failCommand()
                    .configure(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: 'off'}"));
        }
        ConsumerRecords<String, String> again = errorHandler.handleBatchAndReturnRemaining(
                thrown,
                new ConsumerRecords<>(Map.of(new TopicPartition("orders", 0), poll), Map.of()),
                null,
                null,
                () -> {});

        assertThat(thrown).isNotNull();
        // handed back: the PAID events of the orders whose CREATED write met the error (held back, never sent)
        List<String> handedBack = new ArrayList<>();
        again.forEach(record -> handedBack.add(record.value()));
        assertThat(handedBack).isNotEmpty().allMatch(value -> value.contains("PAID"));
        assertThat(ordersW()).hasSize(6);
        // the events handed back, delivered again, bring every order to PAID
        listener.onEvents(handedBack);
        assertThat(ordersW()).hasSize(6).allMatch(o -> o.status() == OrderStatus.PAID);
        mongoTemplate.remove(query(where("_id").regex("^w-")), Order.class);
    }

    private List<Order> ordersW() {
        return mongoTemplate.find(query(where("_id").regex("^w-")), Order.class);
    }
}
