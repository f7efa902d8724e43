package io.github.mongowriteguard.spring.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoSocketOpenException;
import com.mongodb.ServerAddress;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.exception.GuardedBulkWriteException;
import io.github.mongowriteguard.exception.ServerDeadlineExceededException;
import io.github.mongowriteguard.exception.WriteOutcomeUnknownException;
import io.github.mongowriteguard.internal.outcome.RecordedIndexOutcome;
import io.github.mongowriteguard.internal.outcome.RecordedWriteOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.retry.RetryPolicy;
import io.github.mongowriteguard.spring.boot.WriteGuardConfigurationException;
import io.github.mongowriteguard.spring.kafka.GuardedErrorHandlers.ListenerType;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.springframework.data.mongodb.BulkOperationException;
import org.springframework.data.mongodb.UncategorizedMongoDbException;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.listener.ExceptionClassifier;
import org.springframework.kafka.support.ExceptionMatcher;
import org.springframework.util.backoff.ExponentialBackOff;

class GuardedErrorHandlersTest {
    private static final RetryPolicy POLICY = RetryPolicy.builder()
            .maxAttempts(4)
            .initialBackoff(Duration.ofMillis(200))
            .multiplier(2)
            .maxBackoff(Duration.ofSeconds(1))
            .jitter(0.5)
            .build();

    @Test
    void backOff_takesThePoliciesAttemptsAndWaits_withJitter() {
        ExponentialBackOff backOff = GuardedErrorHandlers.builder(POLICY).backOff();

        assertThat(backOff.getMaxAttempts()).isEqualTo(3); // retries: 4 deliveries in all
        assertThat(backOff.getInitialInterval()).isEqualTo(200);
        assertThat(backOff.getMultiplier()).isEqualTo(2.0);
        assertThat(backOff.getMaxInterval()).isEqualTo(1000);
        assertThat(backOff.getJitter()).isEqualTo(100);
    }

    @Test
    void guardsFinalAnswers_areNotRetried_evenWrappedBySpring_otherFailuresAre() throws Exception {
        ExceptionMatcher retryable =
                matcher(GuardedErrorHandlers.builder(POLICY).build());
        WriteOutcome<Document> outcome = outcome(1);

        assertThat(retryable.match(
                        new UncategorizedMongoDbException("x", new WriteOutcomeUnknownException("u", outcome, null))))
                .isFalse();
        assertThat(retryable.match(
                        new UncategorizedMongoDbException("x", new ServerDeadlineExceededException("d", outcome))))
                .isFalse();
        assertThat(retryable.match(new BulkOperationException("b", bulkException(outcome))))
                .isFalse();
        assertThat(retryable.match(new IllegalArgumentException("bad input"))).isFalse();
        assertThat(retryable.match(new MongoSocketOpenException("no server", new ServerAddress())))
                .isTrue();
        assertThat(retryable.match(new IllegalStateException("the listener's own")))
                .isTrue();
    }

    @Test
    void retryBudget_thatDoesNotFit_failsAtBuild_withTheNumbers() {
        Map<String, Object> consumer = Map.of("max.poll.records", 500, "max.poll.interval.ms", "300000");

        assertThatThrownBy(() -> GuardedErrorHandlers.builder(POLICY)
                        .retryBudget(consumer, Duration.ofSeconds(30), ListenerType.RECORD)
                        .build())
                .isInstanceOf(WriteGuardConfigurationException.class)
                .hasMessageContaining("max.poll.records (500)")
                .hasMessageContaining("max.poll.interval.ms (300000 ms)")
                .extracting(e -> ((WriteGuardConfigurationException) e).action())
                .asString()
                .contains("spring.kafka.consumer.max-poll-records", "mongo.write-guard.retry.max-attempts");
    }

    @Test
    void retryBudget_ofABatchListener_countsOneGuardedBulkPerPoll() {
        Map<String, Object> consumer = Map.of("max.poll.records", 1000, "max.poll.interval.ms", 4000);

        GuardedErrorHandlers.builder(POLICY)
                .retryBudget(consumer, Duration.ofMillis(300), ListenerType.BATCH)
                .build();
        assertThatThrownBy(() -> GuardedErrorHandlers.builder(POLICY)
                        .retryBudget(consumer, Duration.ofMillis(300), ListenerType.RECORD)
                        .build())
                .hasMessageContaining("max.poll.records (1000)");
    }

    @Test
    void retryBudget_ofABatchListener_thatDoesNotFit_namesTheFixesOfABatchListener() {
        Map<String, Object> consumer = Map.of("max.poll.records", 500, "max.poll.interval.ms", 10_000);

        assertThatThrownBy(() -> GuardedErrorHandlers.builder(POLICY)
                        .retryBudget(consumer, Duration.ofSeconds(30), Duration.ofMillis(20), ListenerType.BATCH)
                        .build())
                .isInstanceOf(WriteGuardConfigurationException.class)
                .hasMessageContaining("batch listener: the 500 records of a poll are one guarded bulk")
                .hasMessageContaining("dead-lettering (500 records x 20 ms = 10000 ms)")
                .hasMessageContaining("not below max.poll.interval.ms (10000 ms)")
                .hasMessageContaining("Raise max.poll.interval.ms")
                .hasMessageContaining("mongo.write-guard.retry.max-attempts")
                // a batch listener's attempts do not shrink with the records per poll: no "at most N records"
                .hasMessageNotContaining("max.poll.records (1)")
                .hasMessageNotContaining("at most");
    }

    @Test
    void batchByBulkIndex_recoversOnlyTheRecordsNotApplied_withTheirReason() {
        List<String> recovered = new ArrayList<>();
        DefaultErrorHandler handler = GuardedErrorHandlers.builder(POLICY)
                .recoverer((record, e) -> recovered.add(record.value() + ": " + e.getMessage()))
                .recoverBatchByBulkIndex(true)
                .build();
        RecordedWriteOutcome.Builder<Document> outcome = new RecordedWriteOutcome.Builder<>(models(3));
        outcome.set(RecordedIndexOutcome.applied(0))
                .set(RecordedIndexOutcome.failed(1, 11000, "DuplicateKey", "E11000 duplicate key", null, false))
                .set(RecordedIndexOutcome.applied(2));
        TopicPartition partition = new TopicPartition("t", 0);
        ConsumerRecords<String, String> records = new ConsumerRecords<>(
                Map.of(
                        partition,
                        List.of(
                                new ConsumerRecord<>("t", 0, 0, "k", "r0"),
                                new ConsumerRecord<>("t", 0, 1, "k", "r1"),
                                new ConsumerRecord<>("t", 0, 2, "k", "r2"))),
                Map.of());

        handler.handleBatch(
                new BulkOperationException("b", bulkException(outcome.build())), records, null, null, () -> {});

        assertThat(recovered)
                .singleElement()
                .asString()
                .startsWith("r1: write at bulk index 1 not applied")
                .contains("E11000");
    }

    /**
     * A batch of a replacement and a later {@code $inc} of the same {@code _id}; the replacement's command gets a
     * write-concern error (applied on the primary, UNKNOWN) and the {@code $inc} is held back. The handler settles:
     * the replacement is APPLIED (committed, not dead-lettered) and the {@code $inc}'s record is handed back to be
     * delivered again; nothing goes to the recoverer.
     */
    @Test
    void batchByBulkIndex_settlesFirst_commitsWhatApplied_andHandsBackWhatWaitedBehindIt() {
        WriteGuard guard = WriteGuard.create();
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet().start();
                MongoClient client = MongoClients.create(guard.configure(MongoClientSettings.builder()
                                .applyConnectionString(new ConnectionString(set.connectionString())))
                        .build())) {
            MongoCollection<Document> raw = client.getDatabase("k").getCollection("stock");
            raw.insertOne(new Document("_id", 1).append("qty", 0));
            GuardedCollection<Document> stock = guard.guardCollection(client, raw);
            set.primary()
                    .failCommand()
                    .configure(org.bson.BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1},"
                            + " data: {failCommands: ['update'], writeConcernError: {code: 64, codeName:"
                            + " 'WriteConcernFailed', errmsg: 'waiting for replication timed out'}}}"));
            Exception thrown = org.assertj.core.api.Assertions.catchException(() -> stock.bulkWrite(List.of(
                    new ReplaceOneModel<>(Filters.eq("_id", 1), new Document("qty", 100)),
                    new UpdateOneModel<>(Filters.eq("_id", 1), Updates.inc("qty", 5)))));
            List<String> recovered = new ArrayList<>();
            DefaultErrorHandler handler = GuardedErrorHandlers.builder(POLICY)
                    .recoverer((record, e) -> recovered.add(record.value() + ": " + e.getMessage()))
                    .recoverBatchByBulkIndex(true)
                    .settleWith(guard)
                    .build();
            ConsumerRecords<String, String> records = new ConsumerRecords<>(
                    Map.of(
                            new TopicPartition("t", 0),
                            List.of(
                                    new ConsumerRecord<>("t", 0, 0, "k", "replace"),
                                    new ConsumerRecord<>("t", 0, 1, "k", "inc"))),
                    Map.of());

            ConsumerRecords<String, String> again =
                    handler.handleBatchAndReturnRemaining(thrown, records, null, null, () -> {});

            assertThat(thrown).isInstanceOf(GuardedBulkWriteException.class);
            assertThat(recovered).isEmpty();
            assertThat(again.count()).isEqualTo(1);
            assertThat(again.iterator().next().value()).isEqualTo("inc");
            assertThat(raw.find().first().getInteger("qty")).isEqualTo(100);
        }
    }

    private static ExceptionMatcher matcher(DefaultErrorHandler handler) throws Exception {
        Method method = ExceptionClassifier.class.getDeclaredMethod("getExceptionMatcher");
        method.setAccessible(true);
        return (ExceptionMatcher) method.invoke(handler);
    }

    private static List<InsertOneModel<Document>> models(int n) {
        List<InsertOneModel<Document>> models = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            models.add(new InsertOneModel<>(new Document("_id", i)));
        }
        return models;
    }

    private static WriteOutcome<Document> outcome(int n) {
        RecordedWriteOutcome.Builder<Document> builder = new RecordedWriteOutcome.Builder<>(models(n));
        for (int i = 0; i < n; i++) {
            builder.set(RecordedIndexOutcome.unknown(i, "the client stopped waiting", true));
        }
        return builder.build();
    }

    private static GuardedBulkWriteException bulkException(WriteOutcome<?> outcome) {
        return new GuardedBulkWriteException(
                outcome,
                List.of(new BulkWriteError(11000, "E11000", new org.bson.BsonDocument(), 1)),
                null,
                new ServerAddress(),
                java.util.Set.of());
    }
}
