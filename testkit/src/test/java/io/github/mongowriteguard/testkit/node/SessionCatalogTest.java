package io.github.mongowriteguard.testkit.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * {@link SessionCatalog}: the per-session transaction table. Executed writes answer from it, older transaction numbers
 * are refused, and a command waits while another checks its session out (mongodb/mongo
 * {@code src/mongo/db/session/session_catalog.cpp}, {@code src/mongo/db/transaction/transaction_participant.cpp}).
 */
class SessionCatalogTest {

    @Test
    void sameTxnNumberTwice_returnsTheStoredResultWithoutWritingAgain() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString());
                ClientSession session = client.startSession()) {
            MongoDatabase db = client.getDatabase("table");
            Document insert = Document.parse("{insert: 'c', documents: [{v: 1}], txnNumber: NumberLong(7)}");

            Document first = db.runCommand(session, insert);
            Document second = db.runCommand(session, insert);

            assertThat(first.get("n", Number.class).intValue()).isEqualTo(1);
            assertThat(second.get("n", Number.class).intValue()).isEqualTo(1);
            assertThat(db.getCollection("c").countDocuments()).isEqualTo(1);
            assertThat(cluster.truth().commands("insert"))
                    .extracting(ReceivedCommand::outcome)
                    .containsExactly(ReceivedCommand.Outcome.OK, ReceivedCommand.Outcome.RETRIED_RESULT);
        }
    }

    @Test
    void lowerTxnNumber_isRejectedAsTransactionTooOld() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString());
                ClientSession session = client.startSession()) {
            MongoDatabase db = client.getDatabase("table");
            db.runCommand(session, Document.parse("{insert: 'c', documents: [{v: 1}], txnNumber: NumberLong(5)}"));

            assertThatThrownBy(() -> db.runCommand(
                            session, Document.parse("{insert: 'c', documents: [{v: 2}], txnNumber: NumberLong(4)}")))
                    .isInstanceOfSatisfying(MongoCommandException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(225);
                        assertThat(e.getErrorCodeName()).isEqualTo("TransactionTooOld");
                    });
            assertThat(db.getCollection("c").countDocuments()).isEqualTo(1);
        }
    }

    @Test
    void driverResendWaitsForTheRunningOriginal_andTakesItsResult() throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(
                        cluster.connectionString(),
                        // The resend opens a new connection (the timed-out one is closed) under the same read
                        // timeout: leave its handshake room on a loaded machine, and the stall room for the resend.
                        b -> b.applyToSocketSettings(s -> s.readTimeout(500, TimeUnit.MILLISECONDS)));
                StallHandle stall =
                        cluster.primary().stall(Stall.uninterruptible("table.c", Duration.ofMillis(2_500)))) {

            assertThatThrownBy(
                            () -> client.getDatabase("table").getCollection("c").insertOne(new Document("v", 1)))
                    .isInstanceOf(MongoSocketReadTimeoutException.class);
            assertThat(cluster.truth().awaitIdle(c -> true, Duration.ofSeconds(10)))
                    .isTrue();

            List<ReceivedCommand> inserts = cluster.truth().commands("insert");
            assertThat(inserts).hasSize(2);
            assertThat(inserts.get(0).txnId()).isEqualTo(inserts.get(1).txnId());
            ReceivedCommand original = inserts.get(0);
            ReceivedCommand resend = inserts.get(1);
            assertThat(original.executed()).isTrue();
            assertThat(resend.outcome()).isEqualTo(ReceivedCommand.Outcome.RETRIED_RESULT);
            // The resend arrived while the original ran and could only finish after it: it waited for the session.
            assertThat(resend.startNanos()).isLessThan(original.endNanos());
            assertThat(resend.endNanos()).isGreaterThanOrEqualTo(original.endNanos());
            assertThat(client.getDatabase("table").getCollection("c").countDocuments())
                    .isEqualTo(1);
        }
    }

    @Test
    void commandsWithoutTxnNumber_areCopiesOfTheirOwn() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString(), b -> b.retryWrites(false))) {
            client.getDatabase("table").getCollection("c").insertOne(new Document("v", 1));
            client.getDatabase("table").getCollection("c").insertOne(new Document("v", 2));

            assertThat(cluster.truth().copies(c -> c.commandName().equals("insert")))
                    .hasSize(2);
            assertThat(cluster.truth().commands("insert")).noneMatch(ReceivedCommand::hasTxnNumber);
        }
    }

    /** The driver's session pool may hand the explicit session an lsid an earlier write used: start high. */
    @Test
    void storedResultKeepsTheOriginalReply() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString());
                ClientSession session = client.startSession()) {
            MongoDatabase db = client.getDatabase("table");
            db.getCollection("c").insertOne(new Document("_id", 1));
            BsonDocument update = BsonDocument.parse(
                    "{update: 'c', updates: [{q: {_id: 1}, u: {$inc: {n: 1}}}], txnNumber: NumberLong(100)}");

            db.runCommand(session, update);
            Document again = db.runCommand(session, update);

            assertThat(again.get("nModified", Number.class).intValue()).isEqualTo(1);
            assertThat(db.getCollection("c").find().first()).isEqualTo(new Document("_id", 1).append("n", 1));
        }
    }
}
