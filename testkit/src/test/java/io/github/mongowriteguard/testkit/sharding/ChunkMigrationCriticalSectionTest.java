package io.github.mongowriteguard.testkit.sharding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A chunk migration in the server's phases (mongodb/mongo {@code src/mongo/db/s/migration_source_manager.cpp}): a
 * write that reaches the donor inside the critical section waits for it
 * ({@code OperationShardingState::waitForCriticalSectionToComplete}), then answers StaleConfig
 * ({@code write_ops_exec.cpp handleError}), and mongos refreshes and sends it to the recipient
 * ({@code src/mongo/s/write_ops/batch_write_exec.cpp}); a write applied on the donor before the critical section is
 * carried to the recipient with its retry history ({@code migration_chunk_cloner_source.cpp} {@code _transferMods},
 * {@code session_catalog_migration_source.cpp}, {@code session_catalog_migration_destination.cpp}). Held between
 * phases with the server's {@code moveChunkHangAtStep*} fail points. An open multi-document transaction keeps the
 * collection lock of its writes to its end ({@code src/mongo/db/transaction/transaction_participant.cpp} stashes the
 * transaction's locker between statements), so entering the critical section ({@code MODE_X}, bounded by
 * {@code migrationLockAcquisitionMaxWaitMS}) fails with LockTimeout while one is open; a transaction's write arriving in
 * the critical section answers StaleConfig, labelled {@code TransientTransactionError} ({@code error_labels.cpp}).
 */
class ChunkMigrationCriticalSectionTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @Test
    void retryableInsertInTheCriticalSection_waits_thenStaleConfig_andMongosSendsItToTheRecipient() throws Exception {
        try (Fixture f = new Fixture()) {
            CompletableFuture<BsonDocument> insert;
            try (MigrationFailPoints.Hang hang = f.cluster.migrationFailPoints().enable("moveChunkHangAtStep5")) {
                CompletableFuture<ChunkMigration> move = f.moveAsync();
                assertThat(hang.awaitReached(WAIT)).isTrue();
                insert = CompletableFuture.supplyAsync(() -> f.retryableInsert(6, 1));
                f.awaitReceivedOnTheDonor("insert");
                hang.release();
                move.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            }
            BsonDocument reply = insert.get(WAIT.toSeconds(), TimeUnit.SECONDS);

            assertThat(reply.containsKey("writeErrors")).isFalse();
            assertThat(reply.getNumber("n").intValue()).isEqualTo(1);
            assertThat(f.ids("shard01")).containsExactly(5, 6);
            assertThat(f.ids("shard00"))
                    .as("the moved document stays as an orphan; the new one never ran there")
                    .containsExactly(5);
            assertThat(f.cluster.routing().staleWriteBatches()).isEqualTo(1);
        }
    }

    @Test
    void unorderedRetryableUpdateInTheCriticalSection_stopsAtItsFirstStatement_andRepeatsStaleConfigForTheRest()
            throws Exception {
        try (Fixture f = new Fixture()) {
            EmulatedNode donor = f.cluster.shard("shard00");
            long staleBefore = f.cluster.shardSet(0).staleConfigReplies(donor);
            BsonDocument update = BsonDocument.parse("{update: 'items', ordered: false, updates: ["
                    + "{q: {_id: 5}, u: {$inc: {n: 1}}}, {q: {_id: 6}, u: {$inc: {n: 1}}},"
                    + " {q: {_id: 7}, u: {$inc: {n: 1}}}], txnNumber: NumberLong(1)}");
            CompletableFuture<BsonDocument> sent;
            try (MigrationFailPoints.Hang hang = f.cluster.migrationFailPoints().enable("moveChunkHangAtStep5")) {
                CompletableFuture<ChunkMigration> move = f.moveAsync();
                assertThat(hang.awaitReached(WAIT)).isTrue();
                sent = CompletableFuture.supplyAsync(
                        () -> f.client.getDatabase("shop").runCommand(f.session, update, BsonDocument.class));
                f.awaitReceivedOnTheDonor("update");
                hang.release();
                move.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            }
            BsonDocument reply = sent.get(WAIT.toSeconds(), TimeUnit.SECONDS);

            assertThat(reply.containsKey("writeErrors")).isFalse();
            assertThat(reply.getNumber("nModified").intValue()).isEqualTo(1);
            assertThat(f.cluster.shardSet(0).staleConfigReplies(donor) - staleBefore)
                    .as("one StaleConfig for the command, not one per statement")
                    .isEqualTo(1);
        }
    }

    @Test
    void openTransactionThatWroteTheChunk_holdsTheCriticalSectionOff_soTheMigrationFails_andTheCommitIsReadable() {
        try (Fixture f = new Fixture()) {
            com.mongodb.client.MongoCollection<Document> items =
                    f.client.getDatabase("shop").getCollection("items");
            f.session.startTransaction();
            items.insertOne(f.session, new Document("_id", 6));

            assertThatThrownBy(() ->
                            f.cluster.moveChunk("shop.items", new BsonDocument("_id", new BsonInt32(5)), "shard01"))
                    .hasMessageContaining("LockTimeout");
            f.session.commitTransaction();

            assertThat(items.find(new Document("_id", 6)).first())
                    .as("committed where the chunk still is, not an orphan")
                    .isNotNull();
            f.cluster.moveChunk("shop.items", new BsonDocument("_id", new BsonInt32(5)), "shard01");
            assertThat(items.countDocuments()).isEqualTo(2);
            assertThat(f.ids("shard01")).containsExactly(5, 6);
        }
    }

    @Test
    void transactionWriteArrivingInTheCriticalSection_waits_thenFailsWithATransientTransactionError() throws Exception {
        try (Fixture f = new Fixture()) {
            com.mongodb.client.MongoCollection<Document> items =
                    f.client.getDatabase("shop").getCollection("items");
            CompletableFuture<Throwable> insert;
            try (MigrationFailPoints.Hang hang = f.cluster.migrationFailPoints().enable("moveChunkHangAtStep5")) {
                CompletableFuture<ChunkMigration> move = f.moveAsync();
                assertThat(hang.awaitReached(WAIT)).isTrue();
                f.session.startTransaction();
                insert = CompletableFuture.supplyAsync(() -> org.assertj.core.api.Assertions.catchThrowable(
                        () -> items.insertOne(f.session, new Document("_id", 7))));
                f.awaitReceivedOnTheDonor("insert");
                hang.release();
                move.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            }
            Throwable thrown = insert.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            f.session.abortTransaction();

            assertThat(thrown)
                    .isInstanceOfSatisfying(
                            com.mongodb.MongoException.class,
                            e -> assertThat(e.hasErrorLabel("TransientTransactionError"))
                                    .isTrue());
            assertThat(f.ids("shard00")).containsExactly(5);
            assertThat(f.ids("shard01")).containsExactly(5);
        }
    }

    @Test
    void orderedBulkAcrossTheMovingChunk_everyWriteOnce_theStaleOnesResent() throws Exception {
        try (Fixture f = new Fixture()) {
            MongoCollection<Document> items = f.client.getDatabase("shop").getCollection("items");
            CompletableFuture<Void> bulk;
            try (MigrationFailPoints.Hang hang = f.cluster.migrationFailPoints().enable("moveChunkHangAtStep5")) {
                CompletableFuture<ChunkMigration> move = f.moveAsync();
                assertThat(hang.awaitReached(WAIT)).isTrue();
                bulk = CompletableFuture.runAsync(() -> items.insertMany(
                        List.of(new Document("_id", 7), new Document("_id", 8), new Document("_id", 12))));
                f.awaitReceivedOnTheDonor("insert");
                hang.release();
                move.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            }
            bulk.get(WAIT.toSeconds(), TimeUnit.SECONDS);

            assertThat(f.ids("shard01")).containsExactly(5, 7, 8, 12);
            assertThat(f.ids("shard00")).containsExactly(5);
            RoutedWrite routed = f.cluster.routing().last();
            assertThat(routed.childBatches())
                    .as("the stale batch to the donor, then one batch to the recipient")
                    .isEqualTo(2);
        }
    }

    @Test
    void retryableInsertOnTheDonorWhileCloning_isCarried_andItsRetryIsRecognisedOnTheRecipient() throws Exception {
        try (Fixture f = new Fixture()) {
            try (MigrationFailPoints.Hang hang = f.cluster.migrationFailPoints().enable("moveChunkHangAtStep3")) {
                CompletableFuture<ChunkMigration> move = f.moveAsync();
                assertThat(hang.awaitReached(WAIT)).isTrue();
                // After the clone, before the critical section: the donor still owns the chunk and applies it.
                assertThat(f.retryableInsert(6, 1).getNumber("n").intValue()).isEqualTo(1);
                hang.release();
                move.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            }
            BsonDocument retry = f.retryableInsert(6, 1);

            assertThat(retry.containsKey("writeErrors")).as("not run again").isFalse();
            assertThat(f.ids("shard01")).containsExactly(5, 6);
            assertThat(f.cluster.shard("shard01").truth().commands("insert"))
                    .singleElement()
                    .satisfies(c -> assertThat(c.outcome()).isEqualTo(ReceivedCommand.Outcome.RETRIED_RESULT));
        }
    }

    @Test
    void findAndModifyInTheCriticalSection_runsOnceOnTheRecipient() throws Exception {
        try (Fixture f = new Fixture()) {
            MongoCollection<Document> items = f.client.getDatabase("shop").getCollection("items");
            CompletableFuture<Document> before;
            try (MigrationFailPoints.Hang hang = f.cluster.migrationFailPoints().enable("moveChunkHangAtStep5")) {
                CompletableFuture<ChunkMigration> move = f.moveAsync();
                assertThat(hang.awaitReached(WAIT)).isTrue();
                before = CompletableFuture.supplyAsync(
                        () -> items.findOneAndUpdate(Filters.eq("_id", 5), Updates.inc("n", 1)));
                f.awaitReceivedOnTheDonor("findAndModify");
                hang.release();
                move.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            }
            assertThat(before.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(new Document("_id", 5));
            assertThat(items.find(Filters.eq("_id", 5)).first()).isEqualTo(new Document("_id", 5).append("n", 1));
            assertThat(f.cluster.routing().staleWriteBatches()).isEqualTo(1);
        }
    }

    @Test
    void writeRunningOnTheDonor_holdsTheCriticalSectionBack_andOutlastingTheLockWait_failsTheMigration() {
        CollectionCriticalSections sections = new CollectionCriticalSections();
        CollectionCriticalSections.Admission running = sections.admitWrite("shop.items");
        assertThat(running.admitted()).isTrue();

        assertThatThrownBy(() -> sections.enter("shop.items", Duration.ofMillis(50)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("LockTimeout")
                .hasMessageContaining("migrationLockAcquisitionMaxWaitMS");
        assertThat(sections.inCriticalSection("shop.items")).isFalse();

        running.release();
        CollectionCriticalSections.Held held = sections.enter("shop.items", Duration.ofMillis(50));
        CollectionCriticalSections.Admission arriving = sections.admitWrite("shop.items");
        assertThat(arriving.admitted()).isFalse();
        assertThat(arriving.criticalSection()).isNotDone();
        held.exit();
        assertThat(arriving.criticalSection()).isDone();
        assertThat(sections.admitWrite("shop.items").admitted()).isTrue();
    }

    /** {@code _id} ranged, [MinKey, 10) on shard00 holding {@code {_id: 5}}, [10, MaxKey) on shard01. */
    private static final class Fixture implements AutoCloseable {
        final EmulatedShardedCluster cluster =
                EmulatedCluster.sharded().shards(2).start();
        final MongoClient client = Clients.client(cluster.connectionString(), b -> b.retryWrites(false));
        final ClientSession session = client.startSession();
        final java.util.Map<String, Integer> receivedOnTheDonor = new java.util.HashMap<>();

        Fixture() {
            ShardKey key = cluster.shardCollection("shop.items", ShardKey.of(new BsonDocument("_id", new BsonInt32(1))))
                    .key();
            cluster.placeChunks(
                    "shop.items",
                    ChunkMap.splitAt(key, List.of(new BsonInt32(10)), List.of("shard00", "shard01"))
                            .chunks());
            client.getDatabase("shop").getCollection("items").insertOne(new Document("_id", 5));
            receivedOnTheDonor.put(
                    "insert",
                    cluster.shard("shard00").truth().commands("insert").size());
            cluster.routing().reset();
        }

        CompletableFuture<ChunkMigration> moveAsync() {
            return CompletableFuture.supplyAsync(
                    () -> cluster.moveChunk("shop.items", new BsonDocument("_id", new BsonInt32(5)), "shard01"));
        }

        /** A retryable insert of {@code {_id: id}} on the fixture's session with {@code txnNumber}. */
        BsonDocument retryableInsert(int id, long txnNumber) {
            return client.getDatabase("shop")
                    .runCommand(
                            session,
                            new BsonDocument("insert", new BsonString("items"))
                                    .append(
                                            "documents",
                                            new BsonArray(List.of(new BsonDocument("_id", new BsonInt32(id)))))
                                    .append("txnNumber", new BsonInt64(txnNumber)),
                            BsonDocument.class);
        }

        /** Waits until the donor received one more {@code command} (it then waits on the critical section). */
        void awaitReceivedOnTheDonor(String command) throws InterruptedException {
            int before = receivedOnTheDonor.getOrDefault(command, 0);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (cluster.shard("shard00").truth().commands(command).size() <= before) {
                assertThat(System.nanoTime())
                        .as("the donor never received the " + command)
                        .isLessThan(deadline);
                Thread.sleep(5);
            }
        }

        /** The {@code _id}s stored on a shard's engine, orphans included. */
        List<Integer> ids(String shard) {
            List<Integer> ids = new ArrayList<>();
            Engines.findAll(cluster.shard(shard).engine(), "shop", "items", new BsonDocument())
                    .forEach(d -> ids.add(d.getInt32("_id").getValue()));
            ids.sort(null);
            return ids;
        }

        @Override
        public void close() {
            session.close();
            client.close();
            cluster.close();
        }
    }
}
