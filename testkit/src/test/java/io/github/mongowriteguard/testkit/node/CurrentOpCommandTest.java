package io.github.mongowriteguard.testkit.node;

import static io.github.mongowriteguard.testkit.Clients.waitForOps;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoClient;
import com.mongodb.client.model.InsertOneOptions;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * {@link CurrentOpCommand}: {@code currentOp} and {@code $currentOp} show running writes with their session,
 * transaction number and comment, and never wait for them (mongodb/mongo {@code src/mongo/db/commands/current_op.cpp},
 * {@code src/mongo/db/curop.cpp}).
 */
class CurrentOpCommandTest {

    @Test
    void currentOp_listsARunningWriteWithItsSessionTxnNumberCommentAndAppName() throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient writer = Clients.client(cluster.connectionString(), b -> b.applicationName("writer"));
                MongoClient observer = Clients.client(cluster.connectionString());
                StallHandle stall = cluster.primary().stall(Stall.uninterruptible("intro.c", Duration.ofMillis(700)))) {
            ExecutorService pool = Executors.newSingleThreadExecutor();
            pool.submit(() -> writer.getDatabase("intro")
                    .getCollection("c")
                    .insertOne(new Document("v", 1), new InsertOneOptions().comment("order-42")));

            Document op = waitForOps(observer, new Document("command.comment", "order-42"), 1)
                    .get(0);

            assertThat(op.get("opid")).isNotNull();
            assertThat(op.getString("ns")).isEqualTo("intro.c");
            assertThat(op.getString("op")).isEqualTo("insert");
            assertThat(op.getString("appName")).isEqualTo("writer");
            assertThat(op.get("secs_running", Number.class).longValue()).isGreaterThanOrEqualTo(0);
            Document command = op.get("command", Document.class);
            assertThat(command).containsKeys("lsid", "txnNumber", "comment");
            pool.shutdown();
            assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void currentOpAggregation_groupsRunningWritesByLsidAndTxnNumber() throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient writer = Clients.client(cluster.connectionString(), b -> b.applicationName("writer"));
                MongoClient observer = Clients.client(cluster.connectionString());
                StallHandle stall = cluster.primary().stall(Stall.uninterruptible("intro.c", Duration.ofSeconds(1)))) {
            ExecutorService pool = Executors.newFixedThreadPool(3);
            for (int i = 0; i < 3; i++) {
                pool.submit(() -> writer.getDatabase("intro").getCollection("c").insertOne(new Document("v", 1)));
            }
            waitForOps(observer, new Document("ns", "intro.c"), 3);

            List<Document> groups = observer.getDatabase("admin")
                    .aggregate(List.of(
                            new Document("$currentOp", new Document("allUsers", true)),
                            new Document("$match", new Document("ns", "intro.c")),
                            new Document(
                                    "$group",
                                    new Document(
                                                    "_id",
                                                    new Document("lsid", "$command.lsid.id")
                                                            .append("txnNumber", "$command.txnNumber"))
                                            .append("n", new Document("$sum", 1)))))
                    .into(new ArrayList<>());

            assertThat(groups)
                    .hasSize(3)
                    .allSatisfy(g -> assertThat(g.getInteger("n")).isEqualTo(1));
            pool.shutdown();
            assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        }
    }

    /**
     * A command queued at the session check-out (here the driver's resend, behind its stalled original) is listed with
     * its {@code ns} (the collection: mongod sets CurOp's namespace from the parsed command's {@code ns()} before the
     * check-out, 4.2+ {@code service_entry_point_common.cpp}, {@code setGenericOpRequestDetails}) and already with
     * {@code secs_running}/{@code microsecs_running}: {@code CurOp::ensureStarted()} runs at the end of the dispatch
     * checks, before the check-out ({@code src/mongo/db/service_entry_point_common.cpp}: 4.4
     * {@code execCommandDatabase} before {@code runCommandImpl}/{@code invokeWithSessionCheckedOut}; 5.0+
     * {@code ExecCommandDatabase::_initiateCommand} before {@code CheckoutSessionAndInvokeCommand::_checkOutSession},
     * in {@code service_entry_point_shard_role.cpp} on 8.0+),
     * and {@code curop.cpp} {@code reportState} reports the clock once started. The write path's own
     * {@code ensureStarted} ({@code write_ops_exec.cpp} {@code performInserts}) finds it started. The resend's clock
     * started after its original's, so it shows less time running.
     */
    @Test
    void aResendWaitingAtTheSessionCheckOut_isListedWithSecsRunningCountedFromItsArrival() throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient writer = Clients.client(
                        cluster.connectionString(),
                        b -> b.applyToSocketSettings(s -> s.readTimeout(150, TimeUnit.MILLISECONDS)));
                MongoClient observer = Clients.client(cluster.connectionString());
                StallHandle stall =
                        cluster.primary().stall(Stall.uninterruptible("intro.wait", Duration.ofSeconds(2)))) {
            assertThatThrownBy(() ->
                            writer.getDatabase("intro").getCollection("wait").insertOne(new Document("v", 1)))
                    .isInstanceOf(com.mongodb.MongoSocketException.class);

            List<Document> ops = new ArrayList<>(waitForOps(observer, new Document("ns", "intro.wait"), 2));
            ops.sort(java.util.Comparator.comparingLong(
                    op -> op.get("opid", Number.class).longValue()));

            assertThat(ops).hasSize(2);
            assertThat(ops)
                    .extracting(op -> op.get("lsid"))
                    .containsOnly(ops.get(0).get("lsid"));
            assertThat(ops)
                    .allSatisfy(op -> assertThat(op)
                            .containsKeys("secs_running", "microsecs_running")
                            .containsEntry("op", "insert"));
            long originalMicros =
                    ops.get(0).get("microsecs_running", Number.class).longValue();
            long resendMicros =
                    ops.get(1).get("microsecs_running", Number.class).longValue();
            assertThat(resendMicros).isLessThan(originalMicros);
            stall.release();
            assertThat(cluster.truth().awaitIdle(c -> true, Duration.ofSeconds(10)))
                    .isTrue();
        }
    }

    @Test
    void tenHeldWrites_neverBlockHeartbeatsOtherClientsOrCurrentOp() throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient writer = Clients.client(cluster.connectionString());
                MongoClient other = Clients.client(cluster.connectionString());
                StallHandle stall =
                        cluster.primary().stall(Stall.uninterruptible("intro.held", Duration.ofSeconds(30)))) {
            ExecutorService pool = Executors.newFixedThreadPool(10);
            for (int i = 0; i < 10; i++) {
                pool.submit(
                        () -> writer.getDatabase("intro").getCollection("held").insertOne(new Document("v", 1)));
            }
            waitForOps(other, new Document("ns", "intro.held"), 10);

            other.getDatabase("admin").runCommand(new Document("ping", 1));
            other.getDatabase("intro").getCollection("free").insertOne(new Document("v", 1));
            assertThat(other.getDatabase("intro").getCollection("free").countDocuments())
                    .isEqualTo(1);
            assertThat(other.getDatabase("admin")
                            .runCommand(new Document("hello", 1))
                            .getBoolean("isWritablePrimary"))
                    .isTrue();

            stall.release();
            pool.shutdown();
            assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
            assertThat(other.getDatabase("intro").getCollection("held").countDocuments())
                    .isEqualTo(10);
        }
    }
}
