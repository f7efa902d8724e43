package io.github.mongowriteguard.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.sink.ErrantRecordReporter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTaskContext;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * The partitions of one put are written side by side: each partition is its own logical session, so their guarded
 * bulks need not wait for each other (Kafka orders only a partition). The shards are held on their first update until
 * one command of every partition has arrived (counted on the shards: commands running at once, never a timing); written
 * one partition after another, only one would ever arrive. A write that fails for good in one partition is dead-lettered
 * alone: the other partitions' records all apply and none of them is reported.
 *
 * <p>A task driven by the test (no Connect runtime), the real driver over real sockets to the emulated 2-shard cluster;
 * the collection is unsharded, so every bulk goes to its database's primary shard.
 */
class PartitionsSideBySideTest {
    private static final int PARTITIONS = 4;
    private static final int RECORDS_PER_PARTITION = 10;
    private static final Predicate<ReceivedCommand> UPDATES =
            c -> c.commandName().equals("update") && c.namespace().equals("side.events");

    @Test
    void aPutsPartitions_areWrittenSideBySide_andOnePartitionsFailedWriteIsDeadLetteredAlone() throws Exception {
        try (EmulatedShardedCluster mongo = EmulatedCluster.sharded().shards(2).start();
                MongoClient client = MongoClients.create(mongo.connectionString())) {
            // a document whose field v is a string: an $inc of v fails for good (TypeMismatch)
            client.getDatabase("side")
                    .getCollection("events")
                    .insertOne(new Document("_id", "bad").append("n", 0).append("v", "text"));
            List<SinkRecord> batch = new ArrayList<>();
            for (int i = 0; i < RECORDS_PER_PARTITION; i++) {
                for (int p = 0; p < PARTITIONS; p++) {
                    String key = "p" + p + "-k" + i;
                    Map<String, Object> value = p == 0 && i == 1
                            ? Map.of("_id", "bad", "op", "poison")
                            : Map.of("_id", key, "op", "inc", "n", 1);
                    batch.add(new SinkRecord("t", p, null, key, null, value, 100 + i));
                }
            }
            List<SinkRecord> reported = new CopyOnWriteArrayList<>();
            GuardedMongoSinkTask task = new GuardedMongoSinkTask();
            task.initialize(new Context(reported));
            task.start(taskConfig(mongo.connectionString()));
            List<TopicPartition> partitions = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++) {
                partitions.add(new TopicPartition("t", p));
            }
            try {
                task.open(partitions);
                int most;
                Future<Void> put;
                try (StallHandle hold0 = hold(mongo, 0);
                        StallHandle hold1 = hold(mongo, 1)) {
                    put = CompletableFuture.runAsync(() -> task.put(batch));
                    most = awaitRunning(mongo, PARTITIONS, Duration.ofSeconds(15));
                }
                put.get(60, TimeUnit.SECONDS);
                assertThat(most)
                        .as("update commands of the put running on the shards at once (one per partition when the "
                                + "partitions are written side by side; 1 when one after another)")
                        .isEqualTo(PARTITIONS);

                Map<String, Integer> counts = counts(client);
                for (int p = 0; p < PARTITIONS; p++) {
                    for (int i = 0; i < RECORDS_PER_PARTITION; i++) {
                        if (p != 0 || i != 1) {
                            assertThat(counts.get("p" + p + "-k" + i))
                                    .as("p%d-k%d applied once", p, i)
                                    .isEqualTo(1);
                        }
                    }
                }
                assertThat(reported)
                        .as("only the failed record is dead-lettered")
                        .extracting(r -> r.kafkaPartition() + "@" + r.kafkaOffset())
                        .containsExactly("0@101");
                Map<TopicPartition, OffsetAndMetadata> current = new HashMap<>();
                partitions.forEach(tp -> current.put(tp, new OffsetAndMetadata(100 + RECORDS_PER_PARTITION)));
                assertThat(task.preCommit(current))
                        .as("every partition committed to its end")
                        .isEqualTo(current);
                assertOneCopyAtOnce(mongo);
            } finally {
                task.stop();
            }
        }
    }

    /**
     * Batches cut at {@code max.batch.size} (4 records, one of each partition): the first update is refused at mongos
     * (one attempt, no settle window), so one partition's first record is left not done. Only that partition's later
     * records wait for the redelivery; the other partitions' later batches are written in the same put, and
     * {@code preCommit} commits them to their end. The partitions' next owner is delivered the batch again and writes
     * what is left: every record applied once.
     */
    @Test
    void aPartitionLeftNotDone_holdsOnlyItsOwnLaterBatches() throws Exception {
        try (EmulatedShardedCluster mongo = EmulatedCluster.sharded().shards(2).start();
                MongoClient client = MongoClients.create(mongo.connectionString())) {
            List<SinkRecord> batch = new ArrayList<>();
            for (int i = 0; i < RECORDS_PER_PARTITION; i++) {
                for (int p = 0; p < PARTITIONS; p++) {
                    String key = "p" + p + "-k" + i;
                    batch.add(
                            new SinkRecord("t", p, null, key, null, Map.of("_id", key, "op", "inc", "n", 1), 100 + i));
                }
            }
            List<SinkRecord> reported = new CopyOnWriteArrayList<>();
            GuardedMongoSinkTask task = new GuardedMongoSinkTask();
            task.initialize(new Context(reported));
            Map<String, String> config = taskConfig(mongo.connectionString());
            config.put("max.batch.size", String.valueOf(PARTITIONS));
            config.put(GuardedSinkSettings.RETRY_MAX_ATTEMPTS, "1");
            config.put(GuardedSinkSettings.SETTLE_MAX_WAIT_MS, "0");
            task.start(config);
            List<TopicPartition> partitions = new ArrayList<>();
            Map<TopicPartition, OffsetAndMetadata> current = new HashMap<>();
            for (int p = 0; p < PARTITIONS; p++) {
                partitions.add(new TopicPartition("t", p));
                current.put(partitions.get(p), new OffsetAndMetadata(100 + RECORDS_PER_PARTITION));
            }
            try {
                task.open(partitions);
                // one update refused at mongos with an error reply (the connection and the driver's pool stay, so
                // only the partition whose command it was is hit)
                mongo.mongos(0)
                        .failCommand()
                        .configure(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1},"
                                + " data: {failCommands: ['update'], errorCode: 189,"
                                + " errorLabels: ['RetryableWriteError']}}"));
                assertThatThrownBy(() -> task.put(batch)).isInstanceOf(RetriableException.class);

                Map<TopicPartition, OffsetAndMetadata> committable = task.preCommit(current);
                List<TopicPartition> held = partitions.stream()
                        .filter(tp -> committable.get(tp).offset() < 100 + RECORDS_PER_PARTITION)
                        .toList();
                assertThat(held).as("the partition whose update was refused").hasSize(1);
                assertThat(committable.get(held.get(0)).offset())
                        .as("it commits nothing: its first record is not done")
                        .isEqualTo(100);
                Map<String, Integer> counts = counts(client);
                for (TopicPartition tp : partitions) {
                    if (!tp.equals(held.get(0))) {
                        assertThat(committable.get(tp).offset())
                                .as("%s committed to its end", tp)
                                .isEqualTo(100 + RECORDS_PER_PARTITION);
                        for (int i = 0; i < RECORDS_PER_PARTITION; i++) {
                            assertThat(counts.get("p" + tp.partition() + "-k" + i))
                                    .as("p%d-k%d applied in the first put", tp.partition(), i)
                                    .isEqualTo(1);
                        }
                    }
                }

                task.close(partitions); // the partitions move: their next owner is delivered the batch again
            } finally {
                task.stop();
            }
            GuardedMongoSinkTask next = new GuardedMongoSinkTask();
            next.initialize(new Context(reported));
            config.put(GuardedSinkSettings.SETTLE_MAX_WAIT_MS, "5000");
            next.start(config);
            try {
                next.open(partitions);
                next.put(batch);
                assertThat(counts(client)).hasSize(PARTITIONS * RECORDS_PER_PARTITION);
                assertThat(counts(client).values())
                        .as("every $inc applied once")
                        .containsOnly(1);
                assertThat(next.preCommit(current)).isEqualTo(current);
                assertThat(reported).as("nothing dead-lettered").isEmpty();
                assertOneCopyAtOnce(mongo);
            } finally {
                next.stop();
            }
        }
    }

    /** Partitions side by side, yet at most 1 server copy of each record's write ran at a time. */
    private static void assertOneCopyAtOnce(EmulatedShardedCluster mongo) {
        var copies = RecordCopies.maxAtOnce(mongo.truth(), "side.events");
        assertThat(copies.max())
                .as("server copies of one record's write at once (%s)", copies)
                .isEqualTo(1);
    }

    /** Holds every update on the collection on one shard until released (or 30 s). */
    private static StallHandle hold(EmulatedShardedCluster mongo, int shard) {
        return mongo.shard(shard)
                .stall(Stall.uninterruptible("side.events", Duration.ofSeconds(30))
                        .forCommands("update"));
    }

    /** The most update commands seen running at once on the shards, waiting until {@code expected} or the bound. */
    private static int awaitRunning(EmulatedShardedCluster mongo, int expected, Duration bound)
            throws InterruptedException {
        Instant until = Instant.now().plus(bound);
        int most = 0;
        while (Instant.now().isBefore(until)) {
            int running = 0;
            for (int shard = 0; shard < 2; shard++) {
                running += (int) mongo.shard(shard).truth().commands(UPDATES).stream()
                        .filter(ReceivedCommand::running)
                        .count();
            }
            most = Math.max(most, running);
            if (most >= expected) {
                break;
            }
            Thread.sleep(20);
        }
        return most;
    }

    private static Map<String, String> taskConfig(String uri) {
        Map<String, String> config = ConnectHarness.taskConfig(uri, "side");
        config.put("errors.tolerance", "all");
        // the held commands must not reach their server deadline while the test counts them
        config.put(GuardedSinkSettings.SERVER_DEADLINE_MS, "60000");
        return config;
    }

    private static Map<String, Integer> counts(MongoClient client) {
        Map<String, Integer> counts = new HashMap<>();
        for (Document d : client.getDatabase("side").getCollection("events").find()) {
            counts.put(d.getString("_id"), ((Number) d.get("n")).intValue());
        }
        return counts;
    }

    /** Connect's context as far as the task uses it: the errant record reporter records what it is given. */
    private record Context(List<SinkRecord> reported) implements SinkTaskContext {
        @Override
        public ErrantRecordReporter errantRecordReporter() {
            return (record, error) -> {
                reported.add(record);
                return CompletableFuture.completedFuture(null);
            };
        }

        @Override
        public Map<String, String> configs() {
            return Map.of();
        }

        @Override
        public void offset(Map<TopicPartition, Long> offsets) {}

        @Override
        public void offset(TopicPartition partition, long offset) {}

        @Override
        public void timeout(long timeoutMs) {}

        @Override
        public Set<TopicPartition> assignment() {
            return Set.of();
        }

        @Override
        public void pause(TopicPartition... partitions) {}

        @Override
        public void resume(TopicPartition... partitions) {}

        @Override
        public void requestCommit() {}

        @Override
        public PluginMetrics pluginMetrics() {
            return null;
        }
    }
}
