package io.github.mongowriteguard.testkit.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.MongoException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * Interrupt points between the statements of a write command (mongodb/mongo {@code src/mongo/db/ops/write_ops_exec.cpp}:
 * each statement takes its locks, which checks for interruption and the deadline; {@code handleError} rethrows an
 * interruption, "These have always failed the whole batch"): a kill, a stepdown or the deadline between statements
 * fails the command with its code while the statements before stay applied. An insert's documents run in groups of 64
 * ({@code performInserts} fills a batch up to {@code internalInsertMaxBatchSize}, then {@code insertBatchAndHandleErrors}
 * takes the collection lock for it), so its points are between groups.
 */
class InterruptPointsTest {

    private static final Document THREE_INCS = Document.parse("{update: 'c', updates: ["
            + "{q: {_id: 1}, u: {$inc: {n: 1}}}, {q: {_id: 2}, u: {$inc: {n: 1}}}, {q: {_id: 3}, u: {$inc: {n: 1}}}],"
            + " ordered: true, txnNumber: NumberLong(1)}");

    private static void seed(MongoCollection<Document> c) {
        c.insertMany(List.of(
                new Document("_id", 1).append("n", 0),
                new Document("_id", 2).append("n", 0),
                new Document("_id", 3).append("n", 0)));
    }

    private static List<Integer> counts(MongoCollection<Document> c) {
        return List.of(1, 2, 3).stream()
                .map(id -> c.find(Filters.eq("_id", id)).first().getInteger("n"))
                .toList();
    }

    private static MongoException runPaused(
            EmulatedReplicaSet cluster, MongoClient client, Document command, Runnable interrupt) throws Exception {
        try (StallHandle pause = cluster.primary().pauseAfterStatements("ip.c", 1, Duration.ofSeconds(20));
                ClientSession session = client.startSession()) {
            CompletableFuture<MongoException> call = CompletableFuture.supplyAsync(() -> catchThrowableOfType(
                    MongoException.class, () -> client.getDatabase("ip").runCommand(session, command)));
            awaitPaused(cluster);
            interrupt.run();
            return call.get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void stepdownBetweenStatements_failsTheCommandWithInterruptedDueToReplStateChange_afterTheFirstApplied()
            throws Exception {
        try (EmulatedReplicaSet cluster =
                        EmulatedCluster.replicaSet().members(3).start();
                MongoClient client = Clients.client(cluster.connectionString(), b -> b.retryWrites(false))) {
            MongoCollection<Document> c = client.getDatabase("ip").getCollection("c");
            seed(c);
            cluster.awaitReplication(Duration.ofSeconds(5));

            MongoException e = runPaused(
                    cluster, client, THREE_INCS, () -> cluster.stepDown(Duration.ofSeconds(1), Duration.ZERO, true));
            cluster.awaitPrimary(Duration.ofSeconds(10));
            cluster.awaitReplication(Duration.ofSeconds(5));

            assertThat(e).isNotNull();
            assertThat(e.getCode()).isEqualTo(11602);
            assertThat(counts(c)).containsExactly(1, 0, 0);
        }
    }

    @Test
    void killBetweenStatements_failsTheCommandWithInterrupted_afterTheFirstApplied() throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString(), b -> b.retryWrites(false))) {
            MongoCollection<Document> c = client.getDatabase("ip").getCollection("c");
            seed(c);

            MongoException e = runPaused(
                    cluster, client, THREE_INCS, () -> cluster.primary().killSessions(Set.of()));

            assertThat(e).isNotNull();
            assertThat(e.getCode()).isEqualTo(11601);
            assertThat(counts(c)).containsExactly(1, 0, 0);
        }
    }

    @Test
    void deadlineBetweenStatements_failsTheCommandWithMaxTimeMSExpired_afterTheFirstApplied() throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString(), b -> b.retryWrites(false))) {
            MongoCollection<Document> c = client.getDatabase("ip").getCollection("c");
            seed(c);
            Document withDeadline = Document.parse(THREE_INCS.toJson()).append("maxTimeMS", 200);

            MongoException e = runPaused(cluster, client, withDeadline, () -> {});

            assertThat(e).isNotNull();
            assertThat(e.getCode()).isEqualTo(50);
            assertThat(counts(c)).containsExactly(1, 0, 0);
        }
    }

    @Test
    void resendOfTheSameTransactionNumber_runsOnlyTheStatementsThatDidNotRun() throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString(), b -> b.retryWrites(false));
                ClientSession session = client.startSession()) {
            MongoCollection<Document> c = client.getDatabase("ip").getCollection("c");
            seed(c);
            try (StallHandle pause = cluster.primary().pauseAfterStatements("ip.c", 1, Duration.ofSeconds(20))) {
                CompletableFuture<MongoException> call = CompletableFuture.supplyAsync(() -> catchThrowableOfType(
                        MongoException.class, () -> client.getDatabase("ip").runCommand(session, THREE_INCS)));
                awaitPaused(cluster);
                cluster.primary().killSessions(Set.of());
                assertThat(call.get(30, TimeUnit.SECONDS).getCode()).isEqualTo(11601);
            }

            Document resent = client.getDatabase("ip").runCommand(session, THREE_INCS);

            assertThat(resent.get("n", Number.class).intValue()).isEqualTo(3);
            assertThat(counts(c)).containsExactly(1, 1, 1);
        }
    }

    @Test
    void retryableInsert_hasAnInterruptPointAfterEachGroupOf64_soTheDeadlineThereLeavesTheFirstGroupApplied()
            throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString(), b -> b.retryWrites(false));
                ClientSession session = client.startSession();
                StallHandle pause = cluster.primary().pauseAfterStatements("ip.d", 1, Duration.ofSeconds(20))) {
            MongoCollection<Document> d = client.getDatabase("ip").getCollection("d");
            Document insert = new Document("insert", "d")
                    .append(
                            "documents",
                            java.util.stream.IntStream.range(0, 100)
                                    .mapToObj(i -> new Document("_id", i))
                                    .toList())
                    .append("txnNumber", 1L);

            MongoException e = catchThrowableOfType(
                    MongoException.class,
                    () -> client.getDatabase("ip").runCommand(session, new Document(insert).append("maxTimeMS", 300)));

            assertThat(e).isNotNull();
            assertThat(e.getCode()).isEqualTo(50);
            assertThat(d.countDocuments())
                    .as("the first group, 64 documents, ran before the point")
                    .isEqualTo(64);
            pause.release();
            Document resent = client.getDatabase("ip").runCommand(session, insert);
            assertThat(resent.get("n", Number.class).intValue()).isEqualTo(100);
            assertThat(d.countDocuments()).isEqualTo(100);
        }
    }

    @Test
    void retryableInsertOfOneGroup_hasNoInterruptPointBetweenItsDocuments() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString(), b -> b.retryWrites(false));
                ClientSession session = client.startSession();
                StallHandle pause = cluster.primary().pauseAfterStatements("ip.d", 1, Duration.ofSeconds(20))) {
            Document reply = client.getDatabase("ip")
                    .runCommand(
                            session,
                            Document.parse("{insert: 'd', documents: [{_id: 1}, {_id: 2}, {_id: 3}],"
                                    + " txnNumber: NumberLong(1), maxTimeMS: 300}"));

            assertThat(reply.get("n", Number.class).intValue()).isEqualTo(3);
        }
    }

    /** Waits until the primary received the update (then a little, for its first statement to run). */
    private static void awaitPaused(EmulatedReplicaSet cluster) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (cluster.primary().commandCount("update") == 0 && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        Thread.sleep(200);
    }
}
