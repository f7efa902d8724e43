package io.github.mongowriteguard.testkit.stall;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoExecutionTimeoutException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** Server time: maxTimeMS, killOp and killSessions at interrupt points; uninterruptible work runs to its end. */
class ServerTimeTest {
    private static final Document INSERT_WITH_DEADLINE =
            Document.parse("{insert: 'c', documents: [{v: 1}], maxTimeMS: 100}");

    @Test
    void interruptibleStall_endsAtTheDeadlineWithMaxTimeMSExpired_andWritesNothing() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString());
                StallHandle stall = cluster.primary().stall(Stall.interruptible("time.c", Duration.ofSeconds(10)))) {
            MongoDatabase db = client.getDatabase("time");

            assertThatThrownBy(() -> db.runCommand(INSERT_WITH_DEADLINE))
                    .isInstanceOfSatisfying(
                            MongoExecutionTimeoutException.class,
                            e -> assertThat(e.getCode()).isEqualTo(50));
            stall.release();
            assertThat(db.getCollection("c").countDocuments()).isZero();
        }
    }

    @Test
    void uninterruptibleStall_ignoresTheDeadline_andWrites() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString());
                StallHandle stall = cluster.primary().stall(Stall.uninterruptible("time.c", Duration.ofMillis(300)))) {
            MongoDatabase db = client.getDatabase("time");

            Document reply = db.runCommand(INSERT_WITH_DEADLINE);

            assertThat(reply.get("n", Number.class).intValue()).isEqualTo(1);
            assertThat(db.getCollection("c").countDocuments()).isEqualTo(1);
        }
    }

    @Test
    void socketTimeout_doesNotStopTheWrite_itIsAppliedWhenTheStallEnds() throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient impatient = Clients.client(
                        cluster.connectionString(),
                        b -> b.retryWrites(false)
                                .applyToSocketSettings(s -> s.readTimeout(100, TimeUnit.MILLISECONDS)));
                MongoClient observer = Clients.client(cluster.connectionString());
                StallHandle stall = cluster.primary().stall(Stall.interruptible("time.c", Duration.ofMillis(500)))) {

            assertThatThrownBy(() ->
                            impatient.getDatabase("time").getCollection("c").insertOne(new Document("v", 1)))
                    .isInstanceOf(MongoSocketReadTimeoutException.class);
            assertThat(observer.getDatabase("time").getCollection("c").countDocuments())
                    .isZero();

            assertThat(cluster.truth().awaitIdle(c -> c.commandName().equals("insert"), Duration.ofSeconds(10)))
                    .isTrue();
            assertThat(observer.getDatabase("time").getCollection("c").countDocuments())
                    .isEqualTo(1);
        }
    }

    @Test
    void killOp_interruptsAnInterruptibleStall() throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString());
                StallHandle stall = cluster.primary().stall(Stall.interruptible("time.c", Duration.ofSeconds(10)))) {
            MongoDatabase db = client.getDatabase("time");
            CompletableFuture<Document> write = CompletableFuture.supplyAsync(
                    () -> db.runCommand(Document.parse("{insert: 'c', documents: [{v: 1}]}")));
            Document op = awaitOne(client, "time.c");

            client.getDatabase("admin").runCommand(new Document("killOp", 1).append("op", op.get("opid")));

            assertThatThrownBy(write::join)
                    .hasCauseInstanceOf(MongoCommandException.class)
                    .cause()
                    .satisfies(e -> assertThat(((MongoCommandException) e).getErrorCode())
                            .isEqualTo(11601));
            stall.release();
            assertThat(db.getCollection("c").countDocuments()).isZero();
        }
    }

    @Test
    void killSessions_interruptsTheSessionsOperations_butNotUninterruptibleWork() throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString());
                StallHandle stall = cluster.primary().stall(Stall.uninterruptible("time.c", Duration.ofMillis(600)))) {
            MongoDatabase db = client.getDatabase("time");
            CompletableFuture<Void> write =
                    CompletableFuture.runAsync(() -> db.getCollection("c").insertOne(new Document("v", 1)));
            Document op = awaitOne(client, "time.c");

            client.getDatabase("admin").runCommand(new Document("killSessions", List.of(op.get("lsid"))));

            write.get(10, TimeUnit.SECONDS);
            assertThat(db.getCollection("c").countDocuments()).isEqualTo(1);
            assertThat(cluster.truth().commands("insert"))
                    .singleElement()
                    .satisfies(c -> assertThat(c.outcome()).isEqualTo(ReceivedCommand.Outcome.OK));
        }
    }

    @Test
    void stallOnOneNamespace_leavesOthersAlone() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(
                        cluster.connectionString(),
                        b -> b.applyToSocketSettings(s -> s.readTimeout(2, TimeUnit.SECONDS)));
                StallHandle stall =
                        cluster.primary().stall(Stall.uninterruptible("time.slow", Duration.ofSeconds(30)))) {
            client.getDatabase("time").getCollection("fast").insertOne(new Document("v", 1));

            assertThat(client.getDatabase("time").getCollection("fast").countDocuments())
                    .isEqualTo(1);
        }
    }

    static Document awaitOne(MongoClient client, String ns) throws InterruptedException {
        for (int i = 0; i < 1000; i++) {
            List<Document> inprog = client.getDatabase("admin")
                    .runCommand(new Document("currentOp", 1).append("ns", ns))
                    .getList("inprog", Document.class);
            if (!inprog.isEmpty()) {
                return inprog.get(0);
            }
            Thread.sleep(5);
        }
        throw new AssertionError("no operation on " + ns + " appeared in currentOp");
    }
}
