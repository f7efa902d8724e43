package io.github.mongowriteguard.benchmarks.lab;

import io.github.mongowriteguard.kafka.connect.ConnectHarness;
import io.github.mongowriteguard.kafka.connect.RecordCopies;
import io.github.mongowriteguard.kafka.connect.RecordLedger;
import io.github.mongowriteguard.testkit.sharding.RoutedWrite;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.function.Predicate;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.bson.BsonDocument;

/**
 * Kafka Connect sinks on one topic: a KRaft broker and a Connect cluster of 2 workers in process (the Kafka Connect
 * module's test harness), the emulated 5-shard cluster behind one mongos, and three sinks consuming the same records
 * into their own databases one after the other: the official {@code MongoSinkConnector} with
 * {@code bulk.write.ordered=true} (its default) and {@code false}, and the guarded sink. Each record is an {@code $inc}
 * upsert of one of {@code keys} keys that also counts its own applications in the key's document, so the documents
 * and the dead-letter queue say per record whether it was lost, applied twice, or applied and dead-lettered. The
 * fault: the next {@code lostReplies} {@code update} replies at mongos are lost (the command applies, the connection
 * closes) as each sink starts.
 */
final class ConnectSinks {
    static final String TOPIC = "lab-events";
    static final int PARTITIONS = 4;
    static final int SHARDS = 5;

    /** The run's parameters. */
    record Settings(int records, int keys, int lostReplies) {
        static final Settings DEFAULT = new Settings(100_000, 1_000, 10);
    }

    /** The three sinks, in the order they run. */
    enum Sink {
        OFFICIAL_ORDERED("official-ordered", ConnectHarness.OFFICIAL, true),
        OFFICIAL_UNORDERED("official-unordered", ConnectHarness.OFFICIAL, false),
        GUARDED("guarded", ConnectHarness.GUARDED, true);

        final String label;
        final String connectorClass;
        final boolean ordered;

        Sink(String label, String connectorClass, boolean ordered) {
            this.label = label;
            this.connectorClass = connectorClass;
            this.ordered = ordered;
        }
    }

    /**
     * One sink's run.
     *
     * @param roundTrips          mongos-to-shard child batches of the sink's collection (the emulator's routing count)
     * @param serverCopies        distinct {@code (lsid, txnNumber)} the shards ran on the sink's collection
     * @param maxCopiesAtOnce     the most server copies of one record's write running at once on the shards
     *                            ({@code RecordCopies})
     * @param deadLettered        distinct records in the sink's dead-letter queue
     * @param appliedDeadLettered of those, records applied all the same
     */
    record Row(
            String sink,
            String connectorClass,
            boolean ordered,
            long roundTrips,
            double seconds,
            double recordsPerSecond,
            int serverCopies,
            int maxCopiesAtOnce,
            int lost,
            int appliedTwice,
            int deadLettered,
            int appliedDeadLettered) {
        Map<String, Object> toJson() {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("sink", sink);
            json.put("connectorClass", connectorClass);
            json.put("bulkWriteOrdered", ordered);
            json.put("roundTrips", roundTrips);
            json.put("seconds", Formula.round1(seconds));
            json.put("recordsPerSecond", Math.round(recordsPerSecond));
            json.put("serverCopies", serverCopies);
            json.put("maxCopiesAtOnce", maxCopiesAtOnce);
            json.put("lost", lost);
            json.put("appliedTwice", appliedTwice);
            json.put("deadLettered", deadLettered);
            json.put("appliedDeadLettered", appliedDeadLettered);
            return json;
        }
    }

    /** What the run found. */
    record Result(Settings settings, List<Row> rows) {
        Map<String, Object> toJson() {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("records", settings.records());
            json.put("keys", settings.keys());
            json.put("partitions", PARTITIONS);
            json.put("shards", SHARDS);
            json.put("lostReplies", settings.lostReplies());
            json.put("sinks", rows.stream().map(Row::toJson).toList());
            return json;
        }

        void print(PrintStream out) {
            out.printf(
                    "%nKafka Connect sinks: %,d records ($inc upserts over %,d keys, %d partitions), 2 workers, %d hashed"
                            + " shards; the next %d update replies at mongos lost as each sink starts%n",
                    settings.records(), settings.keys(), PARTITIONS, SHARDS, settings.lostReplies());
            out.printf(
                    "%-20s %12s %10s %9s %14s %6s %14s %14s %18s%n",
                    "sink",
                    "round trips",
                    "records/s",
                    "seconds",
                    "server copies",
                    "lost",
                    "applied twice",
                    "dead-lettered",
                    "applied+DLQ'd");
            for (Row row : rows) {
                out.printf(
                        "%-20s %12d %10.0f %9.1f %14d %6d %14d %14d %18d%n",
                        row.sink(),
                        row.roundTrips(),
                        row.recordsPerSecond(),
                        row.seconds(),
                        row.serverCopies(),
                        row.lost(),
                        row.appliedTwice(),
                        row.deadLettered(),
                        row.appliedDeadLettered());
            }
            out.println("round trips: mongos-to-shard child batches; server copies: distinct (lsid, txnNumber) on the"
                    + " shards; applied+DLQ'd: in the dead-letter queue though applied; records/s: from the"
                    + " connector's start to every offset committed, one sink at a time on this machine");
        }
    }

    private ConnectSinks() {}

    static long units(Settings settings) {
        return 1 + Sink.values().length;
    }

    static Result run(Settings settings, Progress progress) throws Exception {
        progress.phase("connect: a KRaft broker, 2 Connect workers, %d emulated shards", SHARDS);
        List<Row> rows = new ArrayList<>();
        try (ConnectHarness harness = startQuietly()) {
            harness.connect.kafka().createTopic(TOPIC, PARTITIONS);
            produce(harness, settings);
            progress.step("connect: %,d records produced", settings.records());
            for (Sink sink : Sink.values()) {
                progress.phase("connect: %s sink, %,d records", sink.label, settings.records());
                rows.add(run(harness, sink, settings));
                progress.step("connect: %s sink", sink.label);
            }
        }
        return new Result(settings, rows);
    }

    /**
     * The harness, with stdout sent to stderr while it starts: Kafka's storage formatter prints a line to stdout, which
     * carries only the tables or the one JSON object.
     */
    private static ConnectHarness startQuietly() {
        PrintStream out = System.out;
        System.setOut(System.err);
        try {
            return new ConnectHarness();
        } finally {
            System.setOut(out);
        }
    }

    /** Record {@code r}: key {@code k<r mod keys>}, in the key's partition, so each key's records stay in order. */
    private static void produce(ConnectHarness harness, Settings settings) throws Exception {
        // One request in flight: the idempotent producer stays in order, and on a loaded machine a retried batch
        // cannot arrive behind a later one (the broker then refuses every later batch with OutOfOrderSequenceException
        // until they expire, as a CI run saw).
        try (KafkaProducer<byte[], byte[]> producer = harness.connect
                .kafka()
                .createProducer(Map.of("linger.ms", 5, "max.in.flight.requests.per.connection", 1))) {
            // in chunks, each flushed and checked: a loaded machine's broker would let a queue of 100,000 expire
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int r = 0; r < settings.records(); r++) {
                int key = r % settings.keys();
                sent.add(producer.send(new ProducerRecord<>(
                        TOPIC,
                        key % PARTITIONS,
                        ("k" + key).getBytes(StandardCharsets.UTF_8),
                        RecordLedger.event("k" + key, r).getBytes(StandardCharsets.UTF_8))));
                if (sent.size() == 2_000 || r == settings.records() - 1) {
                    producer.flush();
                    for (Future<RecordMetadata> each : sent) {
                        each.get(); // a record the broker did not take fails the run here
                    }
                    sent.clear();
                }
            }
        }
        long inTopic = 0;
        for (int p = 0; p < PARTITIONS; p++) {
            inTopic += harness.connect.kafka().endOffset(new TopicPartition(TOPIC, p));
        }
        if (inTopic != settings.records()) {
            throw new IllegalStateException(
                    "the topic holds " + inTopic + " records, not the " + settings.records() + " produced");
        }
    }

    private static Row run(ConnectHarness harness, Sink sink, Settings settings) throws Exception {
        String database = "lab-" + sink.label;
        String namespace = database + ".events";
        String dlq = database + "-dlq";
        harness.shard(namespace);
        Map<String, String> config = harness.sink(sink.connectorClass, TOPIC, database, dlq);
        config.remove("max.batch.size"); // the official default: a batch is the whole poll
        config.put("bulk.write.ordered", Boolean.toString(sink.ordered));
        harness.mongo.routing().reset();
        harness.mongo.truth().reset();
        var mongos = harness.mongo.mongos(0);
        if (settings.lostReplies() > 0) {
            mongos.loseReplies(settings.lostReplies(), "update");
        }
        long start = System.nanoTime();
        try {
            harness.start(sink.label, config);
            harness.awaitCommitted(sink.label, TOPIC, PARTITIONS, Duration.ofSeconds(120 + settings.records() / 50));
        } finally {
            mongos.stopLosingReplies();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        harness.connect.deleteConnector(sink.label);
        long roundTrips = harness.mongo.routing().writes(namespace).stream()
                .mapToLong(RoutedWrite::childBatches)
                .sum();
        Predicate<ReceivedCommand> writes = c -> namespace.equals(c.namespace()) && c.hasTxnNumber();
        int copies = harness.mongo.truth().copies(writes).size();
        List<BsonDocument> documents = harness.documents(database);
        int dead = harness.deadLetterCount(dlq);
        Set<Long> deadLettered = RecordLedger.numbers(harness.deadLetteredValues(dlq, dead));
        RecordLedger ledger = RecordLedger.of(settings.records(), documents, deadLettered);
        return new Row(
                sink.label,
                sink.connectorClass,
                sink.ordered,
                roundTrips,
                seconds,
                settings.records() / seconds,
                copies,
                RecordCopies.maxAtOnce(harness.mongo.truth(), namespace).max(),
                ledger.lost(),
                ledger.appliedTwice(),
                ledger.deadLettered(),
                ledger.appliedDeadLettered());
    }
}
