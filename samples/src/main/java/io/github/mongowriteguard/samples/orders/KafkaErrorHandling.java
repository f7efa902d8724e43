package io.github.mongowriteguard.samples.orders;

import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.spring.kafka.GuardedErrorHandlers;
import io.github.mongowriteguard.spring.kafka.GuardedErrorHandlers.ListenerType;
import java.time.Duration;
import org.apache.kafka.common.TopicPartition;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.DeadLetterPublishingRecoverer;
import org.springframework.kafka.listener.DefaultErrorHandler;

/**
 * The listener's error handler (README, "Spring Kafka"): the guard's retry policy instead of
 * {@code FixedBackOff(0, 9)}, no retry of the guard's final answers, UNKNOWN writes settled (the same server copies
 * sent again), and only the events whose write failed for good or cannot be settled dead-lettered (to
 * {@code <topic>.DLT}). It refuses to start when one poll's worst case does not fit
 * {@code max.poll.interval.ms}.
 */
@Configuration(proxyBeanMethods = false)
class KafkaErrorHandling {

    @Bean
    DefaultErrorHandler errorHandler(
            KafkaTemplate<Object, Object> kafka,
            ConsumerFactory<?, ?> consumers,
            WriteGuard guard,
            @Value("${orders.socket-timeout}") Duration socketTimeout,
            @Value("${orders.dead-letter-send}") Duration deadLetterSend) {
        DeadLetterPublishingRecoverer deadLetters = new DeadLetterPublishingRecoverer(
                kafka, (record, e) -> new TopicPartition(record.topic() + ".DLT", record.partition()));
        return GuardedErrorHandlers.builder(guard.getSettings().getRetryPolicy())
                .recoverer(deadLetters)
                .retryBudget(consumers.getConfigurationProperties(), socketTimeout, deadLetterSend, ListenerType.BATCH)
                .recoverBatchByBulkIndex(true)
                // UNKNOWN writes settled first: what applied is committed, what waited behind it delivered again
                .settleWith(guard)
                .build();
    }
}
