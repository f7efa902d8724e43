package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import io.github.mongowriteguard.exception.WriteOutcomeUnknownException;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.retry.RetryPolicy;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedStandalone;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Writes without a retryable-write identity, as the driver sends them: on a standalone {@code mongod}, which refuses a
 * {@code txnNumber} ({@code IllegalOperation} 20, mongodb/mongo {@code src/mongo/db/initialize_operation_session_info.cpp}),
 * and with {@code retryWrites=false} in the client settings. No command carries a {@code txnNumber} that the server
 * runs, nothing is resent after a lost reply (no same-copy resend exists), and the outcome says UNKNOWN and why.
 */
class NoRetryableWriteIdentityTest {
    private static EmulatedStandalone standalone;
    private static EmulatedReplicaSet set;

    @BeforeAll
    static void start() {
        standalone = EmulatedCluster.standalone().start();
        set = EmulatedCluster.replicaSet().start();
    }

    @AfterAll
    static void stop() {
        standalone.close();
        set.close();
    }

    /** A guarded client and the write commands it sent. */
    private static final class Client implements AutoCloseable {
        final WriteGuard guard = WriteGuard.create(WriteGuardSettings.builder()
                .retryPolicy(RetryPolicy.builder()
                        .initialBackoff(Duration.ofMillis(10))
                        .gateGrace(Duration.ofMillis(20))
                        .build())
                .build());
        final List<BsonDocument> writes = new CopyOnWriteArrayList<>();
        final MongoClient client;

        Client(String connectionString) {
            client = MongoClients.create(guard.configure(MongoClientSettings.builder()
                            .applyConnectionString(new ConnectionString(connectionString))
                            .applyToSocketSettings(s -> s.readTimeout(3, TimeUnit.SECONDS))
                            .addCommandListener(new CommandListener() {
                                @Override
                                public void commandStarted(CommandStartedEvent event) {
                                    if (List.of("insert", "update", "delete", "findAndModify")
                                            .contains(event.getCommandName())) {
                                        writes.add(event.getCommand().clone());
                                    }
                                }
                            }))
                    .build());
        }

        MongoCollection<Document> raw(String name) {
            MongoCollection<Document> raw = client.getDatabase("identity").getCollection(name);
            raw.drop();
            return raw;
        }

        long withTxnNumber() {
            return writes.stream().filter(w -> w.containsKey("txnNumber")).count();
        }

        @Override
        public void close() {
            client.close();
        }
    }

    /**
     * The guard's very first write on a fresh client may go out before the driver has discovered a standalone: the
     * server refuses its {@code txnNumber} before running it, the guard sends it again without one, and learns.
     */
    @Test
    void standalone_theFirstWriteOfAFreshClient_isAppliedOnce() {
        try (Client c = new Client(standalone.connectionString())) {
            MongoCollection<Document> raw = c.client.getDatabase("identity").getCollection("first");
            standalone.truth().reset();
            GuardedCollection<Document> guarded = c.guard.guardCollection(c.client, raw);

            guarded.updateOne(
                    Filters.eq("_id", 1),
                    Updates.inc("n", 1),
                    new com.mongodb.client.model.UpdateOptions().upsert(true));

            assertThat(raw.find(Filters.eq("_id", 1)).first()).containsEntry("n", 1);
            // Nothing selected a server before this write (a session selects none), so the guard could not know yet:
            // its first send carried a txnNumber, refused before it ran, and was sent again without one.
            assertThat(c.withTxnNumber()).as("the first send only").isEqualTo(1);
            assertThat(standalone.truth().commands(cmd -> cmd.hasTxnNumber()))
                    .singleElement()
                    .satisfies(refused -> {
                        assertThat(refused.errorCode()).isEqualTo(20);
                        assertThat(refused.executed()).isFalse();
                    });
            guarded.updateOne(Filters.eq("_id", 1), Updates.inc("n", 1));
            assertThat(raw.find(Filters.eq("_id", 1)).first()).containsEntry("n", 2);
        }
    }

    /** Every write method of the guarded collection works on a standalone, as the driver's do, with no txnNumber. */
    @Test
    void standalone_everyWriteMethodWorks_withoutTxnNumber() {
        try (Client c = new Client(standalone.connectionString())) {
            MongoCollection<Document> raw = c.raw("methods");
            raw.insertOne(new Document("_id", 0)); // the driver discovers the standalone
            c.writes.clear();
            GuardedCollection<Document> guarded = c.guard.guardCollection(c.client, raw);
            MongoCollection<Document> asDriver = guarded.asMongoCollection();

            guarded.insertOne(new Document("_id", 1).append("n", 0));
            guarded.insertMany(List.of(new Document("_id", 2), new Document("_id", 3), new Document("s", 1)));
            guarded.updateOne(Filters.eq("_id", 1), Updates.inc("n", 1));
            guarded.updateMany(Filters.in("_id", 2, 3), Updates.set("s", 1));
            guarded.replaceOne(Filters.eq("_id", 0), new Document("r", 1));
            assertThat(guarded.findOneAndUpdate(Filters.eq("_id", 1), Updates.inc("n", 1)))
                    .containsEntry("n", 1);
            assertThat(guarded.findOneAndReplace(Filters.eq("_id", 0), new Document("r", 2)))
                    .containsEntry("r", 1);
            asDriver.bulkWrite(
                    List.of(
                            new InsertOneModel<>(new Document("_id", 4)),
                            new UpdateOneModel<>(Filters.eq("_id", 4), Updates.set("b", 1)),
                            new ReplaceOneModel<>(
                                    Filters.eq("_id", 5),
                                    new Document("u", 1),
                                    new com.mongodb.client.model.ReplaceOptions().upsert(true)),
                            new DeleteOneModel<>(Filters.eq("_id", 3))),
                    new BulkWriteOptions().ordered(true));
            assertThat(guarded.findOneAndDelete(Filters.eq("_id", 2))).containsEntry("s", 1);
            assertThat(guarded.deleteMany(Filters.eq("s", 1)).getDeletedCount()).isEqualTo(1);
            guarded.deleteOne(Filters.eq("_id", 5));
            c.guard
                    .guardClient(c.client)
                    .bulkWrite(List.of(
                            com.mongodb.client.model.bulk.ClientNamespacedWriteModel.insertOne(
                                    raw.getNamespace(), new Document("_id", 6)),
                            com.mongodb.client.model.bulk.ClientNamespacedWriteModel.deleteOne(
                                    raw.getNamespace(), Filters.eq("_id", 6))));

            assertThat(raw.find().sort(new Document("_id", 1)).into(new java.util.ArrayList<>()))
                    .containsExactly(
                            new Document("_id", 0).append("r", 2),
                            new Document("_id", 1).append("n", 2),
                            new Document("_id", 4).append("b", 1));
            assertThat(c.writes).isNotEmpty();
            assertThat(c.withTxnNumber()).as("a standalone refuses a txnNumber").isZero();
            assertThat(c.writes).allSatisfy(w -> assertThat(w).containsKey("lsid"));
        }
    }

    @Test
    void standalone_aLostReply_isUnknown_withTheReason_andNotResent() {
        try (Client c = new Client(standalone.connectionString())) {
            MongoCollection<Document> raw = c.raw("lost");
            raw.insertOne(new Document("_id", 1).append("n", 0));
            c.writes.clear();
            GuardedCollection<Document> guarded = c.guard.guardCollection(c.client, raw);
            assertLostReplyIsUnknown(c, guarded, standalone.node(), "standalone");
            assertThat(raw.find(Filters.eq("_id", 1)).first())
                    .as("the one send ran to its end")
                    .containsEntry("n", 1);
        }
    }

    /** {@code retryWrites=false}: the guard is the driver, which then sends no txnNumber and does not retry. */
    @Test
    void retryWritesFalse_noTxnNumber_andALostReplyIsUnknown_notResent() {
        try (Client c = new Client(set.connectionString() + "&retryWrites=false")) {
            MongoCollection<Document> raw = c.raw("noretry");
            raw.insertOne(new Document("_id", 1).append("n", 0));
            c.writes.clear();
            GuardedCollection<Document> guarded = c.guard.guardCollection(c.client, raw);

            guarded.bulkWrite(List.of(
                    new InsertOneModel<>(new Document("_id", 2)),
                    new UpdateOneModel<>(Filters.eq("_id", 2), Updates.set("x", 1))));
            guarded.findOneAndUpdate(Filters.eq("_id", 2), Updates.set("y", 1));
            assertThat(c.withTxnNumber()).isZero();

            assertLostReplyIsUnknown(c, guarded, set.primary(), "retryWrites=false");
            assertThat(raw.find(Filters.eq("_id", 1)).first()).containsEntry("n", 1);
        }
    }

    /**
     * One WARN when the guard configures a client with {@code retryWrites=false}, naming the cost and the fix, never the
     * connection string (it may hold credentials); none for a client that keeps retryable writes.
     */
    @Test
    void retryWritesFalse_oneWarnAtConfigure_withoutTheConnectionString() {
        java.io.PrintStream original = System.err;
        java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            WriteGuard guard = WriteGuard.create();
            guard.configure(MongoClientSettings.builder()
                    .applyConnectionString(
                            new ConnectionString("mongodb://app:s3cret@db.example:27017/?retryWrites=false")));
            guard.configure(MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString("mongodb://app:s3cret@db.example:27017/")));
        } finally {
            System.setErr(original);
        }
        String log = captured.toString(java.nio.charset.StandardCharsets.UTF_8);
        assertThat(log.lines().filter(line -> line.contains("retryWrites=false")))
                .hasSize(1);
        assertThat(log)
                .contains("WARN")
                .contains("not retried")
                .doesNotContain("s3cret")
                .doesNotContain("db.example");
    }

    private static void assertLostReplyIsUnknown(
            Client c, GuardedCollection<Document> guarded, EmulatedNode node, String reason) {
        int before = c.writes.size();
        node.loseReplies(1, "update");
        Throwable thrown;
        try {
            thrown = catchThrowable(() -> guarded.updateOne(Filters.eq("_id", 1), Updates.inc("n", 1)));
        } finally {
            node.stopLosingReplies();
        }

        assertThat(thrown).isInstanceOf(WriteOutcomeUnknownException.class);
        IndexOutcome inc = ((WriteOutcomeUnknownException) thrown).outcome().outcome(0);
        assertThat(inc.status()).isEqualTo(WriteStatus.UNKNOWN);
        assertThat(inc.retrySafe())
                .as("a new copy of an $inc may apply it twice")
                .isFalse();
        assertThat(inc.message()).contains(reason).contains("no resend of the same copy exists");
        assertThat(c.writes.size() - before)
                .as("sent once: no same-copy resend exists")
                .isEqualTo(1);
        assertThat(c.writes.get(c.writes.size() - 1)).doesNotContainKey("txnNumber");

        // A $set by _id after a lost reply: UNKNOWN too, and a new copy is safe.
        node.loseReplies(1, "update");
        try {
            thrown = catchThrowable(() -> guarded.updateOne(Filters.eq("_id", 1), Updates.set("s", 1)));
        } finally {
            node.stopLosingReplies();
        }
        IndexOutcome set = ((WriteOutcomeUnknownException) thrown).outcome().outcome(0);
        assertThat(set.status()).isEqualTo(WriteStatus.UNKNOWN);
        assertThat(set.retrySafe()).isTrue();
    }
}
