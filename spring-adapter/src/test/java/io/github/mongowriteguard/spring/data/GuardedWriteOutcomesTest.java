package io.github.mongowriteguard.spring.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.springframework.data.mongodb.core.query.Criteria.where;
import static org.springframework.data.mongodb.core.query.Query.query;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.exception.ServerDeadlineExceededException;
import io.github.mongowriteguard.exception.WriteOutcomeUnknownException;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.retry.RetryPolicy;
import io.github.mongowriteguard.spring.data.TemplateEntities.Item;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.dao.NonTransientDataAccessException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.data.mongodb.core.MongoTemplate;
import org.springframework.data.mongodb.core.query.Update;

/**
 * The guard's final answers as Spring sees them, under faults: a retry written as the README says (retry
 * {@link TransientDataAccessException} only: a plain loop, and resilience4j's {@code retryExceptions}) never resends a
 * write the guard refused to resend, so a stalled {@code $inc} is applied once; and a write the guard says is safe to
 * send again is retried and applied.
 */
class GuardedWriteOutcomesTest {
    private static EmulatedReplicaSet cluster;
    private static MongoClient plainClient;
    private WriteGuard guard;
    private MongoClient client;
    private MongoTemplate template;

    @BeforeAll
    static void start() {
        cluster = EmulatedCluster.replicaSet().start();
        plainClient = MongoClients.create(cluster.connectionString());
    }

    @AfterAll
    static void stop() {
        plainClient.close();
        cluster.close();
    }

    @BeforeEach
    void seed() {
        plainClient.getDatabase("retry").drop();
        plainClient
                .getDatabase("retry")
                .getCollection("items")
                .insertOne(new Document("_id", "a").append("q", 0).append("name", "A"));
        guard = WriteGuard.create(WriteGuardSettings.builder()
                .retryPolicy(RetryPolicy.builder()
                        .maxAttempts(3)
                        .initialBackoff(Duration.ofMillis(10))
                        .gateGrace(Duration.ofMillis(20))
                        .build())
                .build());
        client = MongoClients.create(guard.configure(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(cluster.connectionString()))
                        .applyToSocketSettings(s -> s.readTimeout(300, TimeUnit.MILLISECONDS)))
                .build());
        template = new GuardedMongoTemplate(client, "retry", guard);
        cluster.truth().reset();
    }

    @AfterEach
    void close() {
        client.close();
    }

    private void incrementA() {
        template.updateFirst(query(where("id").is("a")), new Update().inc("qty", 1), Item.class);
    }

    /** The README's loop: resend on a transient data-access exception only, at most 5 times. */
    private static int readmeRetryLoop(Runnable write) {
        int calls = 0;
        for (int attempt = 1; ; attempt++) {
            try {
                calls++;
                write.run();
                return calls;
            } catch (TransientDataAccessException e) {
                if (attempt == 5) {
                    throw e;
                }
            }
        }
    }

    private int qtyOfA() throws InterruptedException {
        assertThat(cluster.truth().awaitIdle(c -> true, Duration.ofSeconds(10))).isTrue();
        return plainClient
                .getDatabase("retry")
                .getCollection("items")
                .find(new Document("_id", "a"))
                .first()
                .getInteger("q");
    }

    @Test
    void readmeRetryLoop_afterAStalledCopy_stopsAtTheNonTransientAnswer_andTheIncIsAppliedOnce() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        Throwable thrown;
        try (StallHandle stall =
                cluster.primary().stall(Stall.uninterruptible("retry.items", Duration.ofMillis(1_500)))) {
            thrown = catchThrowable(() -> readmeRetryLoop(() -> {
                calls.incrementAndGet();
                incrementA();
            }));
        }

        // The guard resends the same copy at once (the server makes it wait behind the stalled one); the stall
        // outlasts the call's attempts, so the answer is UNKNOWN, settleable, and not retryable as a new copy.
        assertThat(thrown)
                .isInstanceOf(NonTransientDataAccessException.class)
                .isInstanceOf(GuardedWriteNotRetryableException.class)
                .hasCauseInstanceOf(WriteOutcomeUnknownException.class);
        assertThat(calls).hasValue(1);
        WriteOutcome<?> outcome = GuardedWriteOutcomes.find(thrown).orElseThrow();
        assertThat(outcome.outcome(0).status()).isEqualTo(WriteStatus.UNKNOWN);
        assertThat(outcome.outcome(0).settleable()).isTrue();
        // Once the stall is over, the settle learns the truth from the same copy: applied, once.
        WriteOutcome<?> settled = guard.settle(outcome);
        assertThat(settled.outcome(0).status()).isEqualTo(WriteStatus.APPLIED);
        assertThat(qtyOfA()).as("$inc applied once").isEqualTo(1);
        assertThat(cluster.truth().copies(c -> c.commandName().equals("update")))
                .as("server copies")
                .hasSize(1);
    }

    @Test
    void resilience4jRetry_ofTransientDataAccessExceptions_afterAStalledCopy_appliesTheIncOnce() throws Exception {
        Retry retry = Retry.of(
                "orders",
                RetryConfig.custom()
                        .maxAttempts(5)
                        .waitDuration(Duration.ofMillis(10))
                        .retryExceptions(TransientDataAccessException.class)
                        .build());
        Throwable thrown;
        try (StallHandle stall =
                cluster.primary().stall(Stall.uninterruptible("retry.items", Duration.ofMillis(1_500)))) {
            thrown = catchThrowable(
                    () -> Retry.decorateRunnable(retry, this::incrementA).run());
        }

        assertThat(thrown).isInstanceOf(GuardedWriteNotRetryableException.class);
        assertThat(retry.getMetrics().getNumberOfFailedCallsWithoutRetryAttempt())
                .isEqualTo(1);
        assertThat(qtyOfA()).as("$inc applied once").isEqualTo(1);
    }

    @Test
    void incStoppedByTheServerAtItsDeadline_beforeItRan_isRetryable_forTheGuardProvedItNotApplied() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        Throwable thrown;
        try (StallHandle stall =
                cluster.primary().stall(Stall.interruptible("retry.items", Duration.ofMillis(1_500)))) {
            thrown = catchThrowable(() -> readmeRetryLoop(() -> {
                calls.incrementAndGet();
                incrementA();
            }));
        }

        // MaxTimeMSExpired on a single-document statement proves it was not applied: FAILED, retry-safe
        assertThat(thrown)
                .isInstanceOf(GuardedWriteRetryableException.class)
                .hasCauseInstanceOf(ServerDeadlineExceededException.class);
        WriteOutcome<?> outcome = GuardedWriteOutcomes.find(thrown).orElseThrow();
        assertThat(outcome.outcome(0).status()).isEqualTo(WriteStatus.FAILED);
        assertThat(outcome.outcome(0).retrySafe()).isTrue();
        assertThat(calls).hasValue(5);
        assertThat(qtyOfA()).as("never applied").isZero();
    }

    @Test
    void replacementById_stoppedAtTheServersDeadline_isRetryable_andTheReadmeLoopAppliesIt() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        try (StallHandle stall =
                cluster.primary().stall(Stall.interruptible("retry.items", Duration.ofMillis(1_500)))) {
            int made = readmeRetryLoop(() -> {
                calls.incrementAndGet();
                try {
                    template.save(new Item("a", 7, "A7"));
                } catch (TransientDataAccessException e) {
                    assertThat(e).isInstanceOf(GuardedWriteRetryableException.class);
                    assertThat(e.getCause()).isInstanceOf(ServerDeadlineExceededException.class);
                    assertThat(GuardedWriteOutcomes.find(e)).isPresent();
                    stall.release(); // the server is healthy again for the resend
                    throw e;
                }
            });
            assertThat(made).isEqualTo(2);
        }

        assertThat(qtyOfA()).isEqualTo(7);
    }

    @Test
    void readmeRetryLoop_afterAWriteConcernError_stopsOnce_andFindsTheAppliedOutcome() throws Exception {
        // the write runs, then its write concern times out (wtimeout): applied, and not a transient answer
        cluster.primary()
                .failCommand()
                .configure(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1}, data: {"
                        + "failCommands: ['update'], writeConcernError: {code: 64, codeName: 'WriteConcernFailed',"
                        + " errmsg: 'waiting for replication timed out', errInfo: {wtimeout: true}}}}"));
        AtomicInteger calls = new AtomicInteger();
        Throwable thrown = catchThrowable(() -> readmeRetryLoop(() -> {
            calls.incrementAndGet();
            incrementA();
        }));

        // Spring's own translation of the driver's MongoWriteConcernException, the guard's exception its cause
        assertThat(thrown).isInstanceOf(NonTransientDataAccessException.class);
        assertThat(calls).hasValue(1);
        assertThat(qtyOfA()).as("$inc applied once").isEqualTo(1);
        // the README: find(e) finds the outcome in any exception's cause chain; a write concern error does not prove
        // the write durable (UNKNOWN), and the settle, the same copy sent again, proves it applied without a 2nd $inc
        WriteOutcome<?> outcome = GuardedWriteOutcomes.find(thrown).orElseThrow();
        assertThat(outcome.outcome(0).status()).isEqualTo(WriteStatus.UNKNOWN);
        assertThat(outcome.outcome(0).settleable()).isTrue();
        assertThat(guard.settle(outcome).outcome(0).status()).isEqualTo(WriteStatus.APPLIED);
        assertThat(qtyOfA()).as("$inc applied once, after the settle").isEqualTo(1);
    }

    @Test
    void find_walksTheCauseChain_andFindsNothingWithoutTheGuard() {
        assertThat(GuardedWriteOutcomes.find(new IllegalStateException("x", new RuntimeException())))
                .isEmpty();
        assertThat(GuardedWriteOutcomes.find(null)).isEmpty();
    }
}
