package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.sharding.RoutedWrite;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The guarded collection through mongos: 5 shards, collections sharded hashed on {@code _id}. */
class ShardedGuardTest {
    private static final int SHARDS = 5;
    private static final int N = 1_000;
    /**
     * Long enough that a 1,000-statement command finishes within the guard's deadline (2/3 of it) on a loaded machine:
     * the emulator checks the deadline between statements as mongod does, and an expiry there, or a client timeout,
     * is resent as the same copy (a second command on the wire), which these routing tests do not measure.
     */
    private static final int SOCKET_TIMEOUT_MS = 30_000;

    private static final ShardKey HASHED_ID = ShardKey.of(new BsonDocument("_id", new BsonString("hashed")));

    private static EmulatedShardedCluster cluster;
    private static GuardFixture fixture;

    @BeforeAll
    static void start() {
        cluster = EmulatedCluster.sharded().shards(SHARDS).start();
        fixture = new GuardFixture(cluster.connectionString(), SOCKET_TIMEOUT_MS);
    }

    @AfterAll
    static void stop() {
        fixture.close();
        cluster.close();
    }

    @Test
    void orderedUpsertBulkOnHashedId_costsOneRoundOfAtMostOneBatchPerShard_whereTheDriverPaysOnePerShardChange() {
        cluster.shardCollection("shop.guarded", HASHED_ID);
        cluster.shardCollection("shop.plain", HASHED_ID);
        GuardedCollection<Document> guarded =
                fixture.wrap(fixture.client.getDatabase("shop").getCollection("guarded"));
        MongoCollection<Document> plain = fixture.client.getDatabase("shop").getCollection("plain");
        cluster.routing().reset();

        WriteOutcome<Document> outcome = guarded.execute(upserts(7), new BulkWriteOptions().ordered(true));
        plain.bulkWrite(upserts(7), new BulkWriteOptions().ordered(true));

        List<RoutedWrite> guardedWrites = cluster.routing().writes("shop.guarded");
        List<RoutedWrite> plainWrites = cluster.routing().writes("shop.plain");
        int guardedTrips =
                guardedWrites.stream().mapToInt(RoutedWrite::childBatches).sum();
        int plainTrips =
                plainWrites.stream().mapToInt(RoutedWrite::childBatches).sum();
        double expected = 1 + (N - 1) * (1 - 1.0 / SHARDS);
        System.out.printf(
                "ShardedGuardTest: %,d ReplaceOne upserts on %d shards, hashed _id {productId, storeId}, ordered:"
                        + " guard %d mongos-to-shard round trips in %d client command(s) (%d mongos round(s)); plain driver %d round"
                        + " trips in %d client command(s); formula 1+(n-1)(1-1/S) = %.1f%n",
                N,
                SHARDS,
                guardedTrips,
                guardedWrites.size(),
                guardedWrites.stream().mapToInt(RoutedWrite::rounds).sum(),
                plainTrips,
                plainWrites.size(),
                expected);

        assertThat(outcome.isComplete()).isTrue();
        assertThat(outcome.upserts()).hasSize(N);
        assertThat(outcome.rounds()).isEqualTo(1);
        assertThat(guardedWrites).singleElement().satisfies(write -> {
            assertThat(write.ordered()).isFalse();
            assertThat(write.rounds()).isEqualTo(1);
        });
        assertThat(guardedTrips).isLessThanOrEqualTo(SHARDS);
        assertThat((double) plainTrips).isCloseTo(expected, within(0.10 * expected));
        assertThat(guarded.unwrap().countDocuments()).isEqualTo(N);
        assertThat(plain.countDocuments()).isEqualTo(N);
    }

    @Test
    void everyWriteThroughMongos_carriesMaxTimeMsBelowTheSocketTimeout_toTheShardsToo() {
        cluster.shardCollection("shop.deadlines", HASHED_ID);
        GuardedCollection<Document> guarded =
                fixture.wrap(fixture.client.getDatabase("shop").getCollection("deadlines"));
        fixture.sent.clear();
        int shardCommandsBefore = shardWriteCommands().size();

        guarded.insertOne(new Document("v", 1));
        guarded.insertMany(List.of(new Document("_id", 1), new Document("_id", 2), new Document("_id", 3)));
        guarded.updateOne(Filters.eq("_id", 1), Updates.set("w", 2));
        guarded.updateMany(Filters.eq("v", 1), Updates.set("w", 3));
        guarded.replaceOne(Filters.eq("_id", 2), new Document("_id", 2).append("r", true));
        guarded.deleteOne(Filters.eq("_id", 3));
        guarded.deleteMany(Filters.eq("w", 3));
        guarded.bulkWrite(upserts(3).subList(0, 50), new BulkWriteOptions().ordered(true));

        long deadline = guarded.serverDeadlineMillis();
        assertThat(deadline).isEqualTo(SOCKET_TIMEOUT_MS * 2 / 3);
        assertThat(fixture.sent)
                .hasSize(8)
                .allSatisfy(command -> assertThat(command.getNumber("maxTimeMS").longValue())
                        .isPositive()
                        .isLessThan(SOCKET_TIMEOUT_MS)
                        .isEqualTo(deadline));
        List<ReceivedCommand> onShards = shardWriteCommands()
                .subList(shardCommandsBefore, shardWriteCommands().size());
        assertThat(onShards)
                .isNotEmpty()
                .allSatisfy(child ->
                        assertThat(child.maxTimeMs()).isNotNull().isPositive().isLessThanOrEqualTo(deadline));
    }

    private static List<ReceivedCommand> shardWriteCommands() {
        return cluster.truth()
                .commands(c -> List.of("insert", "update", "delete").contains(c.commandName())
                        && c.namespace().equals("shop.deadlines"));
    }

    /** N ReplaceOne upserts keyed by {@code _id: {productId, storeId}}, as in the articles' part 1. */
    private static List<WriteModel<Document>> upserts(long seed) {
        Random random = new Random(seed);
        List<WriteModel<Document>> models = new ArrayList<>(N);
        for (int i = 0; i < N; i++) {
            Document id = new Document("productId", random.nextInt(1_000_000)).append("storeId", i);
            models.add(new ReplaceOneModel<>(
                    Filters.eq("_id", id),
                    new Document("_id", id).append("qty", random.nextInt(100)),
                    new ReplaceOptions().upsert(true)));
        }
        return models;
    }
}
