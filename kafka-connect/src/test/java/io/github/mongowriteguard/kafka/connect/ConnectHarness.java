package io.github.mongowriteguard.kafka.connect;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.Sorts;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.bson.BsonDocument;
import org.bson.BsonString;

/**
 * The real thing, in process: a KRaft Kafka broker and a Kafka Connect cluster of 2 workers in distributed mode
 * (Kafka's own {@code EmbeddedConnectCluster}), writing to the testkit's emulated 5-shard cluster; one per test class.
 * Public, in the module's test jar, for the lab's {@code connect} scenario (benchmarks).
 */
public final class ConnectHarness implements AutoCloseable {
    public static final String OFFICIAL = "com.mongodb.kafka.connect.MongoSinkConnector";
    public static final String GUARDED = GuardedMongoSinkConnector.class.getName();
    public static final ShardKey HASHED_ID = ShardKey.of(new BsonDocument("_id", new BsonString("hashed")));

    public final EmulatedShardedCluster mongo;
    public final EmbeddedConnectCluster connect;
    public final MongoClient client;

    /** On the emulated 5-shard cluster. */
    public ConnectHarness() {
        this(EmulatedCluster.sharded().shards(5));
    }

    /** On the cluster {@code mongo} starts (replicating shards, for elections). */
    public ConnectHarness(EmulatedShardedCluster.Builder mongo) {
        this.mongo = mongo.start();
        Map<String, String> workerProps = new HashMap<>();
        workerProps.put("offset.flush.interval.ms", "500");
        // no scan of the class path (slow): plugins by their ServiceLoader manifests; the official sink's jar has
        // none, so the test resources name it
        workerProps.put("plugin.discovery", "service_load");
        // a stopping worker lets a put finish and commit what it proved (docs/kafka-connect.md, worker configuration)
        workerProps.put("task.shutdown.graceful.timeout.ms", "30000");
        connect = new EmbeddedConnectCluster.Builder()
                .name("mwg-connect")
                .numWorkers(2)
                .numBrokers(1)
                .workerProps(workerProps)
                .build();
        try {
            connect.start();
        } catch (RuntimeException e) {
            this.mongo.close();
            throw e;
        }
        client = MongoClients.create(this.mongo.connectionString());
    }

    /** Shards {@code db.events} on {@code {_id: "hashed"}} over the 5 shards. */
    public void shard(String namespace) {
        mongo.shardCollection(namespace, HASHED_ID);
    }

    /** A sink's configuration: JSON values without schemas, the user's write model strategy, a DLQ. */
    public Map<String, String> sink(String connectorClass, String topic, String database, String dlq) {
        Map<String, String> config = new HashMap<>();
        config.put("connector.class", connectorClass);
        config.put("tasks.max", "2");
        config.put("topics", topic);
        config.put("connection.uri", mongo.connectionString());
        config.put("database", database);
        config.put("collection", "events");
        config.put("key.converter", "org.apache.kafka.connect.storage.StringConverter");
        config.put("value.converter", "org.apache.kafka.connect.json.JsonConverter");
        config.put("value.converter.schemas.enable", "false");
        config.put(
                "document.id.strategy", "com.mongodb.kafka.connect.sink.processor.id.strategy.ProvidedInValueStrategy");
        config.put("writemodel.strategy", EventWriteModelStrategy.class.getName());
        config.put("max.batch.size", "50");
        config.put("errors.tolerance", "all");
        config.put("errors.deadletterqueue.topic.name", dlq);
        config.put("errors.deadletterqueue.topic.replication.factor", "1");
        config.put("errors.deadletterqueue.context.headers.enable", "true");
        return config;
    }

    /** A task's configuration without Connect (a task driven by a test): connector "sink", topic "t". */
    static Map<String, String> taskConfig(String uri, String database) {
        Map<String, String> config = new HashMap<>();
        config.put("name", "sink");
        config.put("topics", "t");
        config.put("connection.uri", uri);
        config.put("database", database);
        config.put("collection", "events");
        config.put("writemodel.strategy", EventWriteModelStrategy.class.getName());
        return config;
    }

    public void start(String name, Map<String, String> config) throws InterruptedException {
        connect.configureConnector(name, config);
        connect.assertions()
                .assertConnectorAndAtLeastNumTasksAreRunning(name, 1, "the sink " + name + " did not start");
    }

    /** Waits until the sink's consumer group has committed every record of {@code topic}. */
    public void awaitCommitted(String name, String topic, int partitions, Duration timeout) throws Exception {
        Map<TopicPartition, Long> ends = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            TopicPartition tp = new TopicPartition(topic, p);
            ends.put(tp, connect.kafka().endOffset(tp));
        }
        Instant deadline = Instant.now().plus(timeout);
        Map<TopicPartition, Long> committed = Map.of();
        while (Instant.now().isBefore(deadline)) {
            committed = committed(name);
            boolean all = true;
            for (Map.Entry<TopicPartition, Long> end : ends.entrySet()) {
                all &= committed.getOrDefault(end.getKey(), -1L) >= end.getValue();
            }
            if (all) {
                return;
            }
            Thread.sleep(200);
        }
        throw new AssertionError(
                "the sink " + name + " did not commit every record in " + timeout + ": " + committed + " of " + ends);
    }

    public Map<TopicPartition, Long> committed(String name) throws Exception {
        try (Admin admin = connect.kafka().createAdminClient()) {
            Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets("connect-" + name)
                    .partitionsToOffsetAndMetadata()
                    .get();
            Map<TopicPartition, Long> result = new HashMap<>();
            offsets.forEach((tp, o) -> {
                if (o != null) {
                    result.put(tp, o.offset());
                }
            });
            return result;
        }
    }

    /** The records of a dead-letter queue, as "partition@offset" of the original record, from Connect's headers. */
    public Set<String> deadLettered(String dlq, int expected) throws Exception {
        Set<String> origins = new TreeSet<>();
        if (expected == 0) {
            return origins;
        }
        for (ConsumerRecord<byte[], byte[]> record : connect.kafka().consume(expected, 30_000, dlq)) {
            origins.add(header(record, "__connect.errors.partition") + "@" + header(record, "__connect.errors.offset"));
        }
        return origins;
    }

    /** The values of the {@code expected} records of a dead-letter queue, as the original records' JSON. */
    public List<String> deadLetteredValues(String dlq, int expected) {
        List<String> values = new ArrayList<>();
        if (expected == 0) {
            return values;
        }
        for (ConsumerRecord<byte[], byte[]> record : connect.kafka().consume(expected, 60_000, dlq)) {
            values.add(record.value() == null ? "" : new String(record.value(), StandardCharsets.UTF_8));
        }
        return values;
    }

    /** How many records a dead-letter queue holds now (0 when it was never created). */
    public int deadLetterCount(String dlq) throws Exception {
        if (connect.kafka().describeTopics(dlq).get(dlq).isEmpty()) {
            return 0;
        }
        long count = 0;
        int partitions = connect.kafka()
                .describeTopics(dlq)
                .get(dlq)
                .orElseThrow()
                .partitions()
                .size();
        for (int p = 0; p < partitions; p++) {
            count += connect.kafka().endOffset(new TopicPartition(dlq, p));
        }
        return (int) count;
    }

    private static String header(ConsumerRecord<byte[], byte[]> record, String name) {
        Header header = record.headers().lastHeader(name);
        return header == null ? "?" : new String(header.value(), StandardCharsets.UTF_8);
    }

    public List<BsonDocument> documents(String database) {
        return client.getDatabase(database)
                .getCollection("events", BsonDocument.class)
                .find()
                .sort(Sorts.ascending("_id"))
                .into(new ArrayList<>());
    }

    @Override
    public void close() {
        try {
            client.close();
            connect.stop();
        } finally {
            mongo.close();
        }
    }
}
