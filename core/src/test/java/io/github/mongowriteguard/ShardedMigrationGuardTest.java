package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import com.mongodb.event.CommandFailedEvent;
import com.mongodb.event.CommandListener;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.sharding.ChunkMap;
import io.github.mongowriteguard.testkit.sharding.ChunkMigration;
import io.github.mongowriteguard.testkit.sharding.MigrationFailPoints;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Guarded writes while their chunk migrates, on the testkit's migration with a critical section (mongodb/mongo
 * {@code src/mongo/db/s/migration_source_manager.cpp}): writes reaching the donor in the critical section wait, get
 * StaleConfig and mongos resends them to the recipient ({@code src/mongo/s/write_ops/batch_write_exec.cpp}); the retry
 * history of writes applied on the donor moves with the chunk ({@code session_catalog_migration_source.cpp},
 * {@code session_catalog_migration_destination.cpp}). Nothing lost, nothing applied twice, outcomes as they happened.
 */
class ShardedMigrationGuardTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int SPLIT = 500;

    /** {@code _id} ranged: [MinKey, 500) on shard00, [500, MaxKey) on shard01; 1,000 documents with a counter. */
    private static EmulatedShardedCluster start() {
        EmulatedShardedCluster cluster = EmulatedCluster.sharded().shards(2).start();
        ShardKey key = cluster.shardCollection("shop.items", ShardKey.of(new BsonDocument("_id", new BsonInt32(1))))
                .key();
        cluster.placeChunks(
                "shop.items",
                ChunkMap.splitAt(key, List.of(new BsonInt32(SPLIT)), List.of("shard00", "shard01"))
                        .chunks());
        return cluster;
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void guardedBulkWhileItsChunkMoves_everyWriteAppliedOnce(boolean ordered) throws Exception {
        try (EmulatedShardedCluster cluster = start();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 30_000)) {
            MongoCollection<Document> items = fixture.client.getDatabase("shop").getCollection("items");
            List<Document> documents = new ArrayList<>();
            for (int id = 0; id < 2 * SPLIT; id++) {
                documents.add(new Document("_id", id).append("n", 0));
            }
            items.insertMany(documents);
            List<WriteModel<Document>> models = new ArrayList<>();
            for (int id = 0; id < 2 * SPLIT; id++) {
                models.add(new UpdateOneModel<>(Filters.eq("_id", id), Updates.inc("n", 1)));
                if (id % 10 == 0) {
                    models.add(new InsertOneModel<>(new Document("_id", -1 - id).append("n", 1)));
                }
            }
            cluster.routing().reset();

            WriteOutcome<Document> outcome;
            try (MigrationFailPoints.Hang hang = cluster.migrationFailPoints().enable("moveChunkHangAtStep5")) {
                CompletableFuture<ChunkMigration> move = CompletableFuture.supplyAsync(
                        () -> cluster.moveChunk("shop.items", new BsonDocument("_id", new BsonInt32(0)), "shard01"));
                assertThat(hang.awaitReached(WAIT)).isTrue();
                CompletableFuture<WriteOutcome<Document>> bulk = CompletableFuture.supplyAsync(
                        () -> fixture.wrap(items).execute(models, new BulkWriteOptions().ordered(ordered)));
                awaitStaleAnswerPending(cluster);
                hang.release();
                move.get(WAIT.toSeconds(), TimeUnit.SECONDS);
                outcome = bulk.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            }

            assertThat(outcome.isComplete()).isTrue();
            assertThat(outcome.counts()).containsEntry(WriteStatus.APPLIED, models.size());
            assertThat(outcome.modifiedCount()).isEqualTo(2 * SPLIT);
            assertThat(outcome.insertedCount()).isEqualTo(2 * SPLIT / 10);
            assertThat(cluster.routing().staleWriteBatches()).isPositive();
            // Read through mongos: the donor's orphans are filtered out.
            assertThat(items.countDocuments()).isEqualTo(2 * SPLIT + 2 * SPLIT / 10);
            assertThat(items.countDocuments(Filters.ne("n", 1)))
                    .as("lost or applied twice")
                    .isZero();
        }
    }

    @Test
    void lostAnswerThenTheChunkMoves_theGuardsResendIsRecognisedOnTheRecipient() {
        try (EmulatedShardedCluster cluster = start()) {
            AtomicBoolean moved = new AtomicBoolean();
            try (GuardFixture fixture = new GuardFixture(
                    cluster.connectionString(),
                    WriteGuardSettings.defaults(),
                    // After the lost answer the guard's resend came once the first copy's server deadline (2/3 of this)
                    // had passed.
                    3_000,
                    b -> b.addCommandListener(new CommandListener() {
                        @Override
                        public void commandFailed(CommandFailedEvent event) {
                            // The answer was lost after the donor applied the update: the chunk moves before the
                            // guard sends the same copy again.
                            if (event.getCommandName().equals("update") && moved.compareAndSet(false, true)) {
                                cluster.moveChunk("shop.items", new BsonDocument("_id", new BsonInt32(5)), "shard01");
                            }
                        }
                    }))) {
                MongoCollection<Document> items =
                        fixture.client.getDatabase("shop").getCollection("items");
                items.insertOne(new Document("_id", 5).append("n", 0));
                cluster.mongos(0).loseReplies(1, "update");

                WriteOutcome<Document> outcome = fixture.wrap(items)
                        .execute(
                                List.of(new UpdateOneModel<>(Filters.eq("_id", 5), Updates.inc("n", 1))),
                                new BulkWriteOptions());

                assertThat(moved).isTrue();
                assertThat(outcome.outcome(0).status()).isEqualTo(WriteStatus.APPLIED);
                List<BsonDocument> updates = fixture.sent.stream()
                        .filter(c -> c.containsKey("update"))
                        .toList();
                assertThat(updates).hasSizeGreaterThanOrEqualTo(2);
                BsonDocument first = updates.get(0);
                assertThat(updates).as("every send is the same copy").allSatisfy(sent -> {
                    assertThat(sent.get("lsid")).isEqualTo(first.get("lsid"));
                    assertThat(sent.get("txnNumber")).isEqualTo(first.get("txnNumber"));
                });
                assertThat(items.find(Filters.eq("_id", 5)).first())
                        .as("applied once, on the donor; the recipient returned the recorded result")
                        .isEqualTo(new Document("_id", 5).append("n", 1));
            }
        }
    }

    /** Waits until mongos has a write batch waiting on the donor's critical section (its truth shows it running). */
    private static void awaitStaleAnswerPending(EmulatedShardedCluster cluster) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (List.of("insert", "update").stream()
                .flatMap(command -> cluster.shard("shard00").truth().commands(command).stream())
                .noneMatch(c -> c.running())) {
            assertThat(System.nanoTime()).as("no write reached the donor").isLessThan(deadline);
            Thread.sleep(5);
        }
    }
}
