package io.github.mongowriteguard.spring.boot.reactive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.springframework.data.mongodb.core.query.Criteria.where;
import static org.springframework.data.mongodb.core.query.Query.query;

import com.mongodb.client.result.UpdateResult;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.spring.data.GuardedWriteOutcomes;
import io.github.mongowriteguard.test.EmulatedMongo;
import io.github.mongowriteguard.test.EmulatedMongo.ShardedCollection;
import io.github.mongowriteguard.test.EmulatedMongoCluster;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.dao.NonTransientDataAccessException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.data.mongodb.UncategorizedMongoDbException;
import org.springframework.data.mongodb.core.ReactiveMongoTemplate;
import org.springframework.data.mongodb.core.query.Update;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

/**
 * The reactive recipe of docs/reactive.md ("Errors, retries and settle"), run as written by a reactive Boot
 * application on the emulated 2-shard cluster under faults at mongos: {@code retryWhen(Retry.backoff(...).filter(
 * TransientDataAccessException.class::isInstance))} around an {@code $inc}, then, for a final answer, the outcome found
 * with {@code GuardedWriteOutcomes.find} and settled with {@code guard.settle} off the event loop. Each {@code $inc}
 * is applied exactly once: never lost, never applied twice.
 */
@SpringBootTest
@EmulatedMongo(
        shards = 2,
        database = "shop",
        options = "socketTimeoutMS=3000",
        shardedCollections = @ShardedCollection(namespace = "shop.counters"))
class ReactiveRetryRecipeTest {
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class Application {}

    @Autowired
    ReactiveMongoTemplate template;

    @Autowired
    WriteGuard guard;

    @Autowired
    EmulatedMongoCluster mongo;

    final AtomicInteger subscriptions = new AtomicInteger();

    @BeforeEach
    void seed() {
        template.remove(new org.springframework.data.mongodb.core.query.Query(), "counters")
                .block();
        template.insert(new Document("_id", "c").append("n", 0), "counters").block();
    }

    /** The recipe's write: an $inc, resent by Reactor only for a TransientDataAccessException. */
    private Mono<UpdateResult> incrementWithRetry() {
        return Mono.defer(() -> {
                    subscriptions.incrementAndGet();
                    return template.updateFirst(query(where("_id").is("c")), new Update().inc("n", 1), "counters");
                })
                .retryWhen(
                        Retry.backoff(3, Duration.ofMillis(50)).filter(TransientDataAccessException.class::isInstance));
    }

    /** The recipe's settle: the outcome the exception carries, settled off the event loop (guard.settle blocks). */
    private Mono<WriteOutcome<?>> settle(Throwable failure) {
        return Mono.justOrEmpty(GuardedWriteOutcomes.find(failure))
                .flatMap(outcome -> Mono.<WriteOutcome<?>>fromCallable(() -> guard.settle(outcome))
                        .subscribeOn(Schedulers.boundedElastic()));
    }

    private long counter() {
        return template.findById("c", Document.class, "counters")
                .map(d -> ((Number) d.get("n")).longValue())
                .block();
    }

    @Test
    void oneLostReply_theGuardResendsTheSameCopy_reactorNeverResubscribes_appliedOnce() {
        mongo.sharded().mongos(0).loseReplies(1, "update");

        UpdateResult result = incrementWithRetry().block();

        assertThat(result.getModifiedCount()).isEqualTo(1);
        assertThat(subscriptions).hasValue(1);
        assertThat(counter()).isEqualTo(1);
    }

    @Test
    void repliesLostPastTheGuardsAttempts_isAFinalAnswer_notResent_andTheSettleProvesItAppliedOnce() {
        mongo.sharded().mongos(0).loseReplies(5, "update"); // more than the guard's 3 attempts

        Throwable failure = catchThrowable(() -> incrementWithRetry().block());

        assertThat(failure).isInstanceOf(NonTransientDataAccessException.class);
        assertThat(subscriptions).hasValue(1); // the filter kept Reactor from sending a second copy
        WriteOutcome<?> settled = settle(failure).block();
        assertThat(settled.outcome(0).status()).isEqualTo(WriteStatus.APPLIED);
        assertThat(counter()).isEqualTo(1);
    }

    @Test
    void aDriverErrorThatProvesNothingApplied_keepsSpringsTranslation_isNotResent_andNothingIsApplied() {
        // NotWritablePrimary on each of the guard's 3 attempts: not applied, so the guard throws the driver's own
        // exception, which Spring translates as it does without the guard (non-transient): the recipe does not resend
        mongo.sharded()
                .mongos(0)
                .failCommand()
                .configure(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 3},"
                        + " data: {failCommands: ['update'], errorCode: 10107}}"));

        Throwable failure = catchThrowable(() -> incrementWithRetry().block());

        assertThat(failure).isInstanceOf(UncategorizedMongoDbException.class);
        assertThat(GuardedWriteOutcomes.find(failure)).isEmpty();
        assertThat(subscriptions).hasValue(1);
        assertThat(counter()).isZero(); // nothing applied: the caller may send it again
        assertThat(incrementWithRetry().block().getModifiedCount()).isEqualTo(1);
        assertThat(counter()).isEqualTo(1);
    }
}
