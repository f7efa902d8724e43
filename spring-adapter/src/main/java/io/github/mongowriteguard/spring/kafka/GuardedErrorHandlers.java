package io.github.mongowriteguard.spring.kafka;

import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.exception.CopyStillRunningException;
import io.github.mongowriteguard.exception.GuardedBulkWriteException;
import io.github.mongowriteguard.exception.GuardedWriteConcernException;
import io.github.mongowriteguard.exception.GuardedWriteException;
import io.github.mongowriteguard.exception.InvalidBulkException;
import io.github.mongowriteguard.exception.ServerDeadlineExceededException;
import io.github.mongowriteguard.exception.WriteOutcomeUnknownException;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.retry.RetryBudget;
import io.github.mongowriteguard.retry.RetryPolicy;
import io.github.mongowriteguard.spring.boot.WriteGuardConfigurationException;
import io.github.mongowriteguard.spring.data.GuardedWriteOutcomes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;
import org.springframework.kafka.listener.ConsumerRecordRecoverer;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.listener.MessageListenerContainer;
import org.springframework.util.backoff.ExponentialBackOff;

/**
 * Spring Kafka's {@link DefaultErrorHandler}, set up for listeners that write through the guard: exponential backoff
 * with jitter and the attempts of the guard's {@link RetryPolicy} (never {@code FixedBackOff(0, 9)}), the guard's
 * final answers registered as not retryable (see {@link #NOT_RETRYABLE}), a dead-letter recoverer, and a retry-budget
 * check that fails at startup when a poll's worst case does not fit {@code max.poll.interval.ms}.
 *
 * <pre>{@code
 * @Bean
 * DefaultErrorHandler errorHandler(KafkaTemplate<Object, Object> template, ConsumerFactory<?, ?> consumers, WriteGuard guard) {
 *     return GuardedErrorHandlers.builder(guard.getSettings().getRetryPolicy())
 *         .recoverer(new DeadLetterPublishingRecoverer(template))
 *         // the socket read timeout, and the longest one dead-letter send takes
 *         .retryBudget(consumers.getConfigurationProperties(), Duration.ofSeconds(30), Duration.ofMillis(20), ListenerType.BATCH)
 *         .recoverBatchByBulkIndex(true)
 *         .build();
 * }
 * }</pre>
 *
 * <h2>What Kafka retries and what it does not</h2>
 * The guard has already retried every write that was safe and useful to retry, as the same server copy, to the end
 * of its policy. What it throws afterwards is final: sending the record again would either start a second server
 * copy next to one that may still be running, or repeat an error that will not change. So these are not retryable
 * (the record goes straight to the recoverer): {@link CopyStillRunningException} (a copy still runs),
 * {@link WriteOutcomeUnknownException} (the client stopped waiting: the write may still be applied; for a
 * multi-document write an unknown number of documents changed), {@link ServerDeadlineExceededException} (the server
 * stopped the write at its deadline on every one of the guard's attempts), {@link GuardedBulkWriteException} (the
 * write errors left after the guard's retries: duplicate keys, validation, or transient errors already retried;
 * Spring's {@code BulkOperationException} carries it as its cause), {@link InvalidBulkException} and
 * {@link IllegalArgumentException} (bad input, nothing was sent). Everything else is retried with the backoff: the
 * listener's own errors, and no server reachable (when none of a call's writes reached a server, the guard throws the
 * driver's {@code MongoTimeoutException}: nothing was applied, so sending the record again is safe).
 *
 * <h2>Batch listeners</h2>
 * With {@link Builder#recoverBatchByBulkIndex(boolean)}, a batch listener that writes exactly one bulk write per
 * record, in record order, gets per-record recovery: when the exception carries the guard's outcome of a bulk as
 * large as the batch, only the records whose write was not applied go to the recoverer, each with a
 * {@link WriteNotAppliedException} naming the reason, and the batch is committed. Otherwise Spring's batch handling
 * applies (the whole batch is retried or recovered).
 *
 * <p>With {@link Builder#settleWith(WriteGuard)} as well, UNKNOWN writes are settled first
 * ({@link WriteGuard#settle}: the same server copies sent again, answered from the server's record of what they did):
 * what settles APPLIED is committed, not dead-lettered; the records held back or stopped behind a write that settled
 * APPLIED are handed back to the container to be delivered again ({@code handleBatchAndReturnRemaining}); only what
 * failed for good, or could not be settled (the reason is in the {@link WriteNotAppliedException}), goes to the
 * recoverer.
 */
public final class GuardedErrorHandlers {
    /** The guard's exceptions that Kafka must not retry: see the class documentation. */
    public static final List<Class<? extends Exception>> NOT_RETRYABLE = List.of(
            CopyStillRunningException.class,
            WriteOutcomeUnknownException.class,
            ServerDeadlineExceededException.class,
            GuardedBulkWriteException.class,
            GuardedWriteException.class,
            GuardedWriteConcernException.class,
            InvalidBulkException.class,
            IllegalArgumentException.class);

    private GuardedErrorHandlers() {}

    /** How the listener hands records to the guard, for the retry budget. */
    public enum ListenerType {
        /** One record per call: a poll costs up to {@code max.poll.records} guarded writes, one after another. */
        RECORD,
        /**
         * One guarded bulk per poll (a batch listener whose bulk has distinct keys: one round); a poll costs one
         * guarded write.
         */
        BATCH
    }

    /**
     * A builder for a handler whose backoff and attempts come from the guard's policy.
     *
     * @param policy the guard's retry policy ({@code guard.getSettings().getRetryPolicy()})
     * @return the builder
     */
    public static Builder builder(RetryPolicy policy) {
        return new Builder(policy);
    }

    /**
     * The core's {@link RetryBudget} check for a consumer: {@code max.poll.records} (Kafka's default 500) and
     * {@code max.poll.interval.ms} (default 300,000) are read from the consumer's configuration.
     *
     * @param consumerConfig      the consumer's configuration ({@code ConsumerFactory.getConfigurationProperties()})
     * @param policy              the guard's retry policy
     * @param longestAttempt      the longest one attempt can take: the client's socket read timeout
     * @param deadLetterPerRecord the longest the recoverer takes for one record (a dead-letter send waits for its
     *                            acknowledgement in the consumer thread), counted once per record of a poll;
     *                            {@link Duration#ZERO} to leave it out
     * @param type                whether the listener writes one record per call or one bulk per poll
     * @throws WriteGuardConfigurationException (an {@link IllegalStateException}) with the numbers and the fix when a
     *     poll's worst case does not fit; Spring Boot prints it as a failure report
     */
    public static void checkRetryBudget(
            Map<String, ?> consumerConfig,
            RetryPolicy policy,
            Duration longestAttempt,
            Duration deadLetterPerRecord,
            ListenerType type) {
        int maxPollRecords = intValue(consumerConfig.get(ConsumerConfig.MAX_POLL_RECORDS_CONFIG), 500);
        Duration interval =
                Duration.ofMillis(intValue(consumerConfig.get(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG), 300_000));
        String what = "the guard's " + policy
                + (deadLetterPerRecord.isZero()
                        ? ""
                        : " (backoffs include " + deadLetterPerRecord.toMillis() + " ms of dead-lettering per record)");
        if (type == ListenerType.RECORD) {
            try {
                RetryBudget.forConsumer(maxPollRecords, interval)
                        .check(
                                what,
                                policy.getMaxAttempts(),
                                longestAttempt,
                                policy.getMaxTotalBackoff().plus(deadLetterPerRecord),
                                policy.getGateGrace());
            } catch (IllegalStateException refused) {
                // a Spring Boot failure report (Description, Action) instead of a stack trace under the handler's bean
                throw new WriteGuardConfigurationException(
                        null,
                        refused.getMessage(),
                        "Change one of them as said above; with Spring Boot: spring.kafka.consumer.max-poll-records,"
                                + " spring.kafka.consumer.properties[max.poll.interval.ms],"
                                + " mongo.write-guard.retry.max-attempts, socketTimeoutMS in spring.mongodb.uri",
                        refused);
            }
            return;
        }
        // One guarded bulk per poll; every record of the poll may be dead-lettered after it. Fewer records per poll
        // shorten only that dead-lettering, so the message names the fixes that apply to a batch listener.
        Duration deadLettering = deadLetterPerRecord.multipliedBy(maxPollRecords);
        Duration worst = RetryBudget.forConsumer(1, interval)
                .worstPerRecord(
                        policy.getMaxAttempts(),
                        longestAttempt,
                        policy.getMaxTotalBackoff().plus(deadLettering),
                        policy.getGateGrace());
        if (worst.compareTo(interval) >= 0) {
            throw new WriteGuardConfigurationException(
                    null,
                    "batch listener: the " + maxPollRecords
                            + " records of a poll are one guarded bulk, so the budget counts 1 write per poll: retry"
                            + " budget exceeded for the guard's " + policy + ": attempts (" + policy.getMaxAttempts()
                            + ") x longest attempt (" + longestAttempt.toMillis() + " ms) + backoffs ("
                            + policy.getMaxTotalBackoff().toMillis() + " ms) + gate waits ("
                            + policy.getGateGrace()
                                    .multipliedBy(Math.max(0, policy.getMaxAttempts() - 1))
                                    .toMillis()
                            + " ms) + dead-lettering (" + maxPollRecords + " records x "
                            + deadLetterPerRecord.toMillis() + " ms = " + deadLettering.toMillis() + " ms) = "
                            + worst.toMillis() + " ms, not below max.poll.interval.ms (" + interval.toMillis()
                            + " ms)",
                    "Raise max.poll.interval.ms (spring.kafka.consumer.properties[max.poll.interval.ms]) above it, or"
                            + " shorten the attempts: a shorter socket timeout (socketTimeoutMS) or fewer attempts"
                            + " (mongo.write-guard.retry.max-attempts)"
                            + (deadLettering.isZero()
                                    ? ""
                                    : ", or take fewer records per poll (spring.kafka.consumer.max-poll-records) to"
                                            + " dead-letter"),
                    null);
        }
    }

    private static int intValue(@Nullable Object value, int fallback) {
        if (value == null) {
            return fallback;
        }
        return value instanceof Number number
                ? number.intValue()
                : Integer.parseInt(value.toString().trim());
    }

    /** Builds the handler; {@link #build()} runs the retry-budget check when one was given. */
    public static final class Builder {
        private final RetryPolicy policy;
        private @Nullable ConsumerRecordRecoverer recoverer;
        private boolean recoverBatchByBulkIndex;
        private @Nullable Map<String, ?> consumerConfig;
        private @Nullable Duration longestAttempt;
        private Duration deadLetterPerRecord = Duration.ZERO;
        private ListenerType listenerType = ListenerType.RECORD;
        private @Nullable WriteGuard settler;

        private Builder(RetryPolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
        }

        /**
         * Where records go when retries are exhausted or not allowed, e.g. a {@code DeadLetterPublishingRecoverer}.
         * Default: logged and skipped (Spring's default).
         *
         * @param recoverer the recoverer
         * @return this builder
         */
        public Builder recoverer(ConsumerRecordRecoverer recoverer) {
            this.recoverer = Objects.requireNonNull(recoverer, "recoverer");
            return this;
        }

        /**
         * Per-record recovery for batch listeners that write one bulk write per record, in record order. Default false.
         *
         * @param enabled true to recover only the records whose write was not applied
         * @return this builder
         */
        public Builder recoverBatchByBulkIndex(boolean enabled) {
            this.recoverBatchByBulkIndex = enabled;
            return this;
        }

        /**
         * With {@link #recoverBatchByBulkIndex(boolean)}: settle the batch's UNKNOWN writes with this guard before
         * recovering ({@link WriteGuard#settle}), so that what applied is committed and only what failed for good or
         * cannot be settled is dead-lettered. Default: none (every write not applied is recovered).
         *
         * @param guard the guard the listener writes through
         * @return this builder
         */
        public Builder settleWith(WriteGuard guard) {
            this.settler = Objects.requireNonNull(guard, "guard");
            return this;
        }

        /**
         * Checks at {@link #build()} that a poll's worst case fits {@code max.poll.interval.ms}
         * ({@link GuardedErrorHandlers#checkRetryBudget}), without the recoverer's time.
         *
         * @param consumerConfig the consumer's configuration
         * @param longestAttempt the longest one attempt can take: the client's socket read timeout
         * @param type           whether the listener writes one record per call or one bulk per poll
         * @return this builder
         */
        public Builder retryBudget(Map<String, ?> consumerConfig, Duration longestAttempt, ListenerType type) {
            return retryBudget(consumerConfig, longestAttempt, Duration.ZERO, type);
        }

        /**
         * Checks at {@link #build()} that a poll's worst case, dead-lettering included, fits
         * {@code max.poll.interval.ms} ({@link GuardedErrorHandlers#checkRetryBudget}).
         *
         * @param consumerConfig      the consumer's configuration
         * @param longestAttempt      the longest one attempt can take: the client's socket read timeout
         * @param deadLetterPerRecord the longest the recoverer takes for one record
         * @param type                whether the listener writes one record per call or one bulk per poll
         * @return this builder
         */
        public Builder retryBudget(
                Map<String, ?> consumerConfig,
                Duration longestAttempt,
                Duration deadLetterPerRecord,
                ListenerType type) {
            this.consumerConfig = Objects.requireNonNull(consumerConfig, "consumerConfig");
            this.longestAttempt = Objects.requireNonNull(longestAttempt, "longestAttempt");
            this.deadLetterPerRecord = Objects.requireNonNull(deadLetterPerRecord, "deadLetterPerRecord");
            this.listenerType = Objects.requireNonNull(type, "type");
            return this;
        }

        /**
         * The backoff: the policy's initial wait, multiplier and longest wait; its jitter as a share of the initial
         * wait (Spring's jitter is in milliseconds); {@code maxAttempts - 1} retries.
         *
         * @return a new backoff
         */
        public ExponentialBackOff backOff() {
            ExponentialBackOff backOff = new ExponentialBackOff(
                    Math.max(1, policy.getInitialBackoff().toMillis()), policy.getMultiplier());
            backOff.setMaxInterval(Math.max(1, policy.getMaxBackoff().toMillis()));
            backOff.setJitter(
                    Math.round(policy.getJitter() * policy.getInitialBackoff().toMillis()));
            backOff.setMaxAttempts(policy.getMaxAttempts() - 1L);
            return backOff;
        }

        /**
         * Builds the handler, after the retry-budget check when one was given.
         *
         * @return the handler: the guard's final exceptions are not retried
         * @throws WriteGuardConfigurationException (an {@link IllegalStateException}) when a retry budget was given and
         *     a poll's worst case does not fit
         */
        public DefaultErrorHandler build() {
            if (consumerConfig != null && longestAttempt != null) {
                checkRetryBudget(consumerConfig, policy, longestAttempt, deadLetterPerRecord, listenerType);
            }
            DefaultErrorHandler handler = recoverBatchByBulkIndex
                    ? new BulkIndexErrorHandler(recoverer, backOff(), settler)
                    : recoverer == null
                            ? new DefaultErrorHandler(backOff())
                            : new DefaultErrorHandler(recoverer, backOff());
            handler.addNotRetryableExceptions(NOT_RETRYABLE.toArray(Class[]::new));
            return handler;
        }
    }

    /**
     * Recovers only the records whose write the guard's outcome shows as not applied, after settling its UNKNOWN writes
     * when it has a guard to settle with.
     */
    private static final class BulkIndexErrorHandler extends DefaultErrorHandler {
        private final @Nullable ConsumerRecordRecoverer recoverer;
        private final @Nullable WriteGuard settler;

        BulkIndexErrorHandler(
                @Nullable ConsumerRecordRecoverer recoverer, ExponentialBackOff backOff, @Nullable WriteGuard settler) {
            super(recoverer, backOff);
            this.recoverer = recoverer;
            this.settler = settler;
        }

        @Override
        public void handleBatch(
                Exception thrown,
                ConsumerRecords<?, ?> data,
                Consumer<?, ?> consumer,
                MessageListenerContainer container,
                Runnable invokeListener) {
            List<Again> again = recoverByIndex(thrown, data);
            if (again == null) {
                super.handleBatch(thrown, data, consumer, container, invokeListener);
                return;
            }
            // This entry point cannot hand records back: those to send again are recovered, with their reason.
            for (Again each : again) {
                java.util.Objects.requireNonNull(recoverer)
                        .accept(each.record(), new WriteNotAppliedException(each.outcome(), thrown));
            }
        }

        @Override
        @SuppressWarnings("unchecked")
        public <K, V> ConsumerRecords<K, V> handleBatchAndReturnRemaining(
                Exception thrown,
                ConsumerRecords<?, ?> data,
                Consumer<?, ?> consumer,
                MessageListenerContainer container,
                Runnable invokeListener) {
            List<Again> again = recoverByIndex(thrown, data);
            if (again == null) {
                return super.handleBatchAndReturnRemaining(thrown, data, consumer, container, invokeListener);
            }
            if (again.isEmpty()) {
                return ConsumerRecords.empty();
            }
            Map<TopicPartition, List<ConsumerRecord<K, V>>> byPartition = new LinkedHashMap<>();
            for (Again each : again) {
                ConsumerRecord<?, ?> record = each.record();
                byPartition
                        .computeIfAbsent(new TopicPartition(record.topic(), record.partition()), p -> new ArrayList<>())
                        .add((ConsumerRecord<K, V>) record);
            }
            return new ConsumerRecords<>(byPartition, Map.of());
        }

        /** A record to send again, with its write's outcome. */
        private record Again(ConsumerRecord<?, ?> record, IndexOutcome outcome) {}

        /**
         * Settles, then recovers each record whose write did not apply and cannot be sent again now.
         *
         * @return the records to send again (held back or stopped behind a write that settled APPLIED), in order; null
         *     when the exception carries no outcome of this batch
         */
        private @Nullable List<Again> recoverByIndex(Exception thrown, ConsumerRecords<?, ?> data) {
            WriteOutcome<?> outcome = outcomeOf(thrown);
            if (recoverer == null || outcome == null || outcome.outcomes().size() != data.count()) {
                return null;
            }
            if (settler != null && outcome.hasUnknown()) {
                outcome = settle(settler, outcome);
            }
            List<Again> again = new ArrayList<>();
            int index = 0;
            for (ConsumerRecord<?, ?> record : data) {
                IndexOutcome result = outcome.outcome(index++);
                if (result.status() == WriteStatus.APPLIED) {
                    continue;
                }
                if (settler != null
                        && result.status() == WriteStatus.SKIPPED
                        && result.relatedIndex() >= 0
                        && outcome.outcome(result.relatedIndex()).status() == WriteStatus.APPLIED) {
                    again.add(new Again(record, result));
                } else {
                    recoverer.accept(record, new WriteNotAppliedException(result, thrown));
                }
            }
            return again;
        }

        private static <T> WriteOutcome<T> settle(WriteGuard guard, WriteOutcome<T> outcome) {
            return guard.settle(outcome);
        }

        private static @Nullable WriteOutcome<?> outcomeOf(Throwable thrown) {
            return GuardedWriteOutcomes.find(thrown).orElse(null);
        }
    }
}
