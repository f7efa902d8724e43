package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.sharding.RoutedWrite;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A bulk that repeats a key: the key's run of writes travels in one command (the server runs a command's statements in
 * order), so repetitions cost no rounds; in an ordered request a failure inside a run stops that key only.
 *
 * <p>A 30 s socket timeout: these tests count commands, and a 3,000-write command on a loaded machine can outlive a
 * shorter one, be resent as the same copy and be counted twice.
 */
class HotKeysTest {

    private static WriteModel<Document> inc(Object id) {
        return new UpdateOneModel<>(
                new Document("_id", id), new Document("$inc", new Document("n", 1)), new UpdateOptions().upsert(true));
    }

    private static WriteModel<Document> setString(Object id) {
        return new UpdateOneModel<>(new Document("_id", id), new Document("$set", new Document("n", "text")));
    }

    @Test
    void orderedIncrementsOfOneId_costOneCommand() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 30_000)) {
            GuardedCollection<Document> counters =
                    fixture.wrap(fixture.client.getDatabase("db").getCollection("counters"));
            List<WriteModel<Document>> models = new ArrayList<>();
            for (int i = 0; i < 3_000; i++) {
                models.add(inc("hot"));
            }

            WriteOutcome<Document> outcome = counters.execute(models, new BulkWriteOptions().ordered(true));

            assertThat(outcome.isComplete()).isTrue();
            assertThat(outcome.commands()).isEqualTo(1);
            assertThat(outcome.rounds()).isEqualTo(1);
            assertThat(counters.unwrap().find().first()).isEqualTo(new Document("_id", "hot").append("n", 3_000));
        }
    }

    @Test
    void orderedRunWithAFailure_stopsThatKeyOnly_andSendsTheRestAgain() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 30_000)) {
            GuardedCollection<Document> counters =
                    fixture.wrap(fixture.client.getDatabase("db").getCollection("counters"));
            // a: inc, inc, set a string, inc (fails: 14), inc; b: 4 incs, interleaved with a's.
            List<WriteModel<Document>> models = List.of(
                    inc("a"), inc("b"), inc("a"), inc("b"), setString("a"), inc("a"), inc("b"), inc("a"), inc("b"));

            WriteOutcome<Document> outcome = counters.execute(models, new BulkWriteOptions().ordered(true));

            List<WriteStatus> statuses =
                    outcome.outcomes().stream().map(IndexOutcome::status).toList();
            assertThat(statuses)
                    .containsExactly(
                            WriteStatus.APPLIED,
                            WriteStatus.APPLIED,
                            WriteStatus.APPLIED,
                            WriteStatus.APPLIED,
                            WriteStatus.APPLIED,
                            WriteStatus.FAILED,
                            WriteStatus.APPLIED,
                            WriteStatus.SKIPPED,
                            WriteStatus.APPLIED);
            assertThat(outcome.outcomes().get(5).errorCode()).isEqualTo(14);
            assertThat(outcome.outcomes().get(7).relatedIndex()).isEqualTo(5);
            // One ORDERED command of both runs (a's first), stopped at index 5; then b's run again.
            assertThat(outcome.commands()).isEqualTo(2);
            assertThat(counters.unwrap().find(new Document("_id", "a")).first())
                    .isEqualTo(new Document("_id", "a").append("n", "text"));
            assertThat(counters.unwrap().find(new Document("_id", "b")).first())
                    .isEqualTo(new Document("_id", "b").append("n", 4));
        }
    }

    @Test
    void hotKeyOnAShardedCluster_isOneMongosRound_andManyKeysUnorderedToo() {
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(5).start();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 30_000)) {
            cluster.shardCollection("db.hot", ShardKey.of(new BsonDocument("_id", new BsonString("hashed"))));
            cluster.shardCollection("db.events", ShardKey.of(new BsonDocument("_id", new BsonString("hashed"))));
            GuardedCollection<Document> hot =
                    fixture.wrap(fixture.client.getDatabase("db").getCollection("hot"));
            GuardedCollection<Document> events =
                    fixture.wrap(fixture.client.getDatabase("db").getCollection("events"));
            List<WriteModel<Document>> hotModels = new ArrayList<>();
            for (int i = 0; i < 3_000; i++) {
                hotModels.add(inc(7));
            }
            List<WriteModel<Document>> eventModels = new ArrayList<>();
            for (int i = 0; i < 1_000; i++) {
                eventModels.add(inc(i % 100)); // 1,000 events over 100 keys
            }

            cluster.routing().reset();
            WriteOutcome<Document> hotOutcome = hot.execute(hotModels, new BulkWriteOptions().ordered(true));
            WriteOutcome<Document> eventOutcome = events.execute(eventModels, new BulkWriteOptions().ordered(false));

            assertThat(hotOutcome.isComplete()).isTrue();
            assertThat(eventOutcome.isComplete()).isTrue();
            assertThat(mongosRounds(cluster, "db.hot")).isEqualTo(1);
            assertThat(mongosRounds(cluster, "db.events")).isEqualTo(1);
            assertThat(events.unwrap().countDocuments(new Document("n", 10))).isEqualTo(100);
        }
    }

    @Test
    void orderedEventsOverManyKeys_onAReplicaSet_areOneCommand() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 30_000)) {
            GuardedCollection<Document> events =
                    fixture.wrap(fixture.client.getDatabase("db").getCollection("events"));
            List<WriteModel<Document>> models = new ArrayList<>();
            for (int i = 0; i < 1_000; i++) {
                models.add(inc(i % 100)); // 1,000 events over 100 keys
            }

            WriteOutcome<Document> outcome = events.execute(models, new BulkWriteOptions().ordered(true));

            assertThat(outcome.isComplete()).isTrue();
            assertThat(outcome.rounds()).isEqualTo(1);
            assertThat(outcome.commands()).isEqualTo(1);
            assertThat(events.unwrap().countDocuments(new Document("n", 10))).isEqualTo(100);
        }
    }

    @Test
    void orderedEventsOverManyKeys_onFiveShards_areOneOrderedCommandPerShard_sentSideBySide() {
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(5).start();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 30_000)) {
            cluster.shardCollection("db.events", ShardKey.of(new BsonDocument("_id", new BsonString("hashed"))));
            GuardedCollection<Document> events =
                    fixture.wrap(fixture.client.getDatabase("db").getCollection("events"));
            List<Object> keys = new ArrayList<>();
            for (int k = 0; k < 100; k++) { // the _id types whose hash the guard computes as the server does
                keys.add(
                        switch (k % 4) {
                            case 0 -> k;
                            case 1 -> (long) k * 1_000_003L;
                            case 2 -> "key-" + k;
                            default -> new org.bson.types.ObjectId();
                        });
            }
            List<WriteModel<Document>> models = new ArrayList<>();
            for (int i = 0; i < 1_000; i++) {
                models.add(inc(keys.get(i % 100)));
            }

            cluster.routing().reset();
            WriteOutcome<Document> outcome = events.execute(models, new BulkWriteOptions().ordered(true));

            assertThat(outcome.isComplete()).isTrue();
            assertThat(outcome.rounds()).isEqualTo(1);
            // one ORDERED command per shard (sent side by side, SideBySideKeyRunsTest), each one child batch: the
            // guard's placement agrees with mongos' routing, every shard once
            assertThat(outcome.commands()).isEqualTo(5);
            List<RoutedWrite> routed = cluster.routing().writes("db.events");
            assertThat(routed)
                    .hasSize(5)
                    .allSatisfy(write -> assertThat(write.childBatches()).isEqualTo(1));
            assertThat(routed.stream().map(write -> write.batches().get(0).shard()))
                    .doesNotHaveDuplicates();
            assertThat(events.unwrap().countDocuments(new Document("n", 10))).isEqualTo(100);
        }
    }

    @Test
    void orderedEventsOnFiveShards_aFailureStopsItsKeyOnly_andTheOtherKeysGoOn() {
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(5).start();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 30_000)) {
            cluster.shardCollection("db.events", ShardKey.of(new BsonDocument("_id", new BsonString("hashed"))));
            GuardedCollection<Document> events =
                    fixture.wrap(fixture.client.getDatabase("db").getCollection("events"));
            List<WriteModel<Document>> models = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                // key 3's fourth write sets a string; its next $inc fails (14) and stops key 3 only
                models.add(i == 63 ? setString(3) : inc(i % 20));
            }

            WriteOutcome<Document> outcome = events.execute(models, new BulkWriteOptions().ordered(true));

            for (int i = 0; i < 200; i++) {
                WriteStatus expected = i % 20 != 3 || i <= 63
                        ? WriteStatus.APPLIED
                        : i == 83 ? WriteStatus.FAILED : WriteStatus.SKIPPED;
                assertThat(outcome.outcomes().get(i).status()).as("index %d", i).isEqualTo(expected);
            }
            assertThat(outcome.outcomes().get(83).errorCode()).isEqualTo(14);
            // one command per shard reached; key 3's stopped at index 83, and its shard's other keys after key 3 sent
            // again without key 3
            java.util.Map<String, List<Integer>> keysByShard = new java.util.TreeMap<>();
            for (int key = 0; key < 20; key++) {
                keysByShard
                        .computeIfAbsent(
                                cluster.chunkMap("db.events")
                                        .shardOfDocument(new BsonDocument("_id", new org.bson.BsonInt32(key))),
                                shard -> new ArrayList<>())
                        .add(key);
            }
            String shardOfKey3 =
                    cluster.chunkMap("db.events").shardOfDocument(new BsonDocument("_id", new org.bson.BsonInt32(3)));
            boolean resent = keysByShard.get(shardOfKey3).stream().anyMatch(key -> key > 3);
            assertThat(outcome.commands()).isEqualTo(keysByShard.size() + (resent ? 1 : 0));
            assertThat(events.unwrap().countDocuments(new Document("n", 10))).isEqualTo(19);
            assertThat(events.unwrap().find(new Document("_id", 3)).first())
                    .isEqualTo(new Document("_id", 3).append("n", "text"));
        }
    }

    private static int mongosRounds(EmulatedShardedCluster cluster, String namespace) {
        return cluster.routing().writes(namespace).stream()
                .mapToInt(RoutedWrite::rounds)
                .sum();
    }
}
