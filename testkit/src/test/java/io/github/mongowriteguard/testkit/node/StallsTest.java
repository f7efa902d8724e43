package io.github.mongowriteguard.testkit.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * An uninterruptible stall is work that checks no interrupt while it runs, as a storage write inside a section that
 * does not check for interruption (mongodb/mongo {@code src/mongo/db/concurrency/locker.h}
 * {@code UninterruptibleLockGuard}; a WiredTiger write loop): the statement it holds is written whatever a kill or the
 * deadline says. The kill is seen at the command's next interrupt point, as everywhere
 * ({@code src/mongo/db/ops/write_ops_exec.cpp}: between statements; {@code handleError} fails the command there), so a
 * single-statement write answers {@code ok} and is applied, and a command of several statements fails with
 * {@code Interrupted} (11601) after the stalled statement, which stays applied.
 */
class StallsTest {

    /** Runs {@code command} on a session while an 800 ms uninterruptible stall holds it, killing its session then. */
    private static Object killedDuringTheStall(EmulatedReplicaSet cluster, MongoClient client, Document command)
            throws Exception {
        try (ClientSession session = client.startSession();
                StallHandle stall = cluster.primary().stall(Stall.uninterruptible("us.c", Duration.ofMillis(800)))) {
            CompletableFuture<Object> call = CompletableFuture.supplyAsync(() -> {
                try {
                    return client.getDatabase("us").runCommand(session, command);
                } catch (MongoException e) {
                    return e;
                }
            });
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (cluster.primary().commandCount(command.keySet().iterator().next()) == 0
                    && System.nanoTime() < until) {
                Thread.sleep(10);
            }
            Thread.sleep(100);
            assertThat(cluster.primary().killSessions(Set.of()))
                    .as("the held write was killed")
                    .isPositive();
            return call.get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void killedSingleStatementWrite_runsToItsEnd_answersOk_andIsWritten() throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString(), b -> b.retryWrites(false))) {
            Object result = killedDuringTheStall(
                    cluster, client, Document.parse("{insert: 'c', documents: [{_id: 1}], txnNumber: NumberLong(1)}"));

            assertThat(result)
                    .isInstanceOfSatisfying(
                            Document.class,
                            reply -> assertThat(reply.get("n", Number.class).intValue())
                                    .isEqualTo(1));
            assertThat(client.getDatabase("us").getCollection("c").countDocuments())
                    .isEqualTo(1);
        }
    }

    @Test
    void killedCommandOfTwoStatements_writesTheStalledOne_thenFailsWithInterruptedAtTheNextPoint() throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString(), b -> b.retryWrites(false))) {
            client.getDatabase("us").getCollection("c").insertOne(new Document("_id", 1).append("n", 0));

            Object result = killedDuringTheStall(
                    cluster,
                    client,
                    Document.parse("{update: 'c', updates: [{q: {_id: 1}, u: {$inc: {n: 1}}},"
                            + " {q: {_id: 1}, u: {$inc: {n: 10}}}], txnNumber: NumberLong(1)}"));

            assertThat(result)
                    .isInstanceOfSatisfying(
                            MongoException.class, e -> assertThat(e.getCode()).isEqualTo(11601));
            assertThat(client.getDatabase("us")
                            .getCollection("c")
                            .find()
                            .first()
                            .getInteger("n"))
                    .as("the stalled statement applied, the next one not")
                    .isEqualTo(1);
        }
    }
}
