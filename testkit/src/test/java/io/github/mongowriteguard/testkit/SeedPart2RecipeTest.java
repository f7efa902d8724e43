package io.github.mongowriteguard.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoException;
import com.mongodb.MongoExecutionTimeoutException;
import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import io.github.mongowriteguard.testkit.truth.ServerTruth;
import io.github.mongowriteguard.testkit.truth.TxnId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * The articles' part 2 reproduction recipe (write-path.md, section 2), scaled down: a fail point holds every
 * insert longer than the whole run, the client gives up after 200 ms, and the application tries 4 times with
 * an insert whose {@code _id} the driver generates.
 */
class SeedPart2RecipeTest {
    private static final String APP = "retry-lab";
    private static final int ATTEMPTS = 4;
    private static final Predicate<ReceivedCommand> LAB_INSERTS =
            c -> c.commandName().equals("insert") && APP.equals(c.appName());

    @Test
    void retryWritesOn_eachAttemptIsTwoSendsOfOneCopy_andEveryCopyWrites() throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = labClient(cluster, true)) {
            blockInserts(client, 2 * ATTEMPTS, 5_000);

            int failures = applicationLoop(client.getDatabase("lab").getCollection("records"));

            ServerTruth truth = cluster.truth();
            assertThat(failures).isEqualTo(ATTEMPTS);
            assertThat(truth.commands(LAB_INSERTS)).hasSize(2 * ATTEMPTS);
            Map<TxnId, List<ReceivedCommand>> copies = truth.copies(LAB_INSERTS);
            assertThat(copies).hasSize(ATTEMPTS);
            assertThat(copies.values()).allSatisfy(copy -> assertThat(copy).hasSize(2));
            assertThat(truth.maxConcurrentCopies(LAB_INSERTS)).isEqualTo(ATTEMPTS);

            assertThat(truth.awaitIdle(LAB_INSERTS, Duration.ofSeconds(20))).isTrue();
            List<Document> records =
                    client.getDatabase("lab").getCollection("records").find().into(new ArrayList<>());
            assertThat(records).hasSize(ATTEMPTS);
            assertThat(records.stream().map(d -> d.get("_id")).distinct()).hasSize(ATTEMPTS);
            // Each copy wrote once: the resend waited for its session and returned the stored result.
            assertThat(truth.documentsApplied(LAB_INSERTS)).isEqualTo(ATTEMPTS);
            assertThat(truth.commands(LAB_INSERTS))
                    .filteredOn(c -> c.outcome() == ReceivedCommand.Outcome.RETRIED_RESULT)
                    .hasSize(ATTEMPTS);
        }
    }

    @Test
    void retryWritesOff_eachAttemptIsOneSend() throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = labClient(cluster, false)) {
            blockInserts(client, ATTEMPTS, 3_000);

            int failures = applicationLoop(client.getDatabase("lab").getCollection("records"));

            assertThat(failures).isEqualTo(ATTEMPTS);
            assertThat(cluster.truth().commands(LAB_INSERTS)).hasSize(ATTEMPTS);
            assertThat(cluster.truth().copies(LAB_INSERTS)).hasSize(ATTEMPTS);
            assertThat(cluster.truth().awaitIdle(LAB_INSERTS, Duration.ofSeconds(20)))
                    .isTrue();
            assertThat(client.getDatabase("lab").getCollection("records").countDocuments())
                    .isEqualTo(ATTEMPTS);
        }
    }

    @Test
    void clientSideOperationTimeout_serverStopsTheWriteAtItsDeadline_andTheDriverDoesNotResend() throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = labClient(cluster, true);
                StallHandle stall =
                        cluster.primary().stall(Stall.interruptible("lab.records", Duration.ofSeconds(5)))) {
            MongoCollection<Document> records =
                    client.getDatabase("lab").getCollection("records").withTimeout(500, TimeUnit.MILLISECONDS);

            assertThatThrownBy(() -> records.insertOne(new Document("record", 1)))
                    .isInstanceOfAny(MongoOperationTimeoutException.class, MongoExecutionTimeoutException.class);

            assertThat(cluster.truth().awaitIdle(LAB_INSERTS, Duration.ofSeconds(10)))
                    .isTrue();
            List<ReceivedCommand> inserts = cluster.truth().commands(LAB_INSERTS);
            assertThat(inserts).singleElement().satisfies(insert -> {
                assertThat(insert.maxTimeMs()).isNotNull().isLessThanOrEqualTo(500L);
                assertThat(insert.errorCode()).isEqualTo(50);
                assertThat(insert.executed()).isFalse();
            });
            stall.release();
            assertThat(client.getDatabase("lab").getCollection("records").countDocuments())
                    .isZero();
        }
    }

    private static MongoClient labClient(EmulatedReplicaSet cluster, boolean retryWrites) {
        return Clients.client(
                cluster.connectionString(),
                builder -> builder.applicationName(APP)
                        .retryWrites(retryWrites)
                        .applyToSocketSettings(socket -> socket.readTimeout(200, TimeUnit.MILLISECONDS)));
    }

    private static void blockInserts(MongoClient client, int times, int blockTimeMs) {
        client.getDatabase("admin")
                .runCommand(new Document("configureFailPoint", "failCommand")
                        .append("mode", new Document("times", times))
                        .append(
                                "data",
                                new Document("failCommands", List.of("insert"))
                                        .append("blockConnection", true)
                                        .append("blockTimeMS", blockTimeMs)
                                        .append("appName", APP)));
    }

    /** What a consumer with FixedBackOff(0, ATTEMPTS - 1) does: a fresh document (no _id) per delivery. */
    private static int applicationLoop(MongoCollection<Document> records) {
        int failures = 0;
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            try {
                records.insertOne(new Document("record", 42).append("attempt", attempt));
            } catch (MongoException e) {
                failures++;
            }
        }
        return failures;
    }
}
