package io.github.mongowriteguard.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.SoftAssertions.assertSoftly;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import io.github.mongowriteguard.testkit.truth.TxnId;
import io.github.mongowriteguard.testkit.truth.WriteStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.sink.SinkRecord;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A worker's hard crash: its task's {@code $inc}s apply on the server, every reply is lost, and the worker dies while
 * the put still tries to learn the outcome (its client closed under it: no {@code close(partitions)}, no settle, no
 * progress document, no committed offset). The partitions' next owner is delivered the whole batch again from the
 * committed offset. Each record's write carries the identity its partition and offset give it (one logical session per
 * partition, {@code txnNumber} = offset block, {@code stmtId} = offset in the block), so the server answers the
 * redelivered writes from the statement records the dead task's writes left: each record's write is one server copy
 * (the dead task's and the next owner's sends of it carry the same {@code (lsid, txnNumber)}), ran once, and every
 * counter is exact. Without those identities (the sink before them) the next owner's redelivery is a second copy of
 * each record the dead task applied and applies it again: the copies, runs and counters asserted at the end all fail
 * (checked by sending the sink's bulks without their {@code StatementIds}).
 *
 * <p>Tasks driven by the test (no Connect runtime: an in-process worker of {@code EmbeddedConnectCluster} cannot be
 * killed without its graceful shutdown), the real driver over real sockets to the emulated 2-shard cluster.
 */
class HardCrashRedeliveryTest {
    private static final TopicPartition T0 = new TopicPartition("t", 0);
    private static final TopicPartition T1 = new TopicPartition("t", 1);
    private static final Predicate<ReceivedCommand> UPDATES =
            c -> c.commandName().equals("update") && c.namespace().equals("crash.events");

    @Test
    void aWorkerKilledAfterItsWritesApplied_theNextOwnersRedeliveryAppliesNothingTwice() throws Exception {
        try (EmulatedShardedCluster mongo = EmulatedCluster.sharded().shards(2).start();
                MongoClient client = MongoClients.create(mongo.connectionString())) {
            mongo.shardCollection("crash.events", ConnectHarness.HASHED_ID);
            List<SinkRecord> batch = new ArrayList<>();
            for (int k = 0; k < 20; k++) {
                // two partitions, offsets across a block boundary of partition 1 (65,535 and 65,536)
                int partition = k % 2;
                long offset = partition == 0 ? k : 65_526 + k;
                batch.add(new SinkRecord(
                        "t", partition, null, "k" + k, null, Map.of("_id", "k" + k, "op", "inc", "n", 1), offset));
            }
            mongo.mongos(0).loseReplies(1_000, "update");
            GuardedMongoSinkTask dead = new GuardedMongoSinkTask();
            dead.start(taskConfig(mongo.connectionString()));
            dead.open(List.of(T0, T1));
            CompletableFuture<Void> put = CompletableFuture.runAsync(() -> dead.put(batch));
            // partition 0 and partition 1's first block are sent (and UNKNOWN); partition 1's next block waits for the
            // redelivery behind them
            awaitCounters(client, 15);
            dead.stop(); // the worker dies: its client goes with it, mid-put
            try {
                put.get(30, TimeUnit.SECONDS);
            } catch (Exception expected) {
                // the put dies with its client
            }
            mongo.mongos(0).stopLosingReplies();
            // a hard crash writes no progress: whatever the dying put recorded is not there
            client.getDatabase("crash").getCollection(ProgressStore.COLLECTION).deleteMany(new Document());
            assertThat(counts(client).values())
                    .as("the dead task applied each $inc")
                    .containsOnly(1);

            GuardedMongoSinkTask next = new GuardedMongoSinkTask();
            next.start(taskConfig(mongo.connectionString()));
            try {
                next.open(List.of(T0, T1));
                next.put(batch); // Connect delivers the batch again: nothing of it was committed
            } finally {
                next.stop();
            }

            // What the statement ids decide: without them, the copies, the runs and the counters below each fail
            // (reported together); the copies at once would not (the dead task's copies ended before the next owner's).
            Map<String, Set<TxnId>> copies = copiesPerRecord(mongo);
            Map<String, Integer> counts = counts(client);
            var atOnce = RecordCopies.maxAtOnce(mongo.truth(), "crash.events");
            assertSoftly(softly -> {
                softly.assertThat(copies).as("records written on the shards").hasSize(20);
                // the dead task's sends of a record (their replies lost) and the next owner's are one copy
                softly.assertThat(moreThanOne(copies))
                        .as("records whose write ran as more than one server copy (lsid#txnNumber) on the shards,"
                                + " the dead task's and the next owner's together")
                        .isEmpty();
                softly.assertThat(ran(mongo))
                        .as("record statements run (not answered from a statement record) on the shards")
                        .isEqualTo(20);
                softly.assertThat(counts).hasSize(20);
                softly.assertThat(counts.values()).as("each $inc applied once").containsOnly(1);
                softly.assertThat(atOnce.max())
                        .as("server copies of one record's write at once (%s)", atOnce)
                        .isEqualTo(1);
            });
        }
    }

    /**
     * Each record's server copies on the shards: the distinct {@code (lsid, txnNumber)} of the update commands that
     * carried its statement (each record of the batch writes its own {@code _id}), by {@code _id}.
     */
    private static Map<String, Set<TxnId>> copiesPerRecord(EmulatedShardedCluster mongo) {
        Map<String, Set<TxnId>> copies = new TreeMap<>();
        for (ReceivedCommand command : mongo.truth().commands(UPDATES)) {
            for (WriteStatement statement : command.statements()) {
                String record =
                        statement.body().getDocument("q").getString("_id").getValue();
                copies.computeIfAbsent(record, k -> new LinkedHashSet<>()).add(command.txnId());
            }
        }
        return copies;
    }

    private static Map<String, Set<TxnId>> moreThanOne(Map<String, Set<TxnId>> copies) {
        Map<String, Set<TxnId>> more = new TreeMap<>(copies);
        more.values().removeIf(itsCopies -> itsCopies.size() == 1);
        return more;
    }

    /** Update statements that ran (not answered from a record) on the shards. */
    private static long ran(EmulatedShardedCluster mongo) {
        long ran = 0;
        for (int shard = 0; shard < 2; shard++) {
            ran += mongo.shard(shard).truth().commands(UPDATES).stream()
                    .filter(ReceivedCommand::executed)
                    .mapToLong(ReceivedCommand::applied)
                    .sum();
        }
        return ran;
    }

    private static void awaitCounters(MongoClient client, int expected) throws InterruptedException {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(20));
        while (counts(client).size() < expected && Instant.now().isBefore(deadline)) {
            Thread.sleep(50);
        }
        assertThat(counts(client)).as("the dead task's writes applied").hasSize(expected);
        Thread.sleep(200); // nothing more follows: the later block waits
        assertThat(counts(client)).hasSize(expected);
    }

    private static Map<String, String> taskConfig(String uri) {
        Map<String, String> config = ConnectHarness.taskConfig(uri, "crash");
        config.put("topics", "t");
        config.put(GuardedSinkSettings.RETRY_MAX_ATTEMPTS, "1");
        config.put(GuardedSinkSettings.SETTLE_MAX_WAIT_MS, "1000");
        return config;
    }

    private static Map<String, Integer> counts(MongoClient client) {
        Map<String, Integer> counts = new HashMap<>();
        for (Document d : client.getDatabase("crash").getCollection("events").find()) {
            counts.put(d.getString("_id"), ((Number) d.get("n")).intValue());
        }
        return counts;
    }
}
