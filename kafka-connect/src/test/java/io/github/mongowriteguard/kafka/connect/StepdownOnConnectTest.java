package io.github.mongowriteguard.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.sharding.ShardReplicaSet;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A shard's primary steps down while a sink writes: 2 replicating shards of 3 members (elections after 500 ms), the
 * 2-worker Connect cluster, {@code $inc}s that count each record's applications ({@link RecordLedger}). While the sink
 * runs, every committed offset is checked against the documents: a committed record must have applied (exactly once;
 * nothing here is dead-lettered for a good reason). The official sink runs the same records under the same stepdown.
 */
class StepdownOnConnectTest {
    private static final String TOPIC = "stepdown";
    private static final int PARTITIONS = 4;
    private static final int RECORDS = 800;
    private static final int KEYS = 40;
    private static ConnectHarness harness;

    @BeforeAll
    static void start() {
        harness = new ConnectHarness(EmulatedCluster.sharded()
                .shards(2)
                .nodesPerShard(3)
                .replicatingShards(true)
                .shardElectionTimeout(Duration.ofMillis(500)));
        harness.connect.kafka().createTopic(TOPIC, PARTITIONS);
        for (int r = 0; r < RECORDS; r++) {
            int key = r % KEYS;
            harness.connect.kafka().produce(TOPIC, key % PARTITIONS, "k" + key, RecordLedger.event("k" + key, r));
        }
    }

    @AfterAll
    static void stop() {
        if (harness != null) {
            harness.close();
        }
    }

    /** The record numbers of each partition, by offset (record r is in partition (r mod KEYS) mod PARTITIONS). */
    private static List<List<Long>> numbersByOffset() {
        List<List<Long>> partitions = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            partitions.add(new ArrayList<>());
        }
        for (long r = 0; r < RECORDS; r++) {
            partitions.get((int) (r % KEYS) % PARTITIONS).add(r);
        }
        return partitions;
    }

    /** What one sink left, and the committed records that had not applied exactly once when they were committed. */
    record Run(
            RecordLedger ledger,
            List<String> committedNotApplied,
            int samples,
            int appliedBeforeStepdown,
            boolean newPrimary,
            long mongosShardRetries,
            List<Integer> shardErrors,
            io.github.mongowriteguard.testkit.truth.ServerTruth.CopiesAtOnce copiesAtOnce) {}

    private static Run run(String name, String connectorClass) throws Exception {
        String database = name;
        harness.shard(database + ".events");
        Map<String, String> config = harness.sink(connectorClass, TOPIC, database, name + "-dlq");
        List<List<Long>> numbers = numbersByOffset();
        List<String> committedNotApplied = new ArrayList<>();
        int samples = 0;
        harness.mongo.truth().reset();
        harness.mongo.routing().reset();
        int appliedBeforeStepdown;
        boolean newPrimary;
        ShardReplicaSet shard = harness.mongo.shardSet(0);
        // the shard's writes take 30 ms each, so that the stepdown finds writes running
        StallHandle slow = shard.primary().stall(Stall.interruptible(database + ".events", Duration.ofMillis(30)));
        try {
            harness.start(name, config);
            Instant deadline = Instant.now().plusSeconds(60);
            while (RecordLedger.applications(harness.documents(database)).size() < RECORDS / 10
                    && Instant.now().isBefore(deadline)) {
                Thread.sleep(20);
            }
            var primary = shard.primary();
            appliedBeforeStepdown =
                    RecordLedger.applications(harness.documents(database)).size();
            shard.stepDown(Duration.ofSeconds(2), Duration.ofSeconds(1), true); // mid-stream
            newPrimary = shard.awaitPrimary(Duration.ofSeconds(30)) != primary;
            slow.close();
            deadline = Instant.now().plusSeconds(120);
            boolean done = false;
            while (!done && Instant.now().isBefore(deadline)) {
                // committed first, documents after: what was applied when the offsets were read is still there
                Map<TopicPartition, Long> committed = harness.committed(name);
                Map<Long, Integer> applications = RecordLedger.applications(harness.documents(database));
                samples++;
                done = true;
                for (int p = 0; p < PARTITIONS; p++) {
                    long offset = committed.getOrDefault(new TopicPartition(TOPIC, p), 0L);
                    List<Long> below = numbers.get(p).subList(0, (int) offset);
                    for (long r : RecordLedger.notAppliedOnce(below, applications)) {
                        committedNotApplied.add("partition " + p + " committed " + offset + ": record " + r
                                + " applied " + applications.getOrDefault(r, 0) + " times");
                    }
                    done &= offset >= numbers.get(p).size();
                }
                Thread.sleep(100);
            }
            assertThat(done).as(name + " committed every record").isTrue();
        } finally {
            slow.close();
            harness.mongo.shardSet(0).awaitPrimary(Duration.ofSeconds(30));
            harness.connect.deleteConnector(name);
        }
        // the stepdown's evidence: the shards' writes it ended with an error (InterruptedDueToReplStateChange,
        // NotWritablePrimary), each then answered by a resend
        List<Integer> shardErrors = harness
                .mongo
                .truth()
                .commands(c ->
                        (database + ".events").equals(c.namespace()) && c.outcome() == ReceivedCommand.Outcome.ERROR)
                .stream()
                .map(ReceivedCommand::errorCode)
                .toList();
        int dead = harness.deadLetterCount(name + "-dlq");
        Set<Long> deadLettered = RecordLedger.numbers(harness.deadLetteredValues(name + "-dlq", dead));
        return new Run(
                RecordLedger.of(RECORDS, harness.documents(database), deadLettered),
                committedNotApplied,
                samples,
                appliedBeforeStepdown,
                newPrimary,
                harness.mongo.routing().shardRetries(),
                shardErrors,
                RecordCopies.maxAtOnce(harness.mongo.truth(), database + ".events"));
    }

    @Test
    void aStepdownMidStream_nothingLostNothingAppliedTwiceNothingAppliedDeadLettered_commitsBehindApplied()
            throws Exception {
        Run guarded = run("stepdown-guarded", ConnectHarness.GUARDED);
        Run official = run("stepdown-official", ConnectHarness.OFFICIAL);
        System.out.println("guarded " + guarded + "\nofficial " + official);

        assertThat(guarded.newPrimary()).as("guarded: another member elected").isTrue();
        assertThat(guarded.appliedBeforeStepdown()).as("guarded: mid-stream").isBetween(1, RECORDS - 1);
        assertThat(guarded.samples()).isGreaterThan(1);
        assertThat(guarded.ledger().applied()).as("guarded: applied").isEqualTo(RECORDS);
        assertThat(guarded.ledger().lost()).as("guarded: lost").isZero();
        assertThat(guarded.ledger().appliedTwice()).as("guarded: applied twice").isZero();
        assertThat(guarded.copiesAtOnce().max())
                .as("guarded: server copies of one record's write at once (%s)", guarded.copiesAtOnce())
                .isEqualTo(1);
        assertThat(guarded.ledger().deadLettered()).as("guarded: dead-lettered").isZero();
        assertThat(guarded.committedNotApplied())
                .as("guarded: committed offsets past records not applied once")
                .isEmpty();
    }
}
