package io.github.mongowriteguard.testkit.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A retryable update or delete that matched nothing writes no oplog entry, nor does an update that matched a document
 * and left it as it was (mongodb/mongo {@code src/mongo/db/op_observer/op_observer_impl.cpp} {@code onUpdate}: "Do not
 * log a no-op operation"); mongod records a statement as executed only with its write's oplog entry (mongodb/mongo {@code src/mongo/db/transaction/transaction_participant.cpp}
 * {@code onWriteOpCompletedOnPrimary}; a retry's result is rebuilt from that entry,
 * {@code src/mongo/db/ops/write_ops_retryability.cpp}): a resend of the same {@code (lsid, txnNumber)} runs again.
 */
class NoOpRetryRecordTest {

    @Test
    void updateThatMatchedNothing_leavesNoRetryRecord_soAResendRunsAgain() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString());
                ClientSession session = client.startSession()) {
            MongoDatabase db = client.getDatabase("noop");
            Document update = Document.parse(
                    "{update: 'c', updates: [{q: {_id: 1}, u: {$inc: {n: 1}}}], txnNumber: NumberLong(3)}");

            Document first = db.runCommand(session, update);
            db.getCollection("c").insertOne(new Document("_id", 1).append("n", 0));
            Document resent = db.runCommand(session, update);

            assertThat(first.get("n", Number.class).intValue()).isZero();
            assertThat(resent.get("n", Number.class).intValue()).isEqualTo(1);
            assertThat(db.getCollection("c").find().first().getInteger("n")).isEqualTo(1);
        }
    }

    @Test
    void updateThatMatchedButChangedNothing_leavesNoRetryRecord_soAResendRunsAgain() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString());
                ClientSession session = client.startSession()) {
            MongoDatabase db = client.getDatabase("noop");
            db.getCollection("c").insertOne(new Document("_id", 1).append("v", 1));
            Document update = Document.parse(
                    "{update: 'c', updates: [{q: {_id: 1}, u: {$set: {v: 1}}}], txnNumber: NumberLong(3)}");

            Document first = db.runCommand(session, update);
            db.getCollection("c").updateOne(new Document("_id", 1), new Document("$set", new Document("v", 2)));
            Document resent = db.runCommand(session, update);

            assertThat(first.get("n", Number.class).intValue()).isEqualTo(1);
            assertThat(first.get("nModified", Number.class).intValue()).isZero();
            assertThat(resent.get("nModified", Number.class).intValue())
                    .as("ran again: nothing recorded the no-op")
                    .isEqualTo(1);
            assertThat(db.getCollection("c").find().first().getInteger("v")).isEqualTo(1);
        }
    }

    @Test
    void deleteThatMatchedNothing_leavesNoRetryRecord_soAResendRunsAgain() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString());
                ClientSession session = client.startSession()) {
            MongoDatabase db = client.getDatabase("noop");
            Document delete =
                    Document.parse("{delete: 'c', deletes: [{q: {_id: 1}, limit: 1}], txnNumber: NumberLong(3)}");

            Document first = db.runCommand(session, delete);
            db.getCollection("c").insertOne(new Document("_id", 1));
            Document resent = db.runCommand(session, delete);

            assertThat(first.get("n", Number.class).intValue()).isZero();
            assertThat(resent.get("n", Number.class).intValue()).isEqualTo(1);
            assertThat(db.getCollection("c").countDocuments()).isZero();
        }
    }

    @Test
    void updateThatWrote_isRecorded_soAResendReturnsItsResultWithoutWriting() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString());
                ClientSession session = client.startSession()) {
            MongoDatabase db = client.getDatabase("noop");
            db.getCollection("c").insertOne(new Document("_id", 1).append("n", 0));
            Document update = Document.parse(
                    "{update: 'c', updates: [{q: {_id: 1}, u: {$inc: {n: 1}}}], txnNumber: NumberLong(3)}");

            db.runCommand(session, update);
            Document resent = db.runCommand(session, update);

            assertThat(resent.get("n", Number.class).intValue()).isEqualTo(1);
            assertThat(db.getCollection("c").find().first().getInteger("n")).isEqualTo(1);
        }
    }
}
