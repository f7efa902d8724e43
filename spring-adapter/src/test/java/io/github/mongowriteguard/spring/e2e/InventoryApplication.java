package io.github.mongowriteguard.spring.e2e;

import static org.springframework.data.mongodb.core.query.Criteria.where;
import static org.springframework.data.mongodb.core.query.Query.query;

import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.spring.kafka.GuardedErrorHandlers;
import io.github.mongowriteguard.spring.kafka.GuardedErrorHandlers.ListenerType;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;
import org.springframework.data.mongodb.core.BulkOperations;
import org.springframework.data.mongodb.core.BulkOperations.BulkMode;
import org.springframework.data.mongodb.core.FindAndReplaceOptions;
import org.springframework.data.mongodb.core.MongoTemplate;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.event.ConsumerStoppedEvent;
import org.springframework.kafka.listener.CommonErrorHandler;
import org.springframework.kafka.listener.ConsumerAwareRebalanceListener;
import org.springframework.kafka.listener.DeadLetterPublishingRecoverer;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.util.backoff.FixedBackOff;

/**
 * The seed's application, as small as it gets: a batch listener saves StoreInventory records with an ORDERED
 * {@code bulkOps} and one upserting {@code replaceOne} per record. The listener code is the same with and without
 * the guard; only the auto-configuration ({@code mongo.write-guard.enabled}) and the error handler bean differ.
 */
@Configuration(proxyBeanMethods = false)
@EnableAutoConfiguration
public class InventoryApplication {
    /** The longest one dead-letter send takes on the embedded broker (measured about 2.5 ms), for the retry budget. */
    static final Duration DEAD_LETTER_SEND = Duration.ofMillis(5);

    /** Batch sizes the listener saw, and the time each listener call took. */
    final List<Integer> batchSizes = new CopyOnWriteArrayList<>();

    final List<Duration> listenerTimes = new CopyOnWriteArrayList<>();
    final AtomicInteger partitionsRevoked = new AtomicInteger();
    final AtomicInteger partitionsLost = new AtomicInteger();
    final AtomicInteger consumersStopped = new AtomicInteger();
    final Map<String, Boolean> running = new ConcurrentHashMap<>();

    private final MongoTemplate mongoTemplate;

    public InventoryApplication(MongoTemplate mongoTemplate) {
        this.mongoTemplate = mongoTemplate;
    }

    // ---- the user's code, unchanged between the runs ----

    @KafkaListener(id = "inventory", idIsGroup = false, topics = "${app.topic}", batch = "true", autoStartup = "false")
    public void onBatch(List<String> values) {
        long started = System.nanoTime();
        batchSizes.add(values.size());
        try {
            BulkOperations bulk = mongoTemplate.bulkOps(BulkMode.ORDERED, StoreInventory.class);
            for (String value : values) {
                StoreInventory item = StoreInventory.parse(value);
                bulk.replaceOne(
                        query(where("_id").is(item.id())),
                        item,
                        FindAndReplaceOptions.options().upsert());
            }
            bulk.execute();
        } finally {
            listenerTimes.add(Duration.ofNanos(System.nanoTime() - started));
        }
    }

    // ---- the wiring ----

    /**
     * Guarded: the guard's error handler (its policy's attempts, its exceptions not retried, per-record dead letters,
     * the retry budget checked at startup). Plain: the seed's application retry, {@code FixedBackOff(0, 3)}.
     */
    @Bean
    CommonErrorHandler errorHandler(
            KafkaTemplate<Object, Object> kafka,
            ObjectProvider<WriteGuard> guard,
            ConsumerFactory<?, ?> consumers,
            @Value("${app.socket-timeout-ms}") long socketTimeoutMs) {
        DeadLetterPublishingRecoverer deadLetters =
                new DeadLetterPublishingRecoverer(kafka, (record, e) -> new TopicPartition(record.topic() + ".DLT", 0));
        WriteGuard writeGuard = guard.getIfAvailable();
        if (writeGuard == null) {
            return new DefaultErrorHandler(deadLetters, new FixedBackOff(0L, 3L));
        }
        return GuardedErrorHandlers.builder(writeGuard.getSettings().getRetryPolicy())
                .recoverer(deadLetters)
                .retryBudget(
                        consumers.getConfigurationProperties(),
                        Duration.ofMillis(socketTimeoutMs),
                        DEAD_LETTER_SEND,
                        ListenerType.BATCH)
                .recoverBatchByBulkIndex(true)
                .build();
    }

    @Bean
    ConsumerAwareRebalanceListener rebalanceListener() {
        return new ConsumerAwareRebalanceListener() {
            @Override
            public void onPartitionsRevokedBeforeCommit(
                    Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
                if (!partitions.isEmpty() && running.getOrDefault("inventory", false)) {
                    partitionsRevoked.incrementAndGet();
                }
            }

            @Override
            public void onPartitionsLost(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
                partitionsLost.incrementAndGet();
            }
        };
    }

    @EventListener
    void consumerStopped(ConsumerStoppedEvent event) {
        if (running.getOrDefault("inventory", false)) {
            consumersStopped.incrementAndGet();
        }
    }
}
