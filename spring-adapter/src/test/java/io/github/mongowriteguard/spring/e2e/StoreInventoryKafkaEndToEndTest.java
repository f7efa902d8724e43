package io.github.mongowriteguard.spring.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.github.mongowriteguard.spring.data.GuardedMongoTemplate;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.sharding.RoutedWrite;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.mongodb.core.MongoTemplate;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.MessageListenerContainer;
import org.springframework.kafka.support.KafkaHeaders;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;

/**
 * The acceptance test: an embedded Kafka broker, the testkit's 5-shard cluster, and the same small Spring Boot
 * application twice, with and without the guard, measured side by side.
 *
 * <p>Each run: (A) 1,000 records in one poll, no stall: mongos-to-shard round trips of the listener's bulk.
 * (B) 1,000 more records while shard 0 stalls every write uninterruptibly for longer than the socket timeout:
 * every record must end in MongoDB or on the dead-letter topic, copies on the stalled shard are counted, and the
 * consumer must never be thrown out of its group.
 */
class StoreInventoryKafkaEndToEndTest {
    private static final int RECORDS = 1000;
    /**
     * Long enough for the unstalled 1,000-write bulk on the in-process 5-shard emulator (a few hundred ms on a quiet
     * 2-core machine, more under load), short against the stall: phase A must not time out, phase B must.
     */
    private static final int SOCKET_TIMEOUT_MS = 1000;
    /** 1 guarded bulk (3 x 1,000 ms + waits) + 1,000 dead-letter sends (5 ms each) fit: about 10.3 s. */
    private static final int MAX_POLL_INTERVAL_MS = 15000;

    /** Uninterruptible, well past the guard's first send and its gate (about 1.1 s): the copy is still running. */
    private static final Duration STALL = Duration.ofMillis(4000);

    private static EmulatedShardedCluster cluster;
    private static EmbeddedKafkaKraftBroker kafka;
    /** The test's own client (no socket timeout) for checks, so the checks never time out themselves. */
    private static MongoClient checker;

    private static final Map<String, Run> RESULTS = new HashMap<>();

    @BeforeAll
    static void start() {
        System.setProperty("org.springframework.boot.logging.LoggingSystem", "none");
        cluster = EmulatedCluster.sharded().shards(5).start();
        for (String db : List.of("guarded", "plain")) {
            cluster.shardCollection(
                    db + ".storeInventory", ShardKey.of(new BsonDocument("_id", new BsonString("hashed"))));
        }
        kafka = new EmbeddedKafkaKraftBroker(
                1, 1, "inventory-guarded", "inventory-guarded.DLT", "inventory-plain", "inventory-plain.DLT");
        kafka.brokerProperty("group.initial.rebalance.delay.ms", "0");
        kafka.afterPropertiesSet();
        checker = MongoClients.create(cluster.connectionString());
    }

    @AfterAll
    static void stop() {
        RESULTS.forEach((name, run) -> System.out.println("e2e " + name + ": " + run));
        if (checker != null) {
            checker.close();
        }
        if (kafka != null) {
            kafka.destroy();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void guardedApplication_oneRoundPerBatch_oneCopyUnderAStall_everyRecordAccountedFor_noRebalance() throws Exception {
        Run run = run("guarded", true);
        RESULTS.put("guarded", run);

        assertThat(run.batchSizes).contains(RECORDS);
        assertThat(run.childBatchesOfTheBatch).isLessThanOrEqualTo(5);
        assertThat(run.lost).isEmpty();
        // Every record is in MongoDB once or dead-lettered: the stalled copy either applies its writes when the stall
        // ends or, as mongod does at the interrupt point after it, stops at its expired deadline (MaxTimeMSExpired,
        // src/mongo/db/ops/write_ops_exec.cpp) with those writes not applied; they were dead-lettered as UNKNOWN.
        assertThat(run.documents + run.deadLetteredNotInMongo).isEqualTo(2 * RECORDS);
        // One server copy per listener call on the stalled shard, never a second copy of a write: 1 when the phase's
        // records came as one poll (as they do here), and never more at once than calls.
        assertThat(run.copiesOnStalledShard).isEqualTo(run.phaseBBatches.size());
        assertThat(run.maxConcurrentCopiesOnStalledShard)
                .isEqualTo(run.phaseBBatches.size() == 1 ? 1 : run.maxConcurrentCopiesOnStalledShard)
                .isLessThanOrEqualTo(run.phaseBBatches.size());
        // mongos answers the round at its own deadline (below the socket timeout): the other shards' child batches
        // applied, the stalled shard's failed with MaxTimeMSExpired (src/mongo/s/async_requests_sender.cpp,
        // src/mongo/s/write_ops/batch_write_exec.cpp), which does not prove the shard did not apply them; the same
        // copy resent at once got the same answer. Those writes are dead-lettered as UNKNOWN and settleable, with
        // mongos' reason (this application's handler does not settle; the stalled copy applies the statement it holds
        // when the stall ends and stops at its expired deadline before the next).
        assertThat(run.deadLettered).isPositive().isLessThanOrEqualTo(RECORDS);
        assertThat(run.deadLetterReasons)
                .allMatch(reason -> reason.contains("not applied")
                        && reason.contains("UNKNOWN settleable")
                        && reason.contains("mongos answered MaxTimeMSExpired")
                        && reason.contains("may still apply the write or have applied it"));
        assertThat(run.partitionsRevoked + run.partitionsLost + run.consumersStopped)
                .isZero();
        assertThat(run.longestListenerCall).isLessThan(Duration.ofMillis(MAX_POLL_INTERVAL_MS));
    }

    @Test
    void plainApplication_showsTheSeedsFailureModes() throws Exception {
        Run run = run("plain", false);
        RESULTS.put("plain", run);

        assertThat(run.batchSizes).contains(RECORDS);
        assertThat(run.childBatchesOfTheBatch).isGreaterThan(700); // ~800 = 1 + 999 x 4/5
        assertThat(run.maxConcurrentCopiesOnStalledShard).isGreaterThan(1);
        assertThat(run.lost).isEmpty();
    }

    @Test
    void guardedApplication_whoseRetryBudgetDoesNotFitThePollInterval_failsAtStartup_withTheNumbers() {
        SpringApplicationBuilder app = new SpringApplicationBuilder(InventoryApplication.class)
                .properties(
                        "spring.main.banner-mode=off",
                        "app.topic=inventory-budget",
                        "app.socket-timeout-ms=" + SOCKET_TIMEOUT_MS,
                        "spring.mongodb.uri=" + cluster.connectionString() + "?socketTimeoutMS=" + SOCKET_TIMEOUT_MS,
                        "spring.kafka.bootstrap-servers=" + kafka.getBrokersAsString(),
                        "spring.kafka.consumer.max-poll-records=" + RECORDS,
                        "spring.mongodb.database=budget",
                        "spring.kafka.consumer.properties.max.poll.interval.ms=4000", // 1 bulk + 1,000 dead-letter
                        // sends do not fit
                        "spring.kafka.listener.type=batch");

        assertThatThrownBy(app::run)
                .rootCause()
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("retry budget exceeded")
                .hasMessageContaining("max.poll.interval.ms (4000 ms)")
                .hasMessageContaining("batch listener: the 1000 records of a poll are one guarded bulk");
    }

    private Run run(String name, boolean guarded) throws Exception {
        String topic = "inventory-" + name;
        String namespace = name + ".storeInventory";
        Predicate<ReceivedCommand> stalledShardWrites =
                c -> c.namespace().equals(namespace) && c.commandName().equals("update");
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(InventoryApplication.class)
                .properties(
                        "spring.main.banner-mode=off",
                        "app.topic=" + topic,
                        "app.socket-timeout-ms=" + SOCKET_TIMEOUT_MS,
                        "mongo.write-guard.enabled=" + guarded,
                        "mongo.write-guard.retry.max-attempts=3",
                        "mongo.write-guard.retry.initial-backoff=20ms",
                        "mongo.write-guard.retry.max-backoff=100ms",
                        "mongo.write-guard.retry.gate-grace=50ms",
                        "spring.mongodb.uri=" + cluster.connectionString() + "?socketTimeoutMS=" + SOCKET_TIMEOUT_MS
                                + "&serverSelectionTimeoutMS=5000",
                        "spring.mongodb.database=" + name,
                        "spring.kafka.bootstrap-servers=" + kafka.getBrokersAsString(),
                        "spring.kafka.consumer.group-id=" + name,
                        "spring.kafka.consumer.auto-offset-reset=earliest",
                        "spring.kafka.consumer.max-poll-records=" + RECORDS,
                        // Each phase's records are in the log before the container resumes: fetch them as one poll.
                        "spring.kafka.consumer.fetch-min-size=1MB",
                        "spring.kafka.consumer.fetch-max-wait=300ms",
                        "spring.kafka.consumer.properties.max.poll.interval.ms=" + MAX_POLL_INTERVAL_MS,
                        "spring.kafka.consumer.properties.heartbeat.interval.ms=500",
                        "spring.kafka.listener.type=batch",
                        "spring.kafka.listener.poll-timeout=100ms",
                        // Dead-lettering waits for each send's acknowledgement in the consumer thread: keep one send
                        // short.
                        "spring.kafka.producer.acks=1",
                        "spring.kafka.producer.properties.enable.idempotence=false",
                        "spring.kafka.producer.properties.linger.ms=0")
                .run()) {
            InventoryApplication app = context.getBean(InventoryApplication.class);
            assertThat(context.getBean(MongoTemplate.class) instanceof GuardedMongoTemplate)
                    .isEqualTo(guarded);
            MongoCollection<Document> collection = checker.getDatabase(name).getCollection("storeInventory");
            @SuppressWarnings("unchecked")
            KafkaTemplate<Object, Object> producer = context.getBean(KafkaTemplate.class);
            MessageListenerContainer container =
                    context.getBean(KafkaListenerEndpointRegistry.class).getListenerContainer("inventory");
            Run run = new Run();

            // (A) 1,000 records, one poll, no stall.
            List<StoreInventory> phaseA = items(0, 1);
            startPaused(app, container);
            produce(producer, topic, phaseA);
            cluster.routing().reset();
            resumeAndAwait(container, () -> collection.countDocuments() >= RECORDS);
            run.childBatchesOfTheBatch = cluster.routing().writes(namespace).stream()
                    .filter(w -> w.writes() == RECORDS)
                    .mapToLong(RoutedWrite::childBatches)
                    .max()
                    .orElse(-1);

            run.phaseADeadLettered = deadLetters(topic).size();
            run.phaseABatches = new ArrayList<>(app.batchSizes);

            // (B) 1,000 more records while shard 0 stalls every write past the socket timeout.
            List<StoreInventory> phaseB = items(RECORDS, 2);
            produce(producer, topic, phaseB);
            cluster.truth().reset();
            int batchesBefore = app.listenerTimes.size();
            long phaseBStarted = System.nanoTime();
            try (StallHandle stall = cluster.shard(0).stall(Stall.uninterruptible(namespace, STALL))) {
                resumeAndAwait(
                        container,
                        () -> app.listenerTimes.size() > batchesBefore
                                && deadLetters(topic).size() + appliedOf(collection, phaseB) >= RECORDS);
                run.phaseB = Duration.ofNanos(System.nanoTime() - phaseBStarted);
                run.phaseBBatches = app.batchSizes.subList(batchesBefore, app.batchSizes.size());
            }
            run.maxConcurrentCopiesOnStalledShard = cluster.shard(0).truth().maxConcurrentCopies(stalledShardWrites);
            run.copiesOnStalledShard =
                    cluster.shard(0).truth().copies(stalledShardWrites).size();
            assertThat(cluster.shard(0).truth().awaitIdle(stalledShardWrites, Duration.ofSeconds(20)))
                    .isTrue();

            Map<String, String> deadLettered = deadLetters(topic);
            Set<String> inMongo = new HashSet<>();
            for (Document doc : collection.find()) {
                Document id = doc.get("_id", Document.class);
                inMongo.add(id.getString("productId") + "|" + id.getString("storeId") + "|" + doc.getInteger("qty"));
            }
            List<StoreInventory> produced = new ArrayList<>(phaseA);
            produced.addAll(phaseB);
            for (StoreInventory item : produced) {
                if (!inMongo.contains(item.format()) && !deadLettered.containsKey(item.format())) {
                    run.lost.add(item.format());
                }
            }
            run.documents = collection.countDocuments();
            run.deadLetteredNotInMongo = deadLettered.keySet().stream()
                    .filter(k -> !inMongo.contains(k))
                    .count();
            run.deadLettered = deadLettered.size();
            run.deadLetterReasons =
                    new HashSet<>(deadLettered.values()).stream().limit(2).toList();
            run.batchSizes = app.batchSizes;
            run.partitionsRevoked = app.partitionsRevoked.get();
            run.partitionsLost = app.partitionsLost.get();
            run.consumersStopped = app.consumersStopped.get();
            run.longestListenerCall =
                    app.listenerTimes.stream().max(Duration::compareTo).orElse(Duration.ZERO);
            app.running.put("inventory", false);
            return run;
        }
    }

    private static List<StoreInventory> items(int from, int qty) {
        List<StoreInventory> items = new ArrayList<>();
        for (int i = from; i < from + RECORDS; i++) {
            items.add(new StoreInventory(new StoreInventory.InventoryId("p" + i, "s" + (i % 7)), qty));
        }
        return items;
    }

    private static void produce(KafkaTemplate<Object, Object> producer, String topic, List<StoreInventory> items) {
        items.forEach(item -> producer.send(topic, item.format()));
        producer.flush();
    }

    /** Starts the container paused and waits for its partition, so each phase's records arrive as one poll. */
    private static void startPaused(InventoryApplication app, MessageListenerContainer container) throws Exception {
        app.running.put("inventory", true);
        container.pause();
        container.start();
        await(() -> container.getAssignedPartitions() != null
                && !container.getAssignedPartitions().isEmpty()
                && container.isContainerPaused());
    }

    /** Resumes the container until {@code done}, then pauses it again (the consumer stays in its group throughout). */
    private static void resumeAndAwait(MessageListenerContainer container, Check done) throws Exception {
        container.resume();
        await(done);
        container.pause();
        await(container::isContainerPaused);
    }

    private static void await(Check done) throws Exception {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!done.ok()) {
            assertThat(System.nanoTime() - until)
                    .as("timed out waiting for the listener")
                    .isNegative();
            Thread.sleep(20);
        }
    }

    private static long appliedOf(MongoCollection<Document> collection, List<StoreInventory> items) {
        return collection.countDocuments(new Document("qty", items.get(0).qty()));
    }

    /** The dead-letter topic, read to its end: record value -> the exception message header (the reason). */
    private static Map<String, String> deadLetters(String topic) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.getBrokersAsString());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        Map<String, String> result = new HashMap<>();
        TopicPartition partition = new TopicPartition(topic + ".DLT", 0);
        try (KafkaConsumer<String, String> consumer =
                new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            long end = consumer.endOffsets(List.of(partition)).get(partition);
            while (consumer.position(partition) < end) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    Header reason = record.headers().lastHeader(KafkaHeaders.DLT_EXCEPTION_MESSAGE);
                    result.put(
                            record.value(), reason == null ? "" : new String(reason.value(), StandardCharsets.UTF_8));
                }
            }
        }
        return result;
    }

    @FunctionalInterface
    private interface Check {
        boolean ok() throws Exception;
    }

    private static final class Run {
        long childBatchesOfTheBatch;
        int maxConcurrentCopiesOnStalledShard;
        int copiesOnStalledShard;
        long documents;
        int deadLettered;
        long deadLetteredNotInMongo;
        List<String> deadLetterReasons = List.of();
        List<String> lost = new ArrayList<>();
        List<Integer> batchSizes = List.of();
        int partitionsRevoked;
        int partitionsLost;
        int consumersStopped;
        Duration longestListenerCall = Duration.ZERO;
        Duration phaseB = Duration.ZERO;
        List<Integer> phaseBBatches = List.of();
        List<Integer> phaseABatches = List.of();
        int phaseADeadLettered;

        @Override
        public String toString() {
            return "childBatches(1000-record bulk)=" + childBatchesOfTheBatch + ", maxConcurrentCopies(stalled shard)="
                    + maxConcurrentCopiesOnStalledShard + ", copies(stalled shard)=" + copiesOnStalledShard
                    + ", documents=" + documents + ", deadLettered=" + deadLettered + " (" + deadLetteredNotInMongo
                    + " not in MongoDB)"
                    + ", lost=" + lost.size() + ", batches=" + batchSizes + " (phase A: " + phaseABatches + ", "
                    + phaseADeadLettered + " dead-lettered; phase B: " + phaseBBatches + ")" + ", revoked="
                    + partitionsRevoked + ", lost partitions="
                    + partitionsLost + ", consumersStopped=" + consumersStopped + ", longestListenerCall="
                    + longestListenerCall.toMillis()
                    + " ms, phase B until every record was in MongoDB or dead-lettered=" + phaseB.toMillis()
                    + " ms, reasons=" + deadLetterReasons;
        }
    }
}
