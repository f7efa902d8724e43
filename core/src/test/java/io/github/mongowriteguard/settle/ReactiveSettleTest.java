package io.github.mongowriteguard.settle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoClients;
import com.mongodb.reactivestreams.client.MongoCollection;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.GuardedReactiveCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.exception.WriteGuardException;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.settle.SettleTest.Deployment;
import io.github.mongowriteguard.settle.SettleTest.Topology;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.mongowriteguard.testkit.truth.ServerTruth;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Mono;

/**
 * {@link SettleTest}'s faults through the reactive guard (the real Reactive Streams driver over a real socket to the
 * testkit): a lost reply at mongos is resent as the same copy, an uninterruptible stall on every shard past the
 * deadline ends UNKNOWN and is settled APPLIED once, and a write-concern error ends as it does through the synchronous
 * guard.
 */
class ReactiveSettleTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    private static MongoClient reactiveClient(WriteGuard guard, String uri, int socketTimeoutMs) {
        return MongoClients.create(guard.configure(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(uri))
                        .applyToSocketSettings(s -> s.readTimeout(socketTimeoutMs, TimeUnit.MILLISECONDS)))
                .build());
    }

    /** The counter {@code {_id: "k", n: 0}}, the server's truth forgotten since. */
    private static MongoCollection<Document> counter(MongoClient client, ServerTruth truth) {
        MongoCollection<Document> raw = client.getDatabase("settle").getCollection("counters");
        Mono.from(raw.insertOne(new Document("_id", "k").append("n", 0))).block(WAIT);
        truth.reset();
        return raw;
    }

    private static int n(MongoCollection<Document> raw) {
        return Mono.from(raw.find(Filters.eq("_id", "k")).first()).block(WAIT).getInteger("n");
    }

    /**
     * A lost reply (through mongos, mongos' own answer): the reactive guard resends the same copy (same {@code lsid}
     * and {@code txnNumber}), answered from the statement record: applied once, one copy, two sends.
     */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void aLostReply_isResentAsTheSameCopy_appliedOnce(Topology topology) throws Exception {
        WriteGuard guard = WriteGuard.create();
        try (Deployment deployment = Deployment.start(topology);
                MongoClient client = reactiveClient(guard, deployment.uri(), 30_000)) {
            MongoCollection<Document> raw = counter(client, deployment.truth());
            GuardedReactiveCollection<Document> counters = GuardedReactiveCollection.of(guard, client, raw);
            deployment.answers().loseReplies(1, "update");

            WriteOutcome<Document> outcome = Mono.from(counters.execute(SettleTest.incK(), new BulkWriteOptions()))
                    .block(WAIT);

            assertThat(outcome.outcome(0).status())
                    .as(outcome.outcome(0).toString())
                    .isEqualTo(WriteStatus.APPLIED);
            assertThat(outcome.commands()).isEqualTo(1);
            assertThat(outcome.sends()).isEqualTo(2);
            assertThat(deployment.truth().copies(SettleTest.UPDATES)).hasSize(1);
            assertThat(deployment.truth().commands(SettleTest.UPDATES)).hasSize(2);
            assertThat(deployment.truth().maxConcurrentCopies(SettleTest.UPDATES))
                    .isEqualTo(1);
            assertThat(n(raw)).as("applied once").isEqualTo(1);
        }
    }

    /**
     * docs/reactive.md's plain (non-Spring) recipe, as written there: an {@code $inc} through {@code updateOne} whose
     * replies are lost past the guard's attempts signals a {@code WriteGuardException} (UNKNOWN, not resent); its
     * {@code outcome()}, a {@code WriteOutcome<?>}, settled by the collection without a cast, proves the {@code $inc}
     * APPLIED, once: one server copy, never two side by side.
     */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void docsPlainRecipe_repliesLostPastTheGuardsAttempts_settledApplied_incOnce(Topology topology) throws Exception {
        WriteGuard guard = SettleTest.guard(Duration.ofSeconds(20), 2, Duration.ofMillis(20));
        try (Deployment deployment = Deployment.start(topology);
                MongoClient client = reactiveClient(guard, deployment.uri(), 30_000)) {
            MongoCollection<Document> raw = counter(client, deployment.truth());
            GuardedReactiveCollection<Document> counters = GuardedReactiveCollection.of(guard, client, raw);
            deployment.answers().loseReplies(2, "update"); // each of the guard's 2 attempts

            // docs/reactive.md:start
            Mono<WriteStatus> inc = Mono.from(counters.updateOne(Filters.eq("_id", "k"), Updates.inc("n", 1)))
                    .map(result -> WriteStatus.APPLIED)
                    .onErrorResume(
                            WriteGuardException.class,
                            e -> e.outcome() == null
                                    ? Mono.error(e) // refused before planning: nothing was sent
                                    : Mono.from(counters.settle(e.outcome())) // the same server copy, never a new one
                                            .map(settled -> settled.outcome(0).status()));
            // docs/reactive.md:end

            assertThat(inc.block(WAIT)).isEqualTo(WriteStatus.APPLIED);
            assertThat(deployment.truth().commands(SettleTest.UPDATES))
                    .as("the guard's 2 attempts and the settle's resend")
                    .hasSize(3);
            assertThat(deployment.truth().copies(SettleTest.UPDATES)).hasSize(1);
            assertThat(deployment.truth().maxConcurrentCopies(SettleTest.UPDATES))
                    .isEqualTo(1);
            assertThat(guard.getCopies().heldCount()).isZero();
            assertThat(n(raw)).as("applied once").isEqualTo(1);
        }
    }

    /** The recipe's block in docs/reactive.md is the code between the markers above, word for word. */
    @Test
    void docsPlainRecipe_isTheTestsCode() throws Exception {
        String doc = Files.readString(Path.of("..", "docs", "reactive.md"));
        String source =
                Files.readString(Path.of("src/test/java/io/github/mongowriteguard/settle/ReactiveSettleTest.java"));
        String start = "// docs/reactive.md:start\n";
        String marked =
                source.substring(source.indexOf(start) + start.length(), source.indexOf("// docs/reactive.md:end"));
        String example = marked.lines()
                .filter(line -> !line.isBlank())
                .map(line -> line.substring(12))
                .collect(Collectors.joining("\n", "```java\n", "\n```"));

        assertThat(doc).contains(example);
    }

    /**
     * The README's recipe through the reactive guard: writes held on every shard, uninterruptibly, past the call's
     * attempts: UNKNOWN, not retry-safe, settleable; a settle while the copy still runs proves nothing; once the stall
     * ends a settle sends the same copy again and proves the {@code $inc} applied, once, and never two copies ran side
     * by side.
     */
    @Test
    void aStallOnEveryShardPastTheDeadline_isUnknown_thenSettledApplied_incOnce() throws Exception {
        WriteGuard guard = SettleTest.guard(Duration.ofMillis(150), 2, Duration.ofMillis(20));
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(2).start();
                MongoClient client = reactiveClient(guard, cluster.connectionString(), 300)) {
            cluster.shardCollection("settle.counters", ShardKey.of(new BsonDocument("_id", new BsonString("hashed"))));
            ServerTruth truth = cluster.truth();
            MongoCollection<Document> raw = counter(client, truth);
            GuardedReactiveCollection<Document> counters = GuardedReactiveCollection.of(guard, client, raw);

            List<StallHandle> stalls = cluster.shardNames().stream()
                    .map(s ->
                            cluster.shard(s).stall(Stall.uninterruptible("settle.counters", Duration.ofMillis(2_000))))
                    .toList();
            WriteOutcome<Document> outcome;
            WriteOutcome<Document> early;
            try {
                outcome = Mono.from(counters.execute(SettleTest.incK(), new BulkWriteOptions()))
                        .block(WAIT);
                early = Mono.from(counters.settle(outcome)).block(WAIT);
            } finally {
                stalls.forEach(StallHandle::release);
            }

            IndexOutcome inc = outcome.outcome(0);
            assertThat(inc.status()).as(inc.toString()).isEqualTo(WriteStatus.UNKNOWN);
            assertThat(inc.retrySafe())
                    .as("a new copy of an $inc could apply it twice")
                    .isFalse();
            assertThat(inc.settleable()).isTrue();
            assertThat(outcome.settleableUntil()).isAfter(Instant.now().plusSeconds(60));
            assertThat(early.outcome(0).status()).isEqualTo(WriteStatus.UNKNOWN);
            assertThat(early.outcome(0).settleable()).isTrue();
            assertThat(guard.getCopies().heldCount()).isEqualTo(1);
            assertThat(truth.awaitIdle(SettleTest.UPDATES, Duration.ofSeconds(10)))
                    .isTrue();

            WriteOutcome<Document> settled = Mono.from(counters.settle(early)).block(WAIT);

            assertThat(settled.outcome(0).status())
                    .as(settled.outcome(0).toString())
                    .isEqualTo(WriteStatus.APPLIED);
            assertThat(settled.outcome(0).settleable()).isFalse();
            assertThat(List.of(settled.matchedCount(), settled.modifiedCount()))
                    .as("matched, modified")
                    .isEqualTo(List.of(1, 1));
            assertThat(settled.commands()).as("a settle starts no copy").isEqualTo(1);
            assertThat(guard.getCopies().heldCount()).isZero();
            assertThat(guard.getCopies().possiblyRunningCount()).isZero();
            assertThat(truth.copies(SettleTest.UPDATES)).hasSize(1);
            assertThat(truth.maxConcurrentCopies(SettleTest.UPDATES)).isEqualTo(1);
            assertThat(n(raw)).as("applied once").isEqualTo(1);
            assertThat(Mono.from(counters.settle(settled)).block(WAIT)).isSameAs(settled);
        }
    }

    /**
     * A write-concern error on the same replica set, once through the synchronous guard and once through the reactive
     * guard: the same statuses, reasons to hold back and settles; the driver-style call signals the same exception.
     */
    @Test
    void aWriteConcernError_endsAsThroughTheSynchronousGuard() throws Exception {
        WriteGuard guard = WriteGuard.create();
        List<WriteModel<Document>> models = List.of(
                new ReplaceOneModel<>(Filters.eq("_id", 1), new Document("qty", 100)),
                new UpdateOneModel<>(Filters.eq("_id", 1), Updates.inc("qty", 5)));
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet().start();
                com.mongodb.client.MongoClient syncClient =
                        com.mongodb.client.MongoClients.create(guard.configure(MongoClientSettings.builder()
                                        .applyConnectionString(new ConnectionString(set.connectionString())))
                                .build());
                MongoClient client = reactiveClient(guard, set.connectionString(), 30_000)) {
            com.mongodb.client.MongoCollection<Document> syncRaw =
                    syncClient.getDatabase("settle").getCollection("sync");
            syncRaw.insertOne(new Document("_id", 1).append("qty", 0));
            MongoCollection<Document> reactiveRaw = client.getDatabase("settle").getCollection("reactive");
            Mono.from(reactiveRaw.insertOne(new Document("_id", 1).append("qty", 0)))
                    .block(WAIT);
            GuardedCollection<Document> sync = guard.guardCollection(syncClient, syncRaw);
            GuardedReactiveCollection<Document> reactive = GuardedReactiveCollection.of(guard, client, reactiveRaw);

            SettleTest.failNextUpdateWithAWriteConcernError(syncClient);
            WriteOutcome<Document> syncOutcome = sync.execute(models, new BulkWriteOptions().ordered(true));
            SettleTest.failNextUpdateWithAWriteConcernError(syncClient);
            WriteOutcome<Document> reactiveOutcome = Mono.from(
                            reactive.execute(models, new BulkWriteOptions().ordered(true)))
                    .block(WAIT);

            assertThat(reactiveOutcome.outcome(0).status()).isEqualTo(WriteStatus.UNKNOWN);
            assertThat(reactiveOutcome.outcome(0).writeConcernFailed()).isTrue();
            assertThat(summary(reactiveOutcome)).isEqualTo(summary(syncOutcome));

            WriteOutcome<Document> syncSettled = sync.settle(syncOutcome);
            WriteOutcome<Document> reactiveSettled =
                    Mono.from(reactive.settle(reactiveOutcome)).block(WAIT);
            assertThat(reactiveSettled.outcome(0).status()).isEqualTo(WriteStatus.APPLIED);
            assertThat(summary(reactiveSettled)).isEqualTo(summary(syncSettled));
            assertThat(Mono.from(reactiveRaw.find().first()).block(WAIT).getInteger("qty"))
                    .isEqualTo(syncRaw.find().first().getInteger("qty"))
                    .isEqualTo(100);

            SettleTest.failNextUpdateWithAWriteConcernError(syncClient);
            Throwable syncThrown = catchThrowable(() -> sync.updateOne(Filters.eq("_id", 1), Updates.inc("qty", 5)));
            SettleTest.failNextUpdateWithAWriteConcernError(syncClient);
            Throwable reactiveThrown =
                    catchThrowable(() -> Mono.from(reactive.updateOne(Filters.eq("_id", 1), Updates.inc("qty", 5)))
                            .block(WAIT));
            assertThat(syncThrown).isNotNull();
            assertThat(reactiveThrown).isInstanceOf(syncThrown.getClass());
            assertThat(reactiveThrown.getMessage()).isEqualTo(syncThrown.getMessage());
            assertThat(Mono.from(reactiveRaw.find().first()).block(WAIT).getInteger("qty"))
                    .as("applied on the primary, once")
                    .isEqualTo(syncRaw.find().first().getInteger("qty"))
                    .isEqualTo(105);
        }
    }

    /** What a caller acts on, per write: status, write-concern failure, settleable, retry-safe, related index. */
    private static List<String> summary(WriteOutcome<?> outcome) {
        return outcome.outcomes().stream()
                .map(o -> o.status() + " wc=" + o.writeConcernFailed() + " settleable=" + o.settleable() + " retrySafe="
                        + o.retrySafe() + " related=" + o.relatedIndex())
                .toList();
    }
}
