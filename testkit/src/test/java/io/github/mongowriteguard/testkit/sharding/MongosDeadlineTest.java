package io.github.mongowriteguard.testkit.sharding;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.node.Membership;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * mongos enforces its own {@code maxTimeMS} while it waits for its shards.
 *
 * <ul>
 *   <li>The wait for the shards' answers is an interrupt point of mongos' operation: at its deadline every outstanding
 *       remote gets the interrupt status and nothing more is retried (mongodb/mongo
 *       {@code src/mongo/s/async_requests_sender.cpp}, {@code AsyncRequestsSender::next}:
 *       {@code waitForNonEmptyNoThrow(_opCtx)}, {@code makeFailedResponse(_interruptStatus)},
 *       {@code _subBaton.shutdown()}).</li>
 *   <li>Such a child batch fails as a whole with that status as a write error, "Write results unavailable from
 *       &lt;host&gt; :: caused by :: operation exceeded time limit" ({@code src/mongo/s/write_ops/batch_write_exec.cpp}
 *       {@code processErrorResponseFromLocal}, {@code noteBatchError}).</li>
 *   <li>Every send carries the operation's time left when it is sent, so a retry gets less than the first send
 *       ({@code src/mongo/executor/remote_command_request.cpp} {@code _updateTimeoutFromOpCtxDeadline}, one
 *       {@code RemoteCommandRequestOnAny} per send in {@code AsyncRequestsSender::RemoteData::scheduleRemoteCommand}).
 *   </li>
 * </ul>
 */
class MongosDeadlineTest {
    private EmulatedShardedCluster cluster;
    private MongoClient client;
    private ClientSession session;
    private MongoCollection<Document> items;

    @BeforeEach
    void start() {
        cluster = EmulatedCluster.sharded().shards(2).start();
        client = Clients.client(cluster.connectionString(), b -> b.retryWrites(false));
        session = client.startSession();
        TwoChunks.splitAt10(cluster, "shop.items", "_id");
        items = client.getDatabase("shop").getCollection("items");
        items.insertOne(new Document("_id", 5).append("v", 1));
    }

    @AfterEach
    void close() {
        cluster.shard("shard00").cutOff(Membership.Reach.SERVING);
        session.close();
        client.close();
        cluster.close();
    }

    @Test
    void shardBlockedPastTheClientsDeadline_answersWriteError50AtTheDeadline_andNothingIsRetried() throws Exception {
        cluster.shard("shard00")
                .failCommand()
                .configure(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1}, data: "
                        + "{failCommands: ['update'], blockConnection: true, blockTimeMS: 800, errorCode: 189,"
                        + " failInternalCommands: true}}"));

        long start = System.nanoTime();
        BsonDocument reply = retryableSetV(2, 1, 300);
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        assertThat(reply.getNumber("ok").intValue()).isEqualTo(1);
        assertThat(reply.getNumber("n").intValue()).isZero();
        BsonDocument error = reply.getArray("writeErrors").get(0).asDocument();
        assertThat(error.getNumber("index").intValue()).isZero();
        assertThat(error.getNumber("code").intValue()).isEqualTo(50);
        assertThat(error.getString("errmsg").getValue())
                .startsWith("Write results unavailable from "
                        + cluster.shard("shard00").address())
                .endsWith(":: caused by :: operation exceeded time limit");
        assertThat(tookMs)
                .as("answered at mongos' deadline, not after the 800 ms block")
                .isLessThan(700);

        // The shard's 189 arrives after the block: mongos no longer waits and sends nothing again.
        Thread.sleep(1_000);
        assertThat(cluster.shard("shard00").truth().commands("update")).hasSize(1);
        assertThat(cluster.routing().shardRetries()).isZero();
        assertThat(items.find(new Document("_id", 5)).first().getInteger("v")).isEqualTo(1);
    }

    @Test
    void retriedChildBatch_carriesTheTimeLeftWhenItIsSentAgain() {
        cluster.shard("shard00")
                .failCommand()
                .configure(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1}, data: "
                        + "{failCommands: ['update'], blockConnection: true, blockTimeMS: 300, errorCode: 189,"
                        + " failInternalCommands: true}}"));

        BsonDocument reply = retryableSetV(2, 1, 5_000);

        assertThat(reply.getNumber("nModified").intValue()).isEqualTo(1);
        List<ReceivedCommand> sends = cluster.shard("shard00").truth().commands("update");
        assertThat(sends).hasSize(2);
        assertThat(sends.get(0).maxTimeMs()).isLessThanOrEqualTo(5_000L);
        assertThat(sends.get(1).maxTimeMs())
                .as("the retry went out after the 300 ms block, with what was left")
                .isLessThanOrEqualTo(5_000L - 300);
        assertThat(items.find(new Document("_id", 5)).first().getInteger("v")).isEqualTo(2);
    }

    @Test
    void childBatchToABlackHoledShard_endsAtMongosDeadline_notWhenTheBlackHoleHeals() throws Exception {
        cluster.shard("shard00").cutOff(Membership.Reach.BLACKHOLED);

        CompletableFuture<BsonDocument> call = CompletableFuture.supplyAsync(() -> retryableSetV(2, 1, 300));
        BsonDocument reply;
        try {
            reply = call.get(5, TimeUnit.SECONDS);
        } finally {
            cluster.shard("shard00").cutOff(Membership.Reach.SERVING);
        }

        BsonDocument error = reply.getArray("writeErrors").get(0).asDocument();
        assertThat(error.getNumber("code").intValue()).isEqualTo(50);
        assertThat(error.getString("errmsg").getValue()).startsWith("Write results unavailable from ");
        assertThat(items.find(new Document("_id", 5)).first().getInteger("v")).isEqualTo(1);
    }

    @Test
    void unshardedCommandForwardedToABlackHoledPrimaryShard_failsWithMaxTimeMSExpiredAtTheDeadline() throws Exception {
        client.getDatabase("shop").getCollection("plain").insertOne(new Document("_id", 1));
        cluster.shard("shard00").cutOff(Membership.Reach.BLACKHOLED);

        CompletableFuture<Throwable> call = CompletableFuture.supplyAsync(() -> {
            try {
                client.getDatabase("shop").runCommand(new Document("find", "plain").append("maxTimeMS", 300));
                return null;
            } catch (RuntimeException e) {
                return e;
            }
        });
        Throwable thrown;
        try {
            thrown = call.get(5, TimeUnit.SECONDS);
        } finally {
            cluster.shard("shard00").cutOff(Membership.Reach.SERVING);
        }

        assertThat(thrown)
                .isInstanceOfSatisfying(
                        com.mongodb.MongoExecutionTimeoutException.class,
                        e -> assertThat(e.getCode()).isEqualTo(50));
    }

    /**
     * A kill of mongos' operation is another interrupt status of the same wait ({@code AsyncRequestsSender::next}
     * catches whatever {@code waitForNonEmptyNoThrow(_opCtx)} fails with and gives it to every outstanding remote):
     * {@code killSessions} through mongos kills mongos' own operation of the session first
     * ({@code src/mongo/s/kill_sessions_remote.cpp}), so the child batch fails with {@code Interrupted} (11601) "Write
     * results unavailable from ..." at once, while the shard, held in an uninterruptible stall that ignores the kill,
     * still applies the write after mongos answered.
     */
    @Test
    void killOfMongosOperation_failsTheOutstandingChildBatchWithInterrupted_whileTheShardStillApplies()
            throws Exception {
        try (MongoClient admin = Clients.client(cluster.connectionString());
                io.github.mongowriteguard.testkit.stall.StallHandle stall = cluster.shard("shard00")
                        .stall(io.github.mongowriteguard.testkit.stall.Stall.uninterruptible(
                                "shop.items", java.time.Duration.ofMillis(1_500)))) {
            CompletableFuture<BsonDocument> call = CompletableFuture.supplyAsync(() -> retryableSetV(2, 1, 20_000));
            BsonDocument lsid = session.getServerSession().getIdentifier();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (cluster.shard("shard00").truth().commands("update").isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            long start = System.nanoTime();
            admin.getDatabase("admin")
                    .runCommand(new Document("killSessions", List.of(new Document("id", lsid.get("id")))));
            BsonDocument reply = call.get(5, TimeUnit.SECONDS);
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

            BsonDocument error = reply.getArray("writeErrors").get(0).asDocument();
            assertThat(error.getNumber("code").intValue()).isEqualTo(11601);
            assertThat(error.getString("codeName").getValue()).isEqualTo("Interrupted");
            assertThat(error.getString("errmsg").getValue())
                    .startsWith("Write results unavailable from "
                            + cluster.shard("shard00").address())
                    .endsWith(":: caused by :: operation was interrupted");
            assertThat(tookMs)
                    .as("answered at the kill, not at the stall's end")
                    .isLessThan(1_200);
            assertThat(cluster.routing().shardRetries()).isZero();

            // the uninterruptible stall ignores the kill: the shard writes after mongos answered
            long applied = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (items.find(new Document("_id", 5)).first().getInteger("v") != 2 && System.nanoTime() < applied) {
                Thread.sleep(20);
            }
            assertThat(items.find(new Document("_id", 5)).first().getInteger("v"))
                    .isEqualTo(2);
        }
    }

    /**
     * A shard's own interruption is the shard's answer, not mongos': {@code Interrupted} (11601) is not in the
     * {@code RetriableError} category ({@code src/mongo/base/error_codes.yml}), so mongos does not send the batch again
     * ({@code AsyncRequestsSender::RemoteData::handleResponse}) and reports it as the statement's write error with the
     * shard's message; {@code ExceededTimeLimit} (262) is in the category, so a retryable write's batch is sent again.
     */
    @Test
    void shardsOwnInterruptCodes_interruptedReachesTheClient_exceededTimeLimitIsRetried() {
        cluster.shard("shard00")
                .failCommand()
                .configure(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1}, data: "
                        + "{failCommands: ['update'], errorCode: 11601, failInternalCommands: true}}"));
        BsonDocument interrupted = retryableSetV(2, 1, 5_000);
        BsonDocument error = interrupted.getArray("writeErrors").get(0).asDocument();
        assertThat(error.getNumber("code").intValue()).isEqualTo(11601);
        assertThat(error.getString("errmsg").getValue()).doesNotStartWith("Write results unavailable");
        assertThat(cluster.routing().shardRetries()).isZero();
        assertThat(items.find(new Document("_id", 5)).first().getInteger("v")).isEqualTo(1);

        cluster.shard("shard00")
                .failCommand()
                .configure(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1}, data: "
                        + "{failCommands: ['update'], errorCode: 262, failInternalCommands: true}}"));
        BsonDocument retried = retryableSetV(3, 2, 5_000);
        assertThat(retried.containsKey("writeErrors")).isFalse();
        assertThat(retried.getNumber("nModified").intValue()).isEqualTo(1);
        assertThat(cluster.routing().shardRetries()).isEqualTo(1);
        assertThat(items.find(new Document("_id", 5)).first().getInteger("v")).isEqualTo(3);
    }

    /** {@code {$set: {v}}} on {@code _id: 5} as a retryable write of the fixture's session through mongos. */
    private BsonDocument retryableSetV(int v, long txnNumber, int maxTimeMs) {
        return client.getDatabase("shop")
                .runCommand(
                        session,
                        new BsonDocument("update", new BsonString("items"))
                                .append(
                                        "updates",
                                        new BsonArray(List.of(new BsonDocument(
                                                        "q", new BsonDocument("_id", new BsonInt32(5)))
                                                .append(
                                                        "u",
                                                        new BsonDocument(
                                                                "$set", new BsonDocument("v", new BsonInt32(v)))))))
                                .append("txnNumber", new BsonInt64(txnNumber))
                                .append("maxTimeMS", new BsonInt32(maxTimeMs)),
                        BsonDocument.class);
    }
}
