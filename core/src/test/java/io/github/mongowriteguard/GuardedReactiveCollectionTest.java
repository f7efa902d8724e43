package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoClients;
import com.mongodb.reactivestreams.client.MongoCollection;
import io.github.mongowriteguard.exception.InvalidBulkException;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.sharding.RoutedWrite;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The guard over the Reactive Streams driver, through the real reactive driver over a real socket to the testkit: the
 * synchronous guard's planner and send loop with the reactive transport.
 */
class GuardedReactiveCollectionTest {
    private static final int SHARDS = 5;
    private static final int N = 1_000;
    private static final ShardKey HASHED_ID = ShardKey.of(new BsonDocument("_id", new BsonString("hashed")));

    /** A reactive client built from a builder the guard configured, with the write commands it sent. */
    private static final class Reactive implements AutoCloseable {
        final WriteGuard guard;
        final MongoClient client;
        final List<BsonDocument> sent = new CopyOnWriteArrayList<>();
        final List<String> sentOn = new CopyOnWriteArrayList<>();

        Reactive(String uri, WriteGuard guard, int socketTimeoutMs) {
            this.guard = guard;
            this.client = MongoClients.create(guard.configure(MongoClientSettings.builder()
                            .applyConnectionString(new ConnectionString(uri))
                            .applyToClusterSettings(c -> c.serverSelectionTimeout(10, TimeUnit.SECONDS))
                            .applyToSocketSettings(s -> s.readTimeout(socketTimeoutMs, TimeUnit.MILLISECONDS))
                            .addCommandListener(new CommandListener() {
                                @Override
                                public void commandStarted(CommandStartedEvent event) {
                                    if (List.of("insert", "update", "delete").contains(event.getCommandName())) {
                                        sent.add(event.getCommand().clone());
                                        sentOn.add(Thread.currentThread().getName());
                                    }
                                }
                            }))
                    .build());
        }

        GuardedReactiveCollection<Document> guarded(String database, String collection) {
            return GuardedReactiveCollection.of(
                    guard, client, client.getDatabase(database).getCollection(collection));
        }

        @Override
        public void close() {
            client.close();
        }
    }

    @Test
    void orderedUpsertBulkOnHashedId_costsAtMostOneBatchPerShard_whereTheReactiveDriverPaysOnePerShardChange() {
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(SHARDS).start();
                Reactive reactive = new Reactive(cluster.connectionString(), WriteGuard.create(), 30_000)) {
            cluster.shardCollection("shop.guarded", HASHED_ID);
            cluster.shardCollection("shop.plain", HASHED_ID);
            GuardedReactiveCollection<Document> guarded = reactive.guarded("shop", "guarded");
            MongoCollection<Document> plain =
                    reactive.client.getDatabase("shop").getCollection("plain");
            cluster.routing().reset();

            WriteOutcome<Document> outcome = Mono.from(guarded.execute(upserts(), new BulkWriteOptions().ordered(true)))
                    .block();
            Mono.from(plain.bulkWrite(upserts(), new BulkWriteOptions().ordered(true)))
                    .block();

            int guardedTrips = cluster.routing().writes("shop.guarded").stream()
                    .mapToInt(RoutedWrite::childBatches)
                    .sum();
            int plainTrips = cluster.routing().writes("shop.plain").stream()
                    .mapToInt(RoutedWrite::childBatches)
                    .sum();
            double expected = 1 + (N - 1) * (1 - 1.0 / SHARDS);
            System.out.printf(
                    "GuardedReactiveCollectionTest: %,d upserts by _id, ordered, %d shards: reactive guard %d mongos-to-shard"
                            + " round trips, reactive driver %d (formula %.0f)%n",
                    N, SHARDS, guardedTrips, plainTrips, expected);

            assertThat(outcome.isComplete()).isTrue();
            assertThat(outcome.upserts()).hasSize(N);
            assertThat(outcome.commands()).isEqualTo(1);
            assertThat(guardedTrips).isLessThanOrEqualTo(SHARDS);
            assertThat((double) plainTrips).isGreaterThan(0.9 * expected);
            assertThat(Mono.from(guarded.unwrap().countDocuments()).block()).isEqualTo(N);
            assertThat(Mono.from(plain.countDocuments()).block()).isEqualTo(N);
        }
    }

    @Test
    void aLostReply_isResentAsTheSameCopy_andAppliesOnce() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                Reactive reactive = new Reactive(cluster.connectionString(), WriteGuard.create(), 30_000)) {
            GuardedReactiveCollection<Document> counters = reactive.guarded("r", "counters");
            Mono.from(counters.unwrap().insertOne(new Document("_id", "k").append("n", 0)))
                    .block();
            cluster.truth().reset();
            reactive.sent.clear();
            cluster.primary().loseReplies(1, "update");

            WriteOutcome<Document> outcome = Mono.from(counters.execute(
                            List.of(new UpdateOneModel<>(Filters.eq("_id", "k"), Updates.inc("n", 1))),
                            new BulkWriteOptions()))
                    .block(Duration.ofSeconds(20));

            assertThat(outcome.outcome(0).status())
                    .as(outcome.outcome(0).toString())
                    .isEqualTo(WriteStatus.APPLIED);
            assertThat(outcome.commands()).isEqualTo(1);
            assertThat(outcome.sends()).isEqualTo(2);
            assertThat(reactive.sent).hasSize(2);
            assertThat(reactive.sent.get(1).get("txnNumber"))
                    .isEqualTo(reactive.sent.get(0).get("txnNumber"))
                    .isNotNull();
            assertThat(reactive.sent.get(1).get("lsid"))
                    .isEqualTo(reactive.sent.get(0).get("lsid"));
            assertThat(cluster.truth().copies(c -> c.commandName().equals("update")))
                    .hasSize(1);
            assertThat(Mono.from(counters.unwrap().find().first()).block().getInteger("n"))
                    .isEqualTo(1);
        }
    }

    @Test
    void theDriversWriteMethods_publishTheDriversResults_onTheThreadTheDriverSignalsOn() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                Reactive reactive = new Reactive(cluster.connectionString(), WriteGuard.create(), 30_000)) {
            GuardedReactiveCollection<Document> c = reactive.guarded("r", "methods");
            List<String> signalledOn = new CopyOnWriteArrayList<>();

            assertThat(Mono.from(c.insertOne(new Document("_id", 1).append("v", 1)))
                            .doOnNext(
                                    r -> signalledOn.add(Thread.currentThread().getName()))
                            .block()
                            .getInsertedId())
                    .isEqualTo(new org.bson.BsonInt32(1));
            assertThat(Mono.from(c.insertMany(List.of(new Document("_id", 2), new Document("_id", 3))))
                            .block()
                            .getInsertedIds())
                    .hasSize(2);
            assertThat(Mono.from(c.updateOne(Filters.eq("_id", 2), Updates.set("v", 2)))
                            .block()
                            .getModifiedCount())
                    .isEqualTo(1);
            assertThat(Mono.from(c.updateMany(Filters.in("_id", 2, 3), Updates.set("w", 1)))
                            .block()
                            .getModifiedCount())
                    .isEqualTo(2);
            assertThat(Mono.from(c.replaceOne(
                                    Filters.eq("_id", 4),
                                    new Document("r", 1),
                                    new com.mongodb.client.model.ReplaceOptions().upsert(true)))
                            .block()
                            .getUpsertedId())
                    .isEqualTo(new org.bson.BsonInt32(4));
            assertThat(Mono.from(c.findOneAndUpdate(Filters.eq("_id", 1), Updates.inc("v", 1)))
                            .block()
                            .getInteger("v"))
                    .isEqualTo(1);
            assertThat(Mono.from(c.findOneAndDelete(Filters.eq("_id", 99))).block())
                    .as("nothing found: an empty publisher, as the driver's")
                    .isNull();
            assertThat(Mono.from(c.deleteOne(Filters.eq("_id", 4))).block().getDeletedCount())
                    .isEqualTo(1);
            assertThat(Mono.from(c.deleteMany(Filters.in("_id", 2, 3))).block().getDeletedCount())
                    .isEqualTo(2);
            assertThat(Mono.from(c.unwrap().find(Filters.eq("_id", 1))).block())
                    .isEqualTo(new Document("_id", 1).append("v", 2));

            assertThat(reactive.sent)
                    .as("every write carries the guard's deadline")
                    .allMatch(command -> command.containsKey("maxTimeMS"));

            // A write whose reply proves its outcome is signalled where the driver signals its own (its I/O thread),
            // not handed to the guard's threads first.
            List<String> driverSignalledOn = new CopyOnWriteArrayList<>();
            Mono.from(c.unwrap().insertOne(new Document("_id", 5)))
                    .doOnNext(r -> driverSignalledOn.add(Thread.currentThread().getName()))
                    .block();
            assertThat(signalledOn)
                    .singleElement()
                    .asString()
                    .doesNotStartWith("mongo-write-guard-reactive")
                    .isNotEqualTo(Thread.currentThread().getName())
                    .startsWith(threadKind(driverSignalledOn.get(0)));
        }
    }

    /**
     * The driver's reactive collection builds its operation when a write method is called, so it throws its argument
     * checks' {@code IllegalArgumentException} from the method; the guard plans when subscribed, so the same calls
     * return a publisher that signals an {@code IllegalArgumentException} before anything is sent (the README's table).
     */
    @Test
    void badArguments_theDriverThrowsWhenCalled_theGuardSignalsAnIllegalArgumentWhenSubscribed_nothingSent() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                Reactive reactive = new Reactive(cluster.connectionString(), WriteGuard.create(), 30_000)) {
            GuardedReactiveCollection<Document> guarded = reactive.guarded("r", "bad");
            MongoCollection<Document> driver = guarded.unwrap();
            List<WriteModel<Document>> withNull = java.util.Arrays.asList((WriteModel<Document>) null);
            List<java.util.function.Function<Object, Publisher<?>>> calls = List.of(
                    c -> c == driver ? driver.bulkWrite(List.of()) : guarded.bulkWrite(List.of()),
                    c -> c == driver ? driver.insertOne(null) : guarded.insertOne(null),
                    c -> c == driver
                            ? driver.updateOne(null, Updates.set("a", 1))
                            : guarded.updateOne(null, Updates.set("a", 1)),
                    c -> c == driver ? driver.insertMany(List.of()) : guarded.insertMany(List.of()),
                    c -> c == driver ? driver.deleteOne(null) : guarded.deleteOne(null),
                    c -> c == driver ? driver.bulkWrite(withNull) : guarded.bulkWrite(withNull));
            for (java.util.function.Function<Object, Publisher<?>> call : calls) {
                org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
                        .isThrownBy(() -> call.apply(driver));
                Publisher<?> publisher = call.apply(guarded);
                org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
                        .isThrownBy(() -> Mono.from(publisher).block(Duration.ofSeconds(10)));
            }
            assertThat(reactive.sent).as("nothing sent").isEmpty();
        }
    }

    /**
     * A null document in {@code insertMany}, ordered and unordered, through the guard and its
     * {@code asMongoCollection()} view: the reactive driver refuses it before sending with "documents can not contain a
     * null value" ({@code Operations.insertMany}); the guard's publisher signals an {@code IllegalArgumentException}
     * with the driver's words, the index and the fix, and nothing is sent, not even the document before it.
     */
    @Test
    void aNullDocumentInInsertMany_isRefusedWithItsIndexAndTheDriversWords_nothingSent() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                Reactive reactive = new Reactive(cluster.connectionString(), WriteGuard.create(), 30_000)) {
            GuardedReactiveCollection<Document> guarded = reactive.guarded("r", "nulls");
            MongoCollection<Document> driver = guarded.unwrap();
            List<Document> withNull = java.util.Arrays.asList(new Document("_id", 1), null, new Document("_id", 3));
            InsertManyOptions unordered = new InsertManyOptions().ordered(false);

            Throwable driverThrew = org.assertj.core.api.Assertions.catchThrowable(
                    () -> Mono.from(driver.insertMany(withNull)).block(Duration.ofSeconds(10)));
            assertThat(driverThrew)
                    .isExactlyInstanceOf(IllegalArgumentException.class)
                    .hasMessage("documents can not contain a null value");
            List<Publisher<?>> calls = List.of(
                    guarded.insertMany(withNull),
                    guarded.insertMany(withNull, unordered),
                    guarded.asMongoCollection().insertMany(withNull),
                    guarded.asMongoCollection().insertMany(withNull, unordered));
            for (Publisher<?> call : calls) {
                Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(
                        () -> Mono.from(call).block(Duration.ofSeconds(10)));
                assertThat(thrown)
                        .isInstanceOf(IllegalArgumentException.class)
                        .isInstanceOf(InvalidBulkException.class)
                        .hasMessageContaining(driverThrew.getMessage())
                        .hasMessageContaining("index 1")
                        .hasMessageContaining("remove it from the list")
                        .hasMessageContaining("Nothing was sent");
                assertThat(((InvalidBulkException) thrown).index()).isEqualTo(1);
                assertThat(((InvalidBulkException) thrown).problem())
                        .isEqualTo(InvalidBulkException.Problem.NULL_ELEMENT);
            }
            assertThat(reactive.sent).as("nothing sent").isEmpty();
            assertThat(Mono.from(driver.countDocuments()).block(Duration.ofSeconds(10)))
                    .isZero();
        }
    }

    @Test
    void everyWriteMethodOfTheDriversReactiveCollection_hasItsGuardedCounterpart() {
        assertThat(GuardedReactiveCollection.VIEW_ROUTES.unguarded()).isEmpty();
        long writes = java.util.Arrays.stream(MongoCollection.class.getMethods())
                .filter(m -> GuardedReactiveCollectionView.WRITES.contains(m.getName()))
                .count();
        assertThat(writes)
                .as("the driver's write methods, sessions and options included")
                .isEqualTo(56);
    }

    @Test
    void theMongoCollectionView_guardsWrites_keepsReadsAsTheDrivers_andStaysGuardedThroughWithX() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                Reactive reactive = new Reactive(cluster.connectionString(), WriteGuard.create(), 30_000)) {
            MongoCollection<Document> view = reactive.guarded("r", "view").asMongoCollection();

            Mono.from(view.insertOne(new Document("_id", 1))).block();
            Mono.from(view.withWriteConcern(com.mongodb.WriteConcern.MAJORITY)
                            .bulkWrite(List.of(upsert(2), upsert(3)), new BulkWriteOptions().ordered(true)))
                    .block();
            Mono.from(view.withDocumentClass(BsonDocument.class).updateOne(Filters.eq("_id", 1), Updates.set("v", 1)))
                    .block();

            assertThat(reactive.sent)
                    .as("the guard's deadline on each (the driver sends none without timeoutMS)")
                    .hasSize(3)
                    .allMatch(command -> command.containsKey("maxTimeMS"));
            assertThat(Mono.from(view.countDocuments()).block()).isEqualTo(3);
            assertThat(Flux.from(view.find(Filters.eq("_id", 1))).collectList().block())
                    .containsExactly(new Document("_id", 1).append("v", 1));
            assertThat(view.getNamespace().getFullName()).isEqualTo("r.view");
            assertThat(view.toString()).startsWith("guarded view of");
        }
    }

    @Test
    void aCancelledSubscription_doesNotStopTheCall_itsCopyIsAccountedAndApplies() throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                Reactive reactive = new Reactive(cluster.connectionString(), WriteGuard.create(), 30_000)) {
            GuardedReactiveCollection<Document> c = reactive.guarded("r", "cancelled");
            CountDownLatch sent = new CountDownLatch(1);
            // the first insert is held on the server for a moment, long enough to cancel while it runs
            Mono.from(reactive.client
                            .getDatabase("admin")
                            .runCommand(new Document("configureFailPoint", "failCommand")
                                    .append("mode", new Document("times", 1))
                                    .append(
                                            "data",
                                            new Document("failCommands", List.of("insert"))
                                                    .append("blockConnection", true)
                                                    .append("blockTimeMS", 500))))
                    .block();

            reactor.core.Disposable subscription = Mono.from(c.insertOne(new Document("_id", "x")))
                    .doOnSubscribe(s -> sent.countDown())
                    .subscribe();
            assertThat(sent.await(5, TimeUnit.SECONDS)).isTrue();
            Thread.sleep(100);
            subscription.dispose();

            // the call goes on to its end: the document is there, once
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (Mono.from(c.unwrap().countDocuments()).block() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(Mono.from(c.unwrap().countDocuments()).block()).isEqualTo(1);
            assertThat(reactive.sent).hasSize(1);
            assertThat(reactive.guard.getCopies().possiblyRunning()).isEmpty();
        }
    }

    @Test
    void sixtyFourConcurrentSubscribers_eachGetTheirOwnOutcome() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                Reactive reactive = new Reactive(cluster.connectionString(), WriteGuard.create(), 30_000)) {
            GuardedReactiveCollection<Document> c = reactive.guarded("r", "concurrent");
            List<WriteOutcome<Document>> outcomes = Flux.range(0, 64)
                    .flatMap(
                            i -> c.execute(
                                    List.of(upsert(i * 10), upsert(i * 10 + 1)), new BulkWriteOptions().ordered(true)),
                            64)
                    .collectList()
                    .block(Duration.ofSeconds(60));
            assertThat(outcomes).hasSize(64).allMatch(WriteOutcome::isComplete);
            assertThat(Mono.from(c.unwrap().countDocuments()).block()).isEqualTo(128);
        }
    }

    private static List<WriteModel<Document>> upserts() {
        List<WriteModel<Document>> models = new ArrayList<>(N);
        for (int i = 0; i < N; i++) {
            models.add(upsert(i));
        }
        return models;
    }

    private static WriteModel<Document> upsert(int id) {
        return new UpdateOneModel<>(
                Filters.eq("_id", id), Updates.set("qty", id % 100), new UpdateOptions().upsert(true));
    }

    /** A thread's name without its number: the pool it belongs to. */
    private static String threadKind(String name) {
        return name.replaceAll("[0-9]+$", "");
    }
}
