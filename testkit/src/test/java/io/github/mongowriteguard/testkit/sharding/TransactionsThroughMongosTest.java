package io.github.mongowriteguard.testkit.sharding;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoException;
import com.mongodb.ReadConcern;
import com.mongodb.TransactionOptions;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Multi-document transactions through the emulated mongos and the real driver, as mongos runs them (mongodb/mongo
 * {@code src/mongo/s/transaction_router.cpp}, {@code src/mongo/s/commands/cluster_commit_transaction_cmd.cpp},
 * {@code cluster_abort_transaction_cmd.cpp}, {@code src/mongo/s/write_ops/batch_write_exec.cpp}). The collection is
 * split at {@code _id} 100: below on shard00, from 100 on shard01. Every transaction here uses readConcern majority,
 * so a shard would refuse a statement that carried it without being the transaction's first there, or miss
 * {@code startTransaction} on its first: the routing of the transaction fields is checked by the shards themselves.
 */
class TransactionsThroughMongosTest {
    private static final TransactionOptions MAJORITY =
            TransactionOptions.builder().readConcern(ReadConcern.MAJORITY).build();

    private EmulatedShardedCluster cluster;
    private MongoClient client;
    private MongoCollection<Document> c;

    @BeforeEach
    void splitAcrossTwoShards() {
        cluster = EmulatedCluster.sharded().shards(2).start();
        ShardKey key = cluster.shardCollection("txn.c", ShardKey.of(new BsonDocument("_id", new BsonInt32(1))))
                .key();
        cluster.placeChunks(
                "txn.c",
                ChunkMap.splitAt(key, List.of(new BsonInt32(100)), List.of("shard00", "shard01"))
                        .chunks());
        client = Clients.client(cluster.connectionString());
        c = client.getDatabase("txn").getCollection("c");
        c.insertMany(List.of(new Document("_id", 0).append("v", 0), new Document("_id", 100).append("v", 0)));
    }

    @AfterEach
    void close() {
        client.close();
        cluster.close();
    }

    private List<Document> all() {
        return c.find().sort(new Document("_id", 1)).into(new ArrayList<>());
    }

    @Test
    void aCommitAcrossTwoShards_isInvisibleBefore_visibleAfter_andReadsInsideSeeTheTransactionsWrites() {
        List<Document> before = all();
        try (ClientSession session = client.startSession()) {
            session.startTransaction(MAJORITY);
            c.insertOne(session, new Document("_id", 1));
            c.insertOne(session, new Document("_id", 101));
            c.updateMany(session, Filters.in("_id", 0, 100), Updates.set("v", 1));
            Document returned = c.findOneAndUpdate(session, Filters.eq("_id", 101), Updates.set("w", 2));

            assertThat(returned).isEqualTo(new Document("_id", 101));
            List<Document> inside = List.of(
                    new Document("_id", 0).append("v", 1),
                    new Document("_id", 1),
                    new Document("_id", 100).append("v", 1),
                    new Document("_id", 101).append("w", 2));
            assertThat(c.find(session).sort(new Document("_id", 1)).into(new ArrayList<>()))
                    .isEqualTo(inside);
            assertThat(c.countDocuments(session)).isEqualTo(4);
            assertThat(c.find(session, Filters.eq("_id", 101)).first())
                    .isEqualTo(new Document("_id", 101).append("w", 2));
            assertThat(all()).as("outside, before commit").isEqualTo(before);
            assertThat(cluster.shard(0).openTransactions()).isEqualTo(1);
            assertThat(cluster.shard(1).openTransactions()).isEqualTo(1);

            session.commitTransaction();

            assertThat(all()).isEqualTo(inside);
            assertThat(cluster.shard(0).openTransactions()).isZero();
            assertThat(cluster.shard(1).openTransactions()).isZero();
            assertThat(cluster.shard(0).truth().commands("commitTransaction")).hasSize(1);
            assertThat(cluster.shard(1).truth().commands("commitTransaction")).hasSize(1);
        }
    }

    @Test
    void aReaderThroughMongos_neverSeesHalfOfATwoShardCommit() throws InterruptedException {
        long seed = System.nanoTime();
        System.out.println("TransactionsThroughMongosTest seed " + seed);
        Random random = new Random(seed);
        AtomicBoolean done = new AtomicBoolean();
        List<Long> odd = new CopyOnWriteArrayList<>();
        AtomicInteger reads = new AtomicInteger();
        Thread reader = new Thread(() -> {
            while (!done.get()) {
                // Pairs (i, 100 + i) are written by one transaction each: a committed state has an even count.
                long count = c.countDocuments(Filters.nin("_id", 0, 100));
                reads.incrementAndGet();
                if (count % 2 != 0) {
                    odd.add(count);
                }
            }
        });
        reader.start();
        int transactions = 20 + random.nextInt(10);
        try (ClientSession session = client.startSession()) {
            for (int i = 1; i <= transactions; i++) {
                int id = i;
                session.withTransaction(
                        () -> {
                            c.insertOne(session, new Document("_id", id));
                            c.insertOne(session, new Document("_id", 100 + id));
                            return null;
                        },
                        MAJORITY);
            }
        } finally {
            done.set(true);
            reader.join();
        }
        assertThat(reads.get()).isPositive();
        assertThat(odd).as("counts seen between the two shards' commits").isEmpty();
        assertThat(c.countDocuments()).isEqualTo(2 + 2L * transactions);
    }

    @Test
    void abortDiscardsOnEveryShard() {
        List<Document> before = all();
        try (ClientSession session = client.startSession()) {
            session.startTransaction(MAJORITY);
            c.insertOne(session, new Document("_id", 2));
            c.deleteOne(session, Filters.eq("_id", 100));
            assertThat(c.countDocuments(session)).isEqualTo(2);

            session.abortTransaction();
        }
        assertThat(all()).isEqualTo(before);
        assertThat(cluster.shard(0).openTransactions()).isZero();
        assertThat(cluster.shard(1).openTransactions()).isZero();
        assertThat(cluster.shard(0).truth().commands("abortTransaction")).hasSize(1);
        assertThat(cluster.shard(1).truth().commands("abortTransaction")).hasSize(1);
    }

    @Test
    void aWriteConflictOnOneShard_abortsEveryParticipant_andIsATransientErrorThatWithTransactionRetries() {
        List<MongoException> conflicts = new ArrayList<>();
        List<Integer> openAfterConflict = new ArrayList<>();
        AtomicInteger attempts = new AtomicInteger();
        try (ClientSession holder = client.startSession();
                ClientSession session = client.startSession()) {
            holder.startTransaction(MAJORITY);
            c.updateOne(holder, Filters.eq("_id", 100), Updates.inc("v", 10));

            Object result = session.withTransaction(
                    () -> {
                        if (attempts.incrementAndGet() == 2) {
                            holder.commitTransaction();
                        }
                        c.insertOne(session, new Document("_id", 3));
                        try {
                            return c.updateOne(session, Filters.eq("_id", 100), Updates.inc("v", 1))
                                    .getModifiedCount();
                        } catch (MongoException e) {
                            conflicts.add(e);
                            openAfterConflict.add(cluster.shard(0).openTransactions()
                                    + cluster.shard(1).openTransactions());
                            throw e;
                        }
                    },
                    MAJORITY);

            assertThat(result).isEqualTo(1L);
        }
        assertThat(attempts.get()).isEqualTo(2);
        assertThat(conflicts).singleElement().satisfies(e -> {
            assertThat(e.getCode()).isEqualTo(112);
            assertThat(e.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL))
                    .isTrue();
            assertThat(e.getMessage()).contains("during a transaction");
        });
        assertThat(openAfterConflict)
                .as("shard00's participant aborted by mongos, the holder's still open")
                .containsExactly(1);
        assertThat(all())
                .containsExactly(
                        new Document("_id", 0).append("v", 0),
                        new Document("_id", 3),
                        new Document("_id", 100).append("v", 11));
    }

    @Test
    void aCommitRetriedAnswersTheSame_onTwoShards_andOnOne() {
        try (ClientSession session = client.startSession()) {
            session.startTransaction(MAJORITY);
            c.insertOne(session, new Document("_id", 4));
            c.insertOne(session, new Document("_id", 104));
            session.commitTransaction();
            session.commitTransaction();

            session.startTransaction(MAJORITY);
            c.insertOne(session, new Document("_id", 5));
            session.commitTransaction();
            session.commitTransaction();
        }
        assertThat(all()).extracting(d -> d.get("_id")).containsExactly(0, 4, 5, 100, 104);
        assertThat(cluster.shard(0).truth().commands("commitTransaction")).hasSize(4);
        assertThat(cluster.shard(1).truth().commands("commitTransaction")).hasSize(2);
    }
}
