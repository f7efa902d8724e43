package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import com.mongodb.connection.TransportSettings;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoClients;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockHound;
import reactor.core.publisher.Mono;

/**
 * No blocking call runs on a driver thread while the reactive guard writes: BlockHound (its own JVM, the core's
 * {@code blockhound} surefire execution, which passes {@code -XX:+AllowRedefinitionToAddDeleteMethods}) fails any
 * blocking call on the threads that complete the reactive driver's I/O, named here by giving the client its own
 * executor ({@code TransportSettings.asyncBuilder().executorService}). A control shows BlockHound sees a blocking
 * call of this package's code made on such a thread. The guard's own threads wait (they are meant to); the driver's never do.
 */
class ReactiveBlockingTest {
    private static final String DRIVER_THREADS = "driver-io-";

    /** Every blocking call made on a driver thread since BlockHound was installed, with its stack. */
    private static final List<String> BLOCKING = new CopyOnWriteArrayList<>();

    private static boolean installed;

    /**
     * Installs BlockHound once for this JVM: every blocking call on a driver thread is recorded with its stack (not
     * thrown: the driver's own code blocks there at times); the guard's code must never be on such a stack.
     */
    private static synchronized void installBlockHound() {
        assumeTrue(
                ManagementFactory.getRuntimeMXBean()
                        .getInputArguments()
                        .contains("-XX:+AllowRedefinitionToAddDeleteMethods"),
                "BlockHound needs -XX:+AllowRedefinitionToAddDeleteMethods on Java 17: run through the blockhound"
                        + " execution (mvn -pl core test -Dtest=ReactiveBlockingTest -Dblockhound runs it there)");
        if (!installed) {
            BlockHound.install(builder -> builder.nonBlockingThreadPredicate(
                            current -> current.or(thread -> thread.getName().startsWith(DRIVER_THREADS)))
                    // an idle pool thread waiting for its next task, as Reactor's own integration allows for its
                    // workers
                    .allowBlockingCallsInside(java.util.concurrent.ThreadPoolExecutor.class.getName(), "getTask")
                    // the driver's session pool makes a new session's id with UUID.randomUUID (SecureRandom reads
                    // /dev/urandom) on the subscriber's thread for the driver's own calls too (ServerSessionPool.get)
                    .allowBlockingCallsInside("com.mongodb.internal.session.ServerSessionPool", "get")
                    .blockingMethodCallback(method -> BLOCKING.add(Thread.currentThread()
                                    .getName() + " " + method + "\n" + callersOf(new Throwable().getStackTrace()))));
            installed = true;
        }
        BLOCKING.clear();
    }

    /** A client of {@code cluster}'s whose I/O completes on threads named {@link #DRIVER_THREADS}. */
    private static MongoClient client(WriteGuard guard, String connectionString, ExecutorService driverThreads) {
        return MongoClients.create(guard.configure(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(connectionString))
                        .applyToSocketSettings(s -> s.readTimeout(30, TimeUnit.SECONDS))
                        .transportSettings(TransportSettings.asyncBuilder()
                                .executorService(driverThreads)
                                .build()))
                .build());
    }

    private static ExecutorService driverThreads() {
        AtomicInteger threads = new AtomicInteger();
        return Executors.newCachedThreadPool(task -> {
            Thread thread = new Thread(task, DRIVER_THREADS + threads.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
    }

    @Test
    void guardedWrites_makeNoBlockingCallOnTheDriversThreads() {
        installBlockHound();
        List<String> blocking = BLOCKING;
        ExecutorService driverThreads = driverThreads();
        WriteGuard guard = WriteGuard.create();
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = client(guard, cluster.connectionString(), driverThreads)) {
            GuardedReactiveCollection<Document> c = GuardedReactiveCollection.of(
                    guard, client, client.getDatabase("b").getCollection("c"));

            // The control: a blocking call of this package's code where the driver signals is seen, on a driver thread.
            List<String> signalledOn = new ArrayList<>();
            Mono.from(c.unwrap().countDocuments())
                    .doOnNext(count -> {
                        signalledOn.add(Thread.currentThread().getName());
                        sleep();
                    })
                    .block(Duration.ofSeconds(10));
            assertThat(signalledOn).singleElement().asString().startsWith(DRIVER_THREADS);
            assertThat(guardFrames(blocking)).singleElement().asString().contains("ReactiveBlockingTest.sleep");
            blocking.clear();

            // Guarded writes, a lost reply resent after the backoff, and a 1,000-write bulk: nothing blocks there.
            Mono.from(c.insertOne(new Document("_id", "k").append("n", 0))).block(Duration.ofSeconds(10));
            cluster.primary().loseReplies(1, "update");
            WriteOutcome<Document> resent = Mono.from(c.execute(
                            List.of(new UpdateOneModel<>(Filters.eq("_id", "k"), Updates.inc("n", 1))),
                            new BulkWriteOptions()))
                    .block(Duration.ofSeconds(20));
            assertThat(resent.outcome(0).status()).isEqualTo(WriteStatus.APPLIED);
            assertThat(resent.sends()).isEqualTo(2);
            List<WriteModel<Document>> upserts = new ArrayList<>();
            for (int i = 0; i < 1_000; i++) {
                upserts.add(new UpdateOneModel<>(
                        Filters.eq("_id", i), Updates.set("v", i), new UpdateOptions().upsert(true)));
            }
            assertThat(Mono.from(c.bulkWrite(upserts, new BulkWriteOptions().ordered(true)))
                            .block(Duration.ofSeconds(30))
                            .getUpserts())
                    .hasSize(1_000);
            assertThat(Mono.from(c.findOneAndUpdate(Filters.eq("_id", "k"), Updates.inc("n", 1)))
                            .block(Duration.ofSeconds(10))
                            .getInteger("n"))
                    .isEqualTo(1);
            assertThat(Mono.from(c.deleteMany(Filters.exists("v")))
                            .block(Duration.ofSeconds(10))
                            .getDeletedCount())
                    .isEqualTo(1_000);
            assertThat(guardFrames(blocking))
                    .as("blocking calls of the guard on a driver thread")
                    .isEmpty();
            System.out.println(
                    "ReactiveBlockingTest: blocking calls of the driver's own on its threads: " + blocking.size());
        } finally {
            driverThreads.shutdownNow();
        }
    }

    /**
     * Guarded calls subscribed on a driver thread (a chain that goes on where the driver signalled) start there, as the
     * driver's own calls do, and block nothing there: single writes, an unordered bulk, a find-and-modify. On a sharded
     * cluster an ordered bulk that repeats keys sends its key runs side by side, and the thread that waits for them is
     * the guard's, never the driver's thread the previous command's reply came on.
     */
    @Test
    void guardedCallsSubscribedOnADriverThread_andKeyRunsSideBySide_blockNothingThere() {
        installBlockHound();
        ExecutorService driverThreads = driverThreads();
        WriteGuard guard = WriteGuard.create();
        try (io.github.mongowriteguard.testkit.EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(3).start();
                MongoClient client = client(guard, cluster.connectionString(), driverThreads)) {
            cluster.shardCollection("b.events", SideBySideKeyRunsTest.HASHED_ID);
            GuardedReactiveCollection<Document> c = GuardedReactiveCollection.of(
                    guard, client, client.getDatabase("b").getCollection("events"));
            Mono.from(c.insertOne(new Document("_id", -1))).block(Duration.ofSeconds(10));
            BLOCKING.clear();

            List<String> startedOn = new CopyOnWriteArrayList<>();
            List<WriteModel<Document>> unordered = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                unordered.add(new UpdateOneModel<>(
                        Filters.eq("_id", 1_000 + i), Updates.set("v", i), new UpdateOptions().upsert(true)));
            }
            long applied = Mono.from(c.unwrap().countDocuments())
                    .doOnNext(count -> startedOn.add(Thread.currentThread().getName()))
                    .flatMap(count -> Mono.from(c.insertOne(new Document("_id", 0))))
                    .flatMap(inserted -> Mono.from(c.updateOne(Filters.eq("_id", 0), Updates.inc("n", 1))))
                    .flatMap(updated -> Mono.from(c.bulkWrite(unordered, new BulkWriteOptions().ordered(false))))
                    .flatMap(bulk -> Mono.from(c.findOneAndUpdate(Filters.eq("_id", 0), Updates.inc("n", 1))))
                    .map(document -> document.getInteger("n"))
                    .block(Duration.ofSeconds(20));
            assertThat(startedOn).singleElement().asString().startsWith(DRIVER_THREADS);
            assertThat(applied).isEqualTo(1);

            // mixed distinct and repeated keys: a round's unordered part, then its key runs side by side
            List<WriteModel<Document>> ordered = new ArrayList<>();
            for (int i = 0; i < 60; i++) {
                ordered.add(SideBySideKeyRunsTest.inc(i % 3 == 0 ? i % 9 : 100 + i));
            }
            WriteOutcome<Document> outcome = Mono.from(c.unwrap().countDocuments())
                    .flatMap(count -> Mono.from(c.execute(ordered, new BulkWriteOptions().ordered(true))))
                    .block(Duration.ofSeconds(30));
            assertThat(outcome.isComplete()).as(outcome.toString()).isTrue();
            assertThat(guardFrames(BLOCKING))
                    .as("blocking calls of the guard on a driver thread")
                    .isEmpty();
        } finally {
            driverThreads.shutdownNow();
        }
    }

    /**
     * A backoff holds no guard thread: more calls than the guard has threads ({@link ReactiveGuardThreads#THREADS}
     * + 8) each get a transient error ({@code NetworkTimeout}) at their first send and back off 5 s at once; every call's first send is made before any backoff
     * ends (counted from the guard's attempt events), and each then applies once. A loop that slept on its thread
     * would send at most {@code THREADS} first attempts before the first backoff ended (the other calls wait for a
     * thread). Counts, not timings: the 5 s only keeps the first sends apart from the resends.
     */
    @Test
    void backoffs_holdNoGuardThread_moreCallsThanThreadsAllBackOffAtOnce() {
        backOffAtOnce(
                "insert",
                (c, i) -> Mono.from(c.execute(
                                List.of(new com.mongodb.client.model.InsertOneModel<>(new Document("_id", i))),
                                new BulkWriteOptions()))
                        .map(outcome -> outcome.outcome(0).status() == WriteStatus.APPLIED));
    }

    /** As for {@code insert}, through {@code findOneAndUpdate} (an upsert that returns the new document). */
    @Test
    void findAndModifyBackoffs_holdNoGuardThread_moreCallsThanThreadsAllBackOffAtOnce() {
        backOffAtOnce(
                "findAndModify",
                (c, i) -> Mono.from(c.findOneAndUpdate(
                                Filters.eq("_id", i),
                                Updates.inc("n", 1),
                                new com.mongodb.client.model.FindOneAndUpdateOptions()
                                        .upsert(true)
                                        .returnDocument(com.mongodb.client.model.ReturnDocument.AFTER)))
                        .map(document -> document.getInteger("n") == 1));
    }

    /**
     * Subscribes {@code call} for more calls than the guard has threads, each of whose first {@code command} gets a
     * transient error; checks that all first sends come before any resend and that each call applied once.
     */
    private static void backOffAtOnce(
            String command,
            java.util.function.BiFunction<GuardedReactiveCollection<Document>, Integer, Mono<Boolean>> call) {
        int calls = ReactiveGuardThreads.THREADS + 8;
        AtomicInteger firstSends = new AtomicInteger();
        AtomicInteger resends = new AtomicInteger();
        AtomicInteger firstSendsBeforeAnyResend = new AtomicInteger(-1);
        WriteGuard guard = WriteGuard.builder()
                .settings(WriteGuardSettings.builder()
                        .retryPolicy(io.github.mongowriteguard.retry.RetryPolicy.builder()
                                .maxAttempts(2)
                                .initialBackoff(Duration.ofSeconds(5))
                                .maxBackoff(Duration.ofSeconds(5))
                                .jitter(0)
                                .build())
                        .build())
                .addListener(new io.github.mongowriteguard.metrics.GuardEventListener() {
                    @Override
                    public void attemptStarted(AttemptStarted event) {
                        if (event.attempt() == 1) {
                            firstSends.incrementAndGet();
                        } else {
                            firstSendsBeforeAnyResend.compareAndSet(-1, firstSends.get());
                            resends.incrementAndGet();
                        }
                    }
                })
                .build();
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = MongoClients.create(guard.configure(MongoClientSettings.builder()
                                .applyConnectionString(new ConnectionString(cluster.connectionString()))
                                .applyToSocketSettings(s -> s.readTimeout(30, TimeUnit.SECONDS)))
                        .build())) {
            GuardedReactiveCollection<Document> c = GuardedReactiveCollection.of(
                    guard, client, client.getDatabase("b").getCollection("backoffs"));
            Mono.from(c.insertOne(new Document("_id", "warm-up"))).block(Duration.ofSeconds(10));
            firstSends.set(0);
            // a transient error that leaves the driver's pool and server state alone (a lost reply closes the
            // connection, and the driver then clears its pool under the other calls' first sends)
            cluster.primary()
                    .failCommand()
                    .configure(org.bson.BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: " + calls
                            + "}, data: {failCommands: ['" + command + "'], errorCode: 89}}"));

            List<Boolean> appliedOnce = reactor.core.publisher.Flux.range(0, calls)
                    .flatMap(i -> call.apply(c, i), calls)
                    .collectList()
                    .block(Duration.ofSeconds(120));

            assertThat(firstSendsBeforeAnyResend.get())
                    .as(
                            "first sends made before any backoff ended, with %s guard threads",
                            ReactiveGuardThreads.THREADS)
                    .isEqualTo(calls);
            assertThat(appliedOnce).hasSize(calls).containsOnly(true);
            assertThat(resends.get())
                    .as("each call resent once, as the same copy")
                    .isEqualTo(calls);
            assertThat(Mono.from(c.unwrap().countDocuments()).block(Duration.ofSeconds(10)))
                    .as("every write applied once")
                    .isEqualTo(calls + 1L);
        }
    }

    /** The frames below BlockHound's check (the blocking method and its callers), one a line. */
    private static String callersOf(StackTraceElement[] stack) {
        int below = 0;
        for (int i = 0; i < stack.length; i++) {
            if (stack[i].getClassName().startsWith("reactor.blockhound.")) {
                below = i + 1;
            }
        }
        return java.util.Arrays.stream(stack, below, stack.length)
                .map(String::valueOf)
                .collect(java.util.stream.Collectors.joining("\n"));
    }

    /** The recorded blocking calls with a frame of this project's code (the guard's, or this test's control). */
    private static List<String> guardFrames(List<String> blocking) {
        return blocking.stream()
                .filter(stack -> stack.contains("io.github.mongowriteguard."))
                .toList();
    }

    private static void sleep() {
        try {
            Thread.sleep(1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
