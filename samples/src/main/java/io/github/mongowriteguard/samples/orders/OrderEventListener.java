package io.github.mongowriteguard.samples.orders;

import static org.springframework.data.mongodb.core.query.Criteria.where;
import static org.springframework.data.mongodb.core.query.Query.query;

import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.data.mongodb.core.BulkOperations;
import org.springframework.data.mongodb.core.BulkOperations.BulkMode;
import org.springframework.data.mongodb.core.FindAndReplaceOptions;
import org.springframework.data.mongodb.core.MongoTemplate;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.stereotype.Component;
import tools.jackson.databind.json.JsonMapper;

/**
 * Saves each poll of order events as one ORDERED bulk of upserting {@code replaceOne}s by {@code _id}, the pattern of
 * the articles (an upsert by a fixed {@code _id} is idempotent, so a redelivered batch writes nothing twice).
 *
 * <p>Nothing here knows about the guard: the {@code MongoTemplate} Boot injects is the guard's
 * {@code GuardedMongoTemplate}, so this bulk runs as a few unordered rounds (one per occurrence of a repeated order
 * id, each order's events kept in order) instead of one mongos-to-shard round trip per change of shard, with a
 * server deadline and retries that never run a second copy.
 */
@Component
public class OrderEventListener {
    private static final Logger LOG = LoggerFactory.getLogger(OrderEventListener.class);

    private final MongoTemplate mongoTemplate;
    private final JsonMapper json;

    public OrderEventListener(MongoTemplate mongoTemplate, JsonMapper json) {
        this.mongoTemplate = mongoTemplate;
        this.json = json;
    }

    @KafkaListener(id = "orders", topics = "${orders.topic}", batch = "true")
    public void onEvents(List<String> values) {
        BulkOperations bulk = mongoTemplate.bulkOps(BulkMode.ORDERED, Order.class);
        for (String value : values) {
            Order order = json.readValue(value, OrderEvent.class).toOrder();
            bulk.replaceOne(
                    query(where("_id").is(order.id())),
                    order,
                    FindAndReplaceOptions.options().upsert());
        }
        var result = bulk.execute();
        LOG.info(
                "{} order events: {} orders created, {} updated",
                values.size(),
                result.getUpserts().size(),
                result.getModifiedCount());
    }
}
