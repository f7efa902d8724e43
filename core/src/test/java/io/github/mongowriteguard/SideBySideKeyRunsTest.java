package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.sharding.RoutedWrite;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * An ordered bulk that repeats keys on a collection sharded on {@code {_id: "hashed"}}: each shard's key runs go in an
 * ORDERED command of their own, the shards' commands side by side, each on a session of its own; every failure loop,
 * stale placement and fault ends as the driver's ORDERED bulk of each key would (compared write by write and document
 * by document); faults on one shard: {@link SideBySideKeyRunsFaultsTest}. No timing is asserted: which
 * commands overlap in time is the lab's measure ({@code hot-keys}), not a test's.
 */
class SideBySideKeyRunsTest {
    static final ShardKey HASHED_ID = ShardKey.of(new BsonDocument("_id", new BsonString("hashed")));
    static final int SHARDS = 5;

    static WriteModel<Document> inc(int id) {
        return new UpdateOneModel<>(
                new Document("_id", id), new Document("$inc", new Document("n", 1)), new UpdateOptions().upsert(true));
    }

    private static WriteModel<Document> setString(int id) {
        return new UpdateOneModel<>(new Document("_id", id), new Document("$set", new Document("n", "text")));
    }

    /** {@code count} {@code $inc} upserts over {@code keys} keys, interleaved; key k's write number {@code w} is index w*keys+k. */
    static List<WriteModel<Document>> events(int count, int keys, Set<Integer> failingKeys) {
        List<WriteModel<Document>> models = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int key = i % keys;
            // a failing key's fourth write sets a string: its fifth, an $inc, fails (14) and stops that key only
            models.add(failingKeys.contains(key) && i / keys == 3 ? setString(key) : inc(key));
        }
        return models;
    }

    static EmulatedShardedCluster cluster() {
        return EmulatedCluster.sharded().shards(SHARDS).start();
    }

    static String shardOf(EmulatedShardedCluster cluster, String namespace, int key) {
        return cluster.chunkMap(namespace).shardOfDocument(new BsonDocument("_id", new BsonInt32(key)));
    }

    @Test
    void orderedEvents_areOneOrderedCommandPerShard_eachOneChildBatch_onSessionsOfTheirOwn() {
        try (EmulatedShardedCluster cluster = cluster();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 30_000)) {
            cluster.shardCollection("db.events", HASHED_ID);
            GuardedCollection<Document> events =
                    fixture.wrap(fixture.client.getDatabase("db").getCollection("events"));

            cluster.routing().reset();
            fixture.sent.clear();
            WriteOutcome<Document> outcome = events.execute(events(1_000, 100, Set.of()), ordered());

            assertThat(outcome.isComplete()).isTrue();
            assertThat(outcome.rounds()).isEqualTo(1);
            assertThat(outcome.commands()).isEqualTo(SHARDS);
            List<RoutedWrite> routed = cluster.routing().writes("db.events");
            assertThat(routed).hasSize(SHARDS).allSatisfy(write -> {
                assertThat(write.ordered()).isTrue();
                assertThat(write.childBatches()).isEqualTo(1);
            });
            assertThat(routed.stream().map(w -> w.batches().get(0).shard()).distinct())
                    .hasSize(SHARDS);
            // each command a server copy of its own: its own session, a transaction number
            assertThat(fixture.sent)
                    .hasSize(SHARDS)
                    .allSatisfy(c -> assertThat(c.containsKey("txnNumber")).isTrue());
            assertThat(fixture.sent.stream().map(c -> c.getDocument("lsid")).distinct())
                    .hasSize(SHARDS);
            assertThat(outcome.copies()).hasSize(SHARDS);
            assertThat(events.unwrap().countDocuments(new Document("n", 10))).isEqualTo(100);
        }
    }

    @Test
    void parallelShardCommandsOne_sendsTheKeyRunsAsOneOrderedCommand_asBefore() {
        try (EmulatedShardedCluster cluster = cluster();
                GuardFixture fixture = new GuardFixture(
                        cluster.connectionString(),
                        WriteGuardSettings.builder().parallelShardCommands(1).build(),
                        30_000,
                        b -> {})) {
            cluster.shardCollection("db.events", HASHED_ID);
            GuardedCollection<Document> events =
                    fixture.wrap(fixture.client.getDatabase("db").getCollection("events"));

            cluster.routing().reset();
            WriteOutcome<Document> outcome = events.execute(events(1_000, 100, Set.of()), ordered());

            assertThat(outcome.isComplete()).isTrue();
            assertThat(outcome.commands()).isEqualTo(1);
            RoutedWrite routed = cluster.routing().writes("db.events").get(0);
            assertThat(routed.childBatches()).isEqualTo(SHARDS);
            assertThat(routed.rounds()).isEqualTo(SHARDS);
            assertThat(events.unwrap().countDocuments(new Document("n", 10))).isEqualTo(100);
        }
    }

    @Test
    void callersSession_keepsOneOrderedCommandOnThatSession() {
        try (EmulatedShardedCluster cluster = cluster();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 30_000);
                ClientSession session = fixture.client.startSession()) {
            cluster.shardCollection("db.events", HASHED_ID);
            GuardedCollection<Document> events =
                    fixture.wrap(fixture.client.getDatabase("db").getCollection("events"));

            fixture.sent.clear();
            events.bulkWrite(session, events(1_000, 100, Set.of()), ordered());

            assertThat(fixture.sent).hasSize(1);
            assertThat(fixture.sent.get(0).getDocument("lsid"))
                    .isEqualTo(session.getServerSession().getIdentifier());
            assertThat(cluster.routing().writes("db.events").get(0).childBatches())
                    .isEqualTo(SHARDS);
            assertThat(events.unwrap().countDocuments(new Document("n", 10))).isEqualTo(100);
        }
    }

    @Test
    void failuresInsideRunsOnSeveralShardsAtOnce_endAsEachKeysDriverOrderedBulk() {
        try (EmulatedShardedCluster cluster = cluster();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 30_000)) {
            cluster.shardCollection("db.events", HASHED_ID);
            cluster.shardCollection("db.oracle", HASHED_ID);
            Set<Integer> failing = oneKeyPerShard(cluster, "db.events", 40, 3);
            List<WriteModel<Document>> models = events(400, 40, failing);
            GuardedCollection<Document> events =
                    fixture.wrap(fixture.client.getDatabase("db").getCollection("events"));

            WriteOutcome<Document> outcome = events.execute(models, ordered());

            assertSameAsEachKeysDriverBulk(
                    outcome, events.unwrap(), fixture.client.getDatabase("db").getCollection("oracle"), models);
            assertThat(outcome.outcomes().stream().filter(o -> o.status() == WriteStatus.FAILED))
                    .hasSize(3);
        }
    }

    @Test
    void stalePlacement_aChunkMovedAfterTheGuardReadIt_costsAChildBatch_notExactness() {
        try (EmulatedShardedCluster cluster = cluster();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 30_000)) {
            cluster.shardCollection("db.events", HASHED_ID);
            cluster.shardCollection("db.oracle", HASHED_ID);
            GuardedCollection<Document> events =
                    fixture.wrap(fixture.client.getDatabase("db").getCollection("events"));
            events.execute(events(40, 20, Set.of()), ordered()); // the guard reads and keeps the placement
            String from = shardOf(cluster, "db.events", 5);
            String to = cluster.shardNames().stream()
                    .filter(s -> !s.equals(from))
                    .findFirst()
                    .orElseThrow();
            cluster.moveChunk("db.events", new BsonDocument("_id", new BsonInt32(5)), to);
            List<WriteModel<Document>> models = events(400, 40, Set.of(5, 17));
            MongoCollection<Document> oracle = fixture.client.getDatabase("db").getCollection("oracle");
            oracle.bulkWrite(events(40, 20, Set.of()), ordered()); // the same documents to begin with

            cluster.routing().reset();
            WriteOutcome<Document> outcome = events.execute(models, ordered());

            assertSameAsEachKeysDriverBulk(outcome, events.unwrap(), oracle, models);
            // the moved key's run went with its old shard's runs: that command reached two shards
            assertThat(cluster.routing().writes("db.events"))
                    .anySatisfy(w -> assertThat(w.childBatchesPerShard()).containsKeys(from, to));
        }
    }

    /** {@code count} keys below {@code keys}, each on a shard of its own. */
    private static Set<Integer> oneKeyPerShard(EmulatedShardedCluster cluster, String namespace, int keys, int count) {
        Map<String, Integer> firstByShard = new LinkedHashMap<>();
        for (int key = 0; key < keys; key++) {
            firstByShard.putIfAbsent(shardOf(cluster, namespace, key), key);
        }
        Set<Integer> chosen = new HashSet<>(new ArrayList<>(firstByShard.values()).subList(0, count));
        assertThat(chosen).hasSize(count);
        return chosen;
    }

    /** The shard's next {@code update}, from mongos too, fails or stalls as {@code data} says ({@code failCommand}). */
    static void failNextUpdate(EmulatedShardedCluster cluster, String shard, String data) {
        cluster.shard(shard)
                .failCommand()
                .configure(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1}, data: {"
                        + "failCommands: ['update'], failInternalCommands: true, " + data + "}}"));
    }

    /**
     * The contract of an ordered request in rounds, from the driver: each key's writes as one driver ORDERED bulk on
     * {@code oracle}; the guard's outcome must give every write the same status (and error code), and both
     * collections the same documents.
     */
    private static void assertSameAsEachKeysDriverBulk(
            WriteOutcome<Document> outcome,
            MongoCollection<Document> guarded,
            MongoCollection<Document> oracle,
            List<WriteModel<Document>> models) {
        Map<BsonValue, List<Integer>> byKey = new LinkedHashMap<>();
        for (int i = 0; i < models.size(); i++) {
            BsonValue id = ((UpdateOneModel<Document>) models.get(i))
                    .getFilter()
                    .toBsonDocument()
                    .get("_id");
            byKey.computeIfAbsent(id, k -> new ArrayList<>()).add(i);
        }
        WriteStatus[] expected = new WriteStatus[models.size()];
        Integer[] codes = new Integer[models.size()];
        for (List<Integer> indices : byKey.values()) {
            List<WriteModel<Document>> keyModels = new ArrayList<>();
            indices.forEach(i -> keyModels.add(models.get(i)));
            int failed = indices.size();
            try {
                oracle.bulkWrite(keyModels, ordered());
            } catch (MongoBulkWriteException e) {
                BulkWriteError error = e.getWriteErrors().get(0);
                failed = error.getIndex();
                codes[indices.get(failed)] = error.getCode();
            }
            for (int position = 0; position < indices.size(); position++) {
                expected[indices.get(position)] = position < failed
                        ? WriteStatus.APPLIED
                        : position == failed ? WriteStatus.FAILED : WriteStatus.SKIPPED;
            }
        }
        for (int i = 0; i < models.size(); i++) {
            assertThat(outcome.outcome(i).status()).as("index %d", i).isEqualTo(expected[i]);
            if (codes[i] != null) {
                assertThat(outcome.outcome(i).errorCode())
                        .as("code of index %d", i)
                        .isEqualTo(codes[i]);
            }
        }
        assertThat(guarded.find().sort(Sorts.ascending("_id")).into(new ArrayList<>()))
                .isEqualTo(oracle.find().sort(Sorts.ascending("_id")).into(new ArrayList<>()));
    }

    static BulkWriteOptions ordered() {
        return new BulkWriteOptions().ordered(true);
    }
}
