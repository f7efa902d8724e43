package io.github.mongowriteguard.outcome;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoClients;
import com.mongodb.reactivestreams.client.MongoCollection;
import io.github.mongowriteguard.GuardedReactiveCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.exception.WriteOutcomeUnknownException;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * {@link FailoverOutcomesTest}'s first case through the reactive guard: an update answered {@code PrimarySteppedDown}
 * on every send leaves the {@code $inc} UNKNOWN, and the publisher signals {@link WriteOutcomeUnknownException} with the
 * complete outcome (the applied insert in it), never the driver's command exception.
 */
class ReactiveFailoverOutcomesTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void replicaSet_orderedIncAnsweredPrimarySteppedDown_isUnknown_notTheDriversException() throws Exception {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet().members(3).start()) {
            WriteGuard guard = FailoverOutcomesTest.guard();
            try (MongoClient client = MongoClients.create(guard.configure(MongoClientSettings.builder()
                            .applyConnectionString(new ConnectionString(set.connectionString()))
                            .applyToServerSettings(s -> s.heartbeatFrequency(100, TimeUnit.MILLISECONDS)
                                    .minHeartbeatFrequency(20, TimeUnit.MILLISECONDS))
                            .applyToSocketSettings(s -> s.readTimeout(10, TimeUnit.SECONDS)))
                    .build())) {
                MongoCollection<Document> raw = client.getDatabase("f").getCollection("c");
                Mono.from(raw.insertOne(new Document("_id", "k").append("n", 0)))
                        .block(WAIT);
                set.awaitReplication(Duration.ofSeconds(5));
                GuardedReactiveCollection<Document> guarded = GuardedReactiveCollection.of(guard, client, raw);
                FailoverOutcomesTest.steppedDownUpdates(set.members(), true);
                Throwable thrown;
                Throwable single;
                try {
                    thrown = catchThrowable(() -> Mono.from(guarded.bulkWrite(FailoverOutcomesTest.INSERT_INC_INSERT))
                            .block(WAIT));
                    single = catchThrowable(
                            () -> Mono.from(guarded.updateOne(Filters.eq("_id", "k"), Updates.inc("n", 1)))
                                    .block(WAIT));
                } finally {
                    FailoverOutcomesTest.steppedDownUpdates(set.members(), false);
                }

                WriteOutcome<?> outcome = FailoverOutcomesTest.insertAppliedIncUnknown(thrown);
                assertThat(Mono.from(raw.countDocuments(Filters.eq("_id", "a"))).block(WAIT))
                        .isEqualTo(1);
                assertThat(outcome.outcome(2).status() == WriteStatus.APPLIED)
                        .as(outcome.outcome(2).toString())
                        .isEqualTo(Mono.from(raw.countDocuments(Filters.eq("_id", "b")))
                                        .block(WAIT)
                                == 1);
                assertThat(single).isInstanceOf(WriteOutcomeUnknownException.class);
            }
        }
    }
}
