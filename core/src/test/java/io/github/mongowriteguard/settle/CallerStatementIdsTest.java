package io.github.mongowriteguard.settle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.copies.StatementIds;
import io.github.mongowriteguard.exception.InvalidBulkException;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.retry.RetryPolicy;
import io.github.mongowriteguard.settle.SettleTest.Deployment;
import io.github.mongowriteguard.settle.SettleTest.Topology;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import io.github.mongowriteguard.testkit.truth.ServerTruth;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.IntStream;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Writes sent with caller-chosen statement ids ({@link StatementIds}) by two processes (two {@code WriteGuard}s, two
 * {@code MongoClient}s, as two workers of one job): a write the first one applied and never learned about (its reply
 * lost), or still runs (a zombie), is answered to the second one from the server's statement record and applied once;
 * a transaction number the session already passed is UNKNOWN. Real driver, real sockets, the testkit's retryable-write
 * table (mongodb/mongo {@code src/mongo/db/transaction/transaction_participant.cpp} {@code checkStatementExecuted},
 * {@code beginOrContinue}; {@code src/mongo/db/session/session_catalog.cpp} for the check-out).
 */
class CallerStatementIdsTest {
    private static final Predicate<ReceivedCommand> WRITES =
            c -> c.commandName().equals("update") || c.commandName().equals("insert");
    private static final UUID PARTITION = UUID.nameUUIDFromBytes("job:orders:3".getBytes(StandardCharsets.UTF_8));

    /** One "process": its own guard and client. */
    private record Process(WriteGuard guard, MongoClient client) implements AutoCloseable {
        static Process start(String uri, Duration serverDeadline, int attempts, int socketTimeoutMs) {
            WriteGuard guard = WriteGuard.create(WriteGuardSettings.builder()
                    .serverDeadline(serverDeadline)
                    .retryPolicy(RetryPolicy.builder()
                            .maxAttempts(attempts)
                            .initialBackoff(Duration.ofMillis(20))
                            .build())
                    .build());
            MongoClient client = MongoClients.create(guard.configure(MongoClientSettings.builder()
                            .applyConnectionString(new ConnectionString(uri))
                            .applyToSocketSettings(s -> s.readTimeout(socketTimeoutMs, TimeUnit.MILLISECONDS)))
                    .build());
            return new Process(guard, client);
        }

        MongoCollection<Document> raw() {
            return client.getDatabase("settle").getCollection("counters");
        }

        GuardedCollection<Document> counters() {
            return guard.guardCollection(client, raw());
        }

        @Override
        public void close() {
            client.close();
        }
    }

    /** An insert of {@code {_id: "new"}}, then an {@code $inc} of each of k0, k1, k2: one record each. */
    private static List<WriteModel<Document>> records() {
        return records("new");
    }

    /** As {@link #records()}, the insert's {@code _id} given (a generated id differs between processes). */
    private static List<WriteModel<Document>> records(String insertedId) {
        List<WriteModel<Document>> models = new ArrayList<>();
        models.add(new InsertOneModel<>(new Document("_id", insertedId).append("n", 1)));
        for (int k = 0; k < 3; k++) {
            models.add(new UpdateOneModel<>(Filters.eq("_id", "k" + k), Updates.inc("n", 1)));
        }
        return models;
    }

    /** The ids of {@link #records()}: offsets 70,000..70,003 of a partition, in blocks of 2^16. */
    private static StatementIds ids() {
        return StatementIds.of(
                PARTITION,
                70_000 >>> 16,
                IntStream.range(70_000, 70_004).map(offset -> offset & 0xFFFF).toArray());
    }

    private static void seed(MongoCollection<Document> raw, ServerTruth truth) {
        for (int k = 0; k < 3; k++) {
            raw.insertOne(new Document("_id", "k" + k).append("n", 0));
        }
        truth.reset();
    }

    private static List<Integer> counters(MongoCollection<Document> raw) {
        return IntStream.range(0, 3)
                .mapToObj(k -> raw.find(Filters.eq("_id", "k" + k)).first().getInteger("n"))
                .toList();
    }

    private static List<WriteStatus> statuses(WriteOutcome<?> outcome) {
        return outcome.outcomes().stream().map(IndexOutcome::status).toList();
    }

    /**
     * The first process's update command applies and its reply is lost (one attempt: it does not resend): the inserts
     * APPLIED, the updates UNKNOWN. The second process, another client, sends the same records with the same ids: the
     * server answers every statement from its record, so each {@code $inc} is applied once and the insert is not a
     * duplicate key. On the old code (no caller ids: a fresh session) the second call applies the {@code $inc}s again.
     */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void aLostReply_thenAnotherProcessWithTheSameIds_appliedOnce_fromTheStoredResults(Topology topology)
            throws Exception {
        try (Deployment deployment = Deployment.start(topology);
                Process first = Process.start(deployment.uri(), Duration.ofSeconds(5), 1, 30_000);
                Process second = Process.start(deployment.uri(), Duration.ofSeconds(5), 3, 30_000)) {
            seed(first.raw(), deployment.truth());
            deployment.answers().loseReplies(1, "update");

            WriteOutcome<Document> lost = first.counters().execute(records(), new BulkWriteOptions(), ids());
            assertThat(statuses(lost))
                    .as(lost.toString())
                    .containsExactly(
                            WriteStatus.APPLIED, WriteStatus.UNKNOWN, WriteStatus.UNKNOWN, WriteStatus.UNKNOWN);
            assertThat(counters(second.raw()))
                    .as("the first process applied them")
                    .containsExactly(1, 1, 1);

            // the second process generates the insert's _id anew: the server matches the statement by its ids
            WriteOutcome<Document> redelivered =
                    second.counters().execute(records("new-2"), new BulkWriteOptions(), ids());

            assertThat(statuses(redelivered)).as(redelivered.toString()).containsOnly(WriteStatus.APPLIED);
            assertThat(counters(second.raw())).as("each $inc applied once").containsExactly(1, 1, 1);
            assertThat(second.raw().countDocuments(Filters.eq("_id", "new"))).isEqualTo(1);
            assertThat(second.raw().countDocuments(Filters.eq("_id", "new-2")))
                    .as("not inserted a second time under another _id")
                    .isZero();
            List<ReceivedCommand> writes = deployment.truth().commands(WRITES);
            assertThat(writes)
                    .as("every send carried the caller's session id")
                    .allSatisfy(c -> assertThat(c.txnId().lsid()).isEqualTo(PARTITION.toString()))
                    .allSatisfy(c -> assertThat(c.txnId().txnNumber()).isEqualTo(1L));
            assertThat(writes.stream()
                            .filter(c -> c.executed())
                            .mapToLong(ReceivedCommand::applied)
                            .sum())
                    .as("documents written by statements that ran: 1 insert + 3 $inc, once")
                    .isEqualTo(4);
        }
    }

    /**
     * A zombie: the first process's update still runs on the server (held, uninterruptibly, past its deadline: its
     * call ended UNKNOWN) when a second process sends the same ids. The server checks the session out to one command at
     * a time, so the second waits behind the first and is then answered from its record: applied once.
     */
    @Test
    void aZombieStillRunning_andANewOwnerWithTheSameIds_appliedOnce() throws Exception {
        try (Deployment deployment = Deployment.start(Topology.REPLICA_SET);
                Process zombie = Process.start(deployment.uri(), Duration.ofMillis(150), 1, 300);
                Process owner = Process.start(deployment.uri(), Duration.ofSeconds(10), 3, 30_000)) {
            seed(zombie.raw(), deployment.truth());
            List<WriteModel<Document>> incs = records().subList(1, 4);
            StatementIds ids = StatementIds.of(PARTITION, 7, 4, 5, 6);
            WriteOutcome<Document> abandoned;
            WriteOutcome<Document> redelivered;
            try (StallHandle stall =
                    deployment.writes().stall(Stall.uninterruptible("settle.counters", Duration.ofMillis(1_200)))) {
                abandoned = zombie.counters().execute(incs, new BulkWriteOptions(), ids);
                assertThat(statuses(abandoned)).as(abandoned.toString()).containsOnly(WriteStatus.UNKNOWN);
                assertThat(deployment.truth().runningCopies(WRITES))
                        .as("the zombie's copy still runs")
                        .isEqualTo(1);
                CompletableFuture<WriteOutcome<Document>> second = CompletableFuture.supplyAsync(
                        () -> owner.counters().execute(incs, new BulkWriteOptions(), ids));
                redelivered = second.get(30, TimeUnit.SECONDS);
            }
            assertThat(statuses(redelivered)).as(redelivered.toString()).containsOnly(WriteStatus.APPLIED);
            assertThat(deployment.truth().awaitIdle(WRITES, Duration.ofSeconds(10)))
                    .isTrue();
            assertThat(counters(owner.raw())).as("each $inc applied once").containsExactly(1, 1, 1);
            assertThat(deployment.truth().commands(WRITES).stream()
                            .filter(ReceivedCommand::executed)
                            .count())
                    .as("only the zombie's command ran the statements")
                    .isEqualTo(1);
        }
    }

    /**
     * The session already ran a later transaction number (another owner moved ahead, or the ids went back): the server
     * refuses the lower one with {@code TransactionTooOld}, which cannot tell whether these ids applied before, so the
     * writes are UNKNOWN, not FAILED (a caller would otherwise write them again as new records), and nothing is applied.
     */
    @Test
    void aLowerTxnNumberThanTheSessionRan_isUnknown_neverFailed() throws Exception {
        try (Deployment deployment = Deployment.start(Topology.REPLICA_SET);
                Process ahead = Process.start(deployment.uri(), Duration.ofSeconds(5), 3, 30_000);
                Process behind = Process.start(deployment.uri(), Duration.ofSeconds(5), 3, 30_000)) {
            seed(ahead.raw(), deployment.truth());
            List<WriteModel<Document>> inc =
                    List.of(new UpdateOneModel<>(Filters.eq("_id", "k0"), Updates.inc("n", 1)));
            assertThat(statuses(
                            ahead.counters().execute(inc, new BulkWriteOptions(), StatementIds.of(PARTITION, 9, 0))))
                    .containsExactly(WriteStatus.APPLIED);

            WriteOutcome<Document> old =
                    behind.counters().execute(inc, new BulkWriteOptions(), StatementIds.of(PARTITION, 8, 3));

            IndexOutcome outcome = old.outcome(0);
            assertThat(outcome.status()).as(outcome.toString()).isEqualTo(WriteStatus.UNKNOWN);
            assertThat(outcome.retrySafe()).isFalse();
            assertThat(outcome.message()).contains("TransactionTooOld").contains("cannot tell");
            assertThat(counters(behind.raw())).containsExactly(1, 0, 0);
        }
    }

    /**
     * Two calls of one transaction number with new statement ids (two rounds of a partition's block): the second runs
     * its statements (the server continues a retryable write at the active number), and a resend of both calls
     * applies nothing again. Commands are cut at {@code MAX_STATEMENTS_WITH_IDS} statements.
     */
    @Test
    void theSameTxnNumberWithNewStatementIds_continues_andLargeCallsAreCut() throws Exception {
        try (Deployment deployment = Deployment.start(Topology.SHARDED);
                Process process = Process.start(deployment.uri(), Duration.ofSeconds(5), 3, 30_000)) {
            seed(process.raw(), deployment.truth());
            List<WriteModel<Document>> inc =
                    List.of(new UpdateOneModel<>(Filters.eq("_id", "k0"), Updates.inc("n", 1)));
            List<WriteModel<Document>> inserts = IntStream.range(0, 1_500)
                    .mapToObj(i -> (WriteModel<Document>) new InsertOneModel<>(new Document("_id", "d" + i)))
                    .toList();
            StatementIds insertIds =
                    StatementIds.of(PARTITION, 2, IntStream.range(1, 1_501).toArray());
            GuardedCollection<Document> counters = process.counters();

            assertThat(statuses(counters.execute(inc, new BulkWriteOptions(), StatementIds.of(PARTITION, 2, 0))))
                    .containsExactly(WriteStatus.APPLIED);
            WriteOutcome<Document> many = counters.execute(inserts, new BulkWriteOptions(), insertIds);
            assertThat(statuses(many)).containsOnly(WriteStatus.APPLIED);
            assertThat(many.commands())
                    .as("1,500 statements with ids: two commands")
                    .isEqualTo(2);
            assertThat(statuses(counters.execute(inc, new BulkWriteOptions(), StatementIds.of(PARTITION, 2, 0))))
                    .containsExactly(WriteStatus.APPLIED);
            assertThat(statuses(counters.execute(inserts, new BulkWriteOptions(), insertIds)))
                    .containsOnly(WriteStatus.APPLIED);

            assertThat(counters(process.raw())).containsExactly(1, 0, 0);
            assertThat(process.raw().countDocuments(Filters.regex("_id", "^d"))).isEqualTo(1_500);
        }
    }

    /**
     * Two commands of one call meet a write-concern error each (the call goes on after the first): each is held for a
     * settle on its own session of the caller's id, and the settle proves both APPLIED, once. The second command went
     * on a fresh session; handed to the hold, it must leave the call's sessions (found there by identity), or the call
     * would close it under the hold.
     */
    @Test
    void twoWriteConcernErrorsInOneCall_bothHeldOnTheCallersId_settledApplied() throws Exception {
        try (Deployment deployment = Deployment.start(Topology.REPLICA_SET);
                Process process = Process.start(deployment.uri(), Duration.ofSeconds(5), 3, 30_000)) {
            seed(process.raw(), deployment.truth());
            process.client()
                    .getDatabase("admin")
                    .runCommand(new Document("configureFailPoint", "failCommand")
                            .append("mode", new Document("times", 2))
                            .append(
                                    "data",
                                    new Document("failCommands", List.of("insert", "update"))
                                            .append(
                                                    "writeConcernError",
                                                    new Document("code", 64)
                                                            .append("codeName", "WriteConcernFailed")
                                                            .append("errmsg", "waiting for replication timed out"))));
            GuardedCollection<Document> counters = process.counters();

            WriteOutcome<Document> outcome = counters.execute(records(), new BulkWriteOptions(), ids());
            assertThat(statuses(outcome)).as(outcome.toString()).containsOnly(WriteStatus.UNKNOWN);
            WriteOutcome<Document> settled = counters.settle(outcome);

            assertThat(statuses(settled)).as(settled.toString()).containsOnly(WriteStatus.APPLIED);
            assertThat(counters(process.raw())).containsExactly(1, 1, 1);
            assertThat(deployment.truth().commands(WRITES))
                    .as("every send carried the caller's session id")
                    .allSatisfy(c -> assertThat(c.txnId().lsid()).isEqualTo(PARTITION.toString()));
        }
    }

    /** Ids that do not fit the bulk are refused before anything is sent, each with the problem and the fix. */
    @Test
    void badIds_areRefusedBeforeAnythingIsSent() throws Exception {
        assertThatThrownBy(() -> StatementIds.of(PARTITION, 1, 0, 1, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("statement id 0 is given twice");
        assertThatThrownBy(() -> StatementIds.of(PARTITION, 1, 0, -1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("negative");
        assertThatThrownBy(() -> StatementIds.of(PARTITION, -1, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("txnNumber -1 is negative");
        try (Deployment deployment = Deployment.start(Topology.REPLICA_SET);
                Process process = Process.start(deployment.uri(), Duration.ofSeconds(5), 3, 30_000)) {
            seed(process.raw(), deployment.truth());
            GuardedCollection<Document> counters = process.counters();

            assertThatThrownBy(
                            () -> counters.execute(records(), new BulkWriteOptions(), StatementIds.of(PARTITION, 1, 0)))
                    .isInstanceOf(InvalidBulkException.class)
                    .hasMessageContaining("1 statement ids for 4 writes")
                    .extracting(e -> ((InvalidBulkException) e).problem())
                    .isEqualTo(InvalidBulkException.Problem.INVALID_STATEMENT_IDS);
            assertThatThrownBy(() -> counters.execute(
                            List.of(new UpdateManyModel<>(Filters.exists("n"), Updates.inc("n", 1))),
                            new BulkWriteOptions(),
                            StatementIds.of(PARTITION, 1, 0)))
                    .isInstanceOf(InvalidBulkException.class)
                    .hasMessageContaining("multi-document write");
            assertThat(deployment.truth().commands(WRITES))
                    .as("nothing was sent")
                    .isEmpty();
        }
    }
}
