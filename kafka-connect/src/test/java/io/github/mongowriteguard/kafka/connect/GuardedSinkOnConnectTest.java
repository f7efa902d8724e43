package io.github.mongowriteguard.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The official sink and the guarded sink on one Connect cluster of 2 workers, consuming the same topics into two
 * databases of the emulated 5-shard cluster.
 */
class GuardedSinkOnConnectTest {
    private static final Duration COMMIT_TIMEOUT = Duration.ofSeconds(60);
    private static ConnectHarness harness;

    @BeforeAll
    static void start() {
        harness = new ConnectHarness();
    }

    @AfterAll
    static void stop() {
        if (harness != null) {
            harness.close();
        }
    }

    /** One event of a key, produced to the key's partition. */
    record Event(int partition, String key, String json) {}

    /**
     * Upserts by {@code $inc}, replacements, deletes and repeated keys over 30 keys on 3 partitions, and one event that
     * cannot be processed; with {@code writePoison}, key 7 stops half-way with a write the server refuses (an
     * {@code $inc} of a string), followed in its partition by other keys' events.
     */
    static List<Event> mixedEvents(boolean writePoison) {
        Random random = new Random(39);
        List<List<Event>> perKey = new ArrayList<>();
        for (int k = 0; k < 30; k++) {
            List<Event> events = new ArrayList<>();
            String id = "k" + k;
            int count = writePoison && k == 7 ? 4 : 10;
            for (int i = 0; i < count; i++) {
                int dice = random.nextInt(10);
                String op = dice < 6 ? "inc" : dice < 8 ? "replace" : "delete";
                events.add(event(k, id, op, 1 + random.nextInt(3)));
            }
            if (writePoison && k == 7) { // a replacement makes v a string, then an $inc of v: the key's last events
                events.add(event(k, id, "replace", 5));
                events.add(event(k, id, "poison", 0));
            }
            if (k == 11) { // an event the write model strategy cannot process
                events.add(event(k, id, "bogus", 0));
            }
            perKey.add(events);
        }
        // interleave the keys as producers do, each key's events in order
        List<Event> all = new ArrayList<>();
        for (int i = 0; i < 11; i++) {
            for (List<Event> events : perKey) {
                if (i < events.size()) {
                    all.add(events.get(i));
                }
            }
        }
        return all;
    }

    private static Event event(int k, String id, String op, int n) {
        return new Event(
                k % 3,
                id,
                "{\"_id\": \"" + id + "\", \"op\": \"" + op + "\", \"n\": " + n + ", \"v\": \"text-" + n + "\"}");
    }

    private static void produce(String topic, List<Event> events) {
        for (Event e : events) {
            harness.connect.kafka().produce(topic, e.partition(), e.key(), e.json());
        }
    }

    /** Where the events that fail are: "partition@offset" per event whose op is poison or bogus. */
    private static Set<String> failingOrigins(List<Event> events) {
        Map<Integer, Integer> offsets = new HashMap<>();
        Set<String> origins = new TreeSet<>();
        for (Event e : events) {
            int offset = offsets.merge(e.partition(), 1, Integer::sum) - 1;
            if (e.json().contains("\"poison\"") || e.json().contains("\"bogus\"")) {
                origins.add(e.partition() + "@" + offset);
            }
        }
        return origins;
    }

    /** The documents the events leave when each key's events apply in order (a poison or bogus event changes nothing). */
    static List<BsonDocument> model(List<Event> events) {
        Map<String, BsonDocument> documents = new java.util.TreeMap<>();
        for (Event e : events) {
            BsonDocument value = BsonDocument.parse(e.json());
            String id = e.key();
            switch (value.getString("op").getValue()) {
                case "inc" -> {
                    BsonDocument doc = documents.computeIfAbsent(id, k -> new BsonDocument("_id", new BsonString(k)));
                    long n = doc.containsKey("n") ? doc.getNumber("n").longValue() : 0;
                    doc.put("n", new org.bson.BsonInt64(n + value.getInt32("n").getValue()));
                }
                case "replace" ->
                    documents.put(
                            id,
                            new BsonDocument("_id", new BsonString(id))
                                    .append(
                                            "n",
                                            new org.bson.BsonInt64(
                                                    value.getInt32("n").getValue()))
                                    .append("v", value.get("v")));
                case "delete" -> documents.remove(id);
                default -> {}
            }
        }
        return new ArrayList<>(documents.values());
    }

    /** Documents with every number as a long, so that the model and the server compare. */
    static List<BsonDocument> normalized(List<BsonDocument> documents) {
        List<BsonDocument> result = new ArrayList<>();
        for (BsonDocument d : documents) {
            BsonDocument copy = d.clone();
            if (copy.containsKey("n") && copy.get("n").isNumber()) {
                copy.put("n", new org.bson.BsonInt64(copy.getNumber("n").longValue()));
            }
            result.add(copy);
        }
        return result;
    }

    /** A topic of 3 partitions holding {@code events}, and the official and guarded sinks' sharded collections. */
    private static void prepareBoth(String topic, List<Event> events) {
        harness.connect.kafka().createTopic(topic, 3);
        harness.shard(topic + "-official.events");
        harness.shard(topic + "-guarded.events");
        produce(topic, events);
    }

    /** Runs the official sink (its default, ORDERED) and the guarded sink on a new topic of {@code events}. */
    private static void runBoth(String topic, List<Event> events) throws Exception {
        prepareBoth(topic, events);
        harness.start(
                topic + "-official",
                harness.sink(ConnectHarness.OFFICIAL, topic, topic + "-official", topic + "-dlq-official"));
        harness.start(
                topic + "-guarded",
                harness.sink(ConnectHarness.GUARDED, topic, topic + "-guarded", topic + "-dlq-guarded"));
        harness.awaitCommitted(topic + "-official", topic, 3, COMMIT_TIMEOUT);
        harness.awaitCommitted(topic + "-guarded", topic, 3, COMMIT_TIMEOUT);
    }

    @Test
    void sameDocumentsAndDeadLettersAsTheOfficialSink() throws Exception {
        List<Event> events = mixedEvents(false);
        runBoth("mixed", events);

        List<BsonDocument> expected = model(events);
        assertThat(expected).hasSizeGreaterThan(10);
        assertThat(normalized(harness.documents("mixed-official")))
                .as("official")
                .isEqualTo(expected);
        assertThat(normalized(harness.documents("mixed-guarded"))).as("guarded").isEqualTo(expected);
        Set<String> failing = failingOrigins(events);
        assertThat(failing).hasSize(1);
        assertThat(harness.deadLettered("mixed-dlq-guarded", 1)).isEqualTo(failing);
        assertThat(harness.deadLettered("mixed-dlq-official", 1)).isEqualTo(failing);
    }

    @Test
    void aWriteTheServerRefuses_isDeadLetteredAlone_theRestOfItsBatchApplied() throws Exception {
        List<Event> events = mixedEvents(true);
        runBoth("poison", events);

        List<BsonDocument> expected = model(events);
        Set<String> failing = failingOrigins(events);
        assertThat(failing).hasSize(2);
        assertThat(normalized(harness.documents("poison-guarded")))
                .as("guarded")
                .isEqualTo(expected);
        assertThat(harness.deadLettered("poison-dlq-guarded", failing.size())).isEqualTo(failing);
        assertThat(harness.deadLetterCount("poison-dlq-guarded")).isEqualTo(failing.size());
        // the official ORDERED bulk stops at the refused write and dead-letters the rest of its batch, which it never
        // wrote: records that did not fail are in its DLQ and missing from its documents
        int officialDeadLetters = harness.deadLetterCount("poison-dlq-official");
        assertThat(officialDeadLetters).isGreaterThan(failing.size());
        assertThat(harness.deadLettered("poison-dlq-official", officialDeadLetters))
                .containsAll(failing);
        assertThat(normalized(harness.documents("poison-official")))
                .as("official")
                .isNotEqualTo(expected);
    }

    /** {@code perKey} {@code $inc} of 1 on each of {@code keys} keys, spread over {@code partitions} partitions. */
    static List<Event> increments(int keys, int perKey, int partitions) {
        List<Event> events = new ArrayList<>();
        for (int i = 0; i < perKey; i++) {
            for (int k = 0; k < keys; k++) {
                String id = "k" + k;
                events.add(new Event(k % partitions, id, "{\"_id\": \"" + id + "\", \"op\": \"inc\", \"n\": 1}"));
            }
        }
        return events;
    }

    /** At most 1 server copy of each record's write ran at a time on the shards (and the records were written). */
    private static void assertCopiesAtOnce(String database) {
        var copies = RecordCopies.maxAtOnce(harness.mongo.truth(), database + ".events");
        assertThat(copies.max())
                .as("%s: server copies of one record's write at once (%s)", database, copies)
                .isEqualTo(1);
    }

    /** Keys whose counter is not {@code expected}: missing (lost) or above it (applied twice). */
    static Map<String, Long> wrongCounts(List<BsonDocument> documents, int keys, long expected) {
        Map<String, Long> wrong = new java.util.TreeMap<>();
        Map<String, Long> counts = new HashMap<>();
        for (BsonDocument d : documents) {
            counts.put(d.getString("_id").getValue(), d.getNumber("n").longValue());
        }
        for (int k = 0; k < keys; k++) {
            long n = counts.getOrDefault("k" + k, 0L);
            if (n != expected) {
                wrong.put("k" + k, n);
            }
        }
        return wrong;
    }

    private static void loseRepliesAndFailWriteConcerns() {
        harness.mongo.mongos(0).loseReplies(6, "update");
        harness.mongo
                .mongos(0)
                .failCommand()
                .configure(BsonDocument.parse("{configureFailPoint: 'failCommand',"
                        + " mode: {times: 4}, data: {failCommands: ['update'], writeConcernError: {code: 64,"
                        + " codeName: 'WriteConcernFailed', errmsg: 'waiting for replication timed out',"
                        + " errInfo: {wtimeout: true}}}}"));
    }

    @Test
    void lostRepliesAndWriteConcernErrors_nothingLostNothingAppliedTwiceNothingDeadLettered() throws Exception {
        String topic = "faults";
        prepareBoth(topic, increments(30, 20, 3));
        try {
            // the official sink alone under the faults: the driver resends a lost reply once, then gives up
            loseRepliesAndFailWriteConcerns();
            harness.start(
                    "faults-official",
                    harness.sink(ConnectHarness.OFFICIAL, topic, "faults-official", "faults-dlq-official"));
            harness.awaitCommitted("faults-official", topic, 3, COMMIT_TIMEOUT);
            // then the guarded sink alone under the same faults
            harness.mongo.mongos(0).stopLosingReplies();
            loseRepliesAndFailWriteConcerns();
            harness.start(
                    "faults-guarded",
                    harness.sink(ConnectHarness.GUARDED, topic, "faults-guarded", "faults-dlq-guarded"));
            harness.awaitCommitted("faults-guarded", topic, 3, COMMIT_TIMEOUT);
        } finally {
            harness.mongo.mongos(0).stopLosingReplies();
            harness.mongo.mongos(0).failCommand().off();
        }

        assertCopiesAtOnce("faults-guarded");
        assertThat(wrongCounts(harness.documents("faults-guarded"), 30, 20))
                .as("guarded: lost or applied twice")
                .isEmpty();
        assertThat(harness.deadLetterCount("faults-dlq-guarded"))
                .as("guarded: dead-lettered")
                .isZero();
        // the official sink dead-letters whole batches after a write-concern error or a second lost reply, applied
        // records included (their counters are complete, and yet the records are in its DLQ)
        assertThat(harness.deadLetterCount("faults-dlq-official"))
                .as("official: dead-lettered")
                .isPositive();
    }

    /** A topic of 4 partitions holding {@code perKey} {@code $inc}s of {@code keys} keys, and its sharded collection. */
    private static void prepareIncrements(String topic, int keys, int perKey) {
        harness.connect.kafka().createTopic(topic, 4);
        harness.shard(topic + "-guarded.events");
        produce(topic, increments(keys, perKey, 4));
    }

    @Test
    void aWorkerStoppedMidBatch_nothingLostNothingAppliedTwice() throws Exception {
        String topic = "stop";
        prepareIncrements(topic, 40, 15);
        List<io.github.mongowriteguard.testkit.stall.StallHandle> stalls = new ArrayList<>();
        for (int shard = 0; shard < 5; shard++) { // every write waits, so that a stop finds a put under way
            stalls.add(harness.mongo
                    .shard(shard)
                    .stall(io.github.mongowriteguard.testkit.stall.Stall.interruptible(
                            "stop-guarded.events", Duration.ofMillis(150))));
        }
        try {
            harness.start(
                    "stop-guarded", harness.sink(ConnectHarness.GUARDED, topic, "stop-guarded", "stop-dlq-guarded"));
            java.time.Instant deadline = java.time.Instant.now().plusSeconds(30);
            while (harness.documents("stop-guarded").isEmpty()
                    && java.time.Instant.now().isBefore(deadline)) {
                Thread.sleep(50);
            }
            harness.connect.removeWorker(); // its tasks stop (a put finishes first), then move to the other worker
            harness.awaitCommitted("stop-guarded", topic, 4, COMMIT_TIMEOUT);
        } finally {
            for (var stall : stalls) {
                stall.close();
            }
            if (harness.connect.workers().size() < 2) {
                harness.connect.addWorker();
            }
        }
        assertCopiesAtOnce("stop-guarded");
        assertThat(wrongCounts(harness.documents("stop-guarded"), 40, 15))
                .as("lost or applied twice")
                .isEmpty();
        assertThat(harness.deadLetterCount("stop-dlq-guarded")).isZero();
    }

    @Test
    void aRebalanceWhileAShardStallsPastTheDeadline_nothingLostNothingAppliedTwice() throws Exception {
        String topic = "rebalance";
        prepareIncrements(topic, 40, 10);
        // one shard's writes outlive mongos' deadline (500 ms) and apply after it: UNKNOWN, settled with the same copy
        var stall = harness.mongo
                .shard(1)
                .stall(io.github.mongowriteguard.testkit.stall.Stall.uninterruptible(
                        "rebalance-guarded.events", Duration.ofMillis(800)));
        org.apache.kafka.connect.util.clusters.WorkerHandle joined = null;
        try {
            Map<String, String> config =
                    harness.sink(ConnectHarness.GUARDED, topic, "rebalance-guarded", "rebalance-dlq-guarded");
            config.put(GuardedSinkSettings.SERVER_DEADLINE_MS, "500");
            harness.start("rebalance-guarded", config);
            java.time.Instant deadline = java.time.Instant.now().plusSeconds(30);
            while (harness.documents("rebalance-guarded").isEmpty()
                    && java.time.Instant.now().isBefore(deadline)) {
                Thread.sleep(50);
            }
            joined = harness.connect.addWorker(); // a worker joins: Connect rebalances the tasks mid-batch
            Thread.sleep(2_000);
            harness.connect.removeWorker(joined); // and leaves again: they move back
            joined = null;
            stall.close();
            harness.awaitCommitted("rebalance-guarded", topic, 4, COMMIT_TIMEOUT);
        } finally {
            stall.close();
            if (joined != null) {
                harness.connect.removeWorker(joined);
            }
        }
        assertCopiesAtOnce("rebalance-guarded");
        assertThat(wrongCounts(harness.documents("rebalance-guarded"), 40, 10))
                .as("lost or applied twice")
                .isEmpty();
        assertThat(harness.deadLetterCount("rebalance-dlq-guarded")).isZero();
    }

    /** MongoDB change events (inserts, updates without the full document, deletes) over 20 keys on 3 partitions. */
    static List<Event> changeEvents() {
        Random random = new Random(3939);
        List<Event> events = new ArrayList<>();
        boolean[] exists = new boolean[20];
        for (int i = 0; i < 300; i++) {
            int k = random.nextInt(20);
            String key = "{\"_id\": \"c" + k + "\"}";
            String json;
            if (!exists[k] || random.nextInt(5) == 0) {
                json = "{\"operationType\": \"insert\", \"documentKey\": " + key + ", \"fullDocument\": {\"_id\": \"c"
                        + k + "\", \"a\": " + i + ", \"b\": \"x\"}}";
                exists[k] = true;
            } else if (random.nextInt(4) == 0) {
                json = "{\"operationType\": \"delete\", \"documentKey\": " + key + "}";
                exists[k] = false;
            } else {
                json = "{\"operationType\": \"update\", \"documentKey\": " + key
                        + ", \"updateDescription\": {\"updatedFields\": {\"a\": " + i + "}, \"removedFields\": "
                        + (random.nextBoolean() ? "[\"b\"]" : "[]") + "}}";
            }
            events.add(new Event(k % 3, "c" + k, json));
        }
        return events;
    }

    @Test
    void changeDataCaptureEvents_sameDocumentsAsTheOfficialSink() throws Exception {
        String topic = "cdc";
        prepareBoth(topic, changeEvents());
        for (String sink : List.of("official", "guarded")) {
            Map<String, String> config = harness.sink(
                    sink.equals("official") ? ConnectHarness.OFFICIAL : ConnectHarness.GUARDED,
                    topic,
                    "cdc-" + sink,
                    "cdc-dlq-" + sink);
            config.remove("writemodel.strategy");
            config.remove("document.id.strategy");
            config.put("change.data.capture.handler", "com.mongodb.kafka.connect.sink.cdc.mongodb.ChangeStreamHandler");
            harness.start("cdc-" + sink, config);
        }
        harness.awaitCommitted("cdc-official", topic, 3, COMMIT_TIMEOUT);
        harness.awaitCommitted("cdc-guarded", topic, 3, COMMIT_TIMEOUT);

        List<BsonDocument> official = harness.documents("cdc-official");
        assertThat(official).hasSizeGreaterThan(5);
        assertThat(harness.documents("cdc-guarded")).isEqualTo(official);
        assertThat(harness.deadLetterCount("cdc-dlq-guarded")).isZero();
        assertThat(harness.deadLetterCount("cdc-dlq-official")).isZero();
    }
}
