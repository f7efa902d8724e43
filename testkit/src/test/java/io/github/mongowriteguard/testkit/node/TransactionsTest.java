package io.github.mongowriteguard.testkit.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.WriteConcern;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * Multi-document transactions through the real driver, as mongod runs them (mongodb/mongo
 * {@code src/mongo/db/transaction/transaction_participant.cpp}, {@code src/mongo/db/commands/txn_cmds.cpp},
 * {@code src/mongo/db/transaction_validation.cpp}, {@code src/mongo/db/error_labels.cpp}): isolation until commit,
 * abort and lifetime expiry discard, write conflicts are {@code WriteConflict} (112) with
 * {@code TransientTransactionError}, a commit retried answers the same, a write outside the transaction waits for it.
 */
class TransactionsTest {

    private static MongoCollection<Document> collection(MongoClient client) {
        return client.getDatabase("txn").getCollection("c");
    }

    @Test
    void aTransactionStartedWithReadConcernAvailable_isRefusedWithInvalidOptions_andMajorityIsAccepted() {
        // mongodb/mongo src/mongo/db/service_entry_point_common.cpp _extractReadConcern:
        // isReadConcernLevelAllowedInTransaction (local, majority, snapshot), checked before the transaction starts.
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(set.connectionString());
                ClientSession session = client.startSession()) {
            MongoCollection<Document> c = collection(client);

            session.startTransaction(com.mongodb.TransactionOptions.builder()
                    .readConcern(com.mongodb.ReadConcern.AVAILABLE)
                    .build());
            com.mongodb.MongoCommandException refused = org.assertj.core.api.Assertions.catchThrowableOfType(
                    com.mongodb.MongoCommandException.class, () -> c.insertOne(session, new Document("_id", 1)));
            session.abortTransaction();
            session.startTransaction(com.mongodb.TransactionOptions.builder()
                    .readConcern(com.mongodb.ReadConcern.MAJORITY)
                    .build());
            c.insertOne(session, new Document("_id", 2));
            session.commitTransaction();

            assertThat(refused).isNotNull();
            assertThat(refused.getErrorCode()).isEqualTo(72);
            assertThat(refused.getErrorMessage())
                    .isEqualTo("The readConcern level must be either 'local' (default), 'majority' or 'snapshot' in"
                            + " order to run in a transaction");
            assertThat(c.find().into(new ArrayList<>())).containsExactly(new Document("_id", 2));
        }
    }

    @Test
    void writesAreInvisibleOutsideUntilCommit_andVisibleInsideTheTransaction() {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(set.connectionString());
                ClientSession session = client.startSession()) {
            MongoCollection<Document> c = collection(client);
            c.insertOne(new Document("_id", 0).append("v", 0));

            session.startTransaction();
            c.insertOne(session, new Document("_id", 1));
            c.updateOne(session, Filters.eq("_id", 0), Updates.set("v", 1));
            Document returned = c.findOneAndUpdate(session, Filters.eq("_id", 1), Updates.set("w", 2));

            assertThat(returned).isEqualTo(new Document("_id", 1));
            assertThat(c.find(session).into(new ArrayList<>()))
                    .containsExactlyInAnyOrder(
                            new Document("_id", 0).append("v", 1), new Document("_id", 1).append("w", 2));
            assertThat(c.find().into(new ArrayList<>()))
                    .as("outside: the snapshot before the transaction")
                    .containsExactly(new Document("_id", 0).append("v", 0));
            assertThat(set.primary().openTransactions()).isEqualTo(1);

            session.commitTransaction();

            assertThat(c.find().into(new ArrayList<>()))
                    .containsExactlyInAnyOrder(
                            new Document("_id", 0).append("v", 1), new Document("_id", 1).append("w", 2));
            assertThat(set.primary().openTransactions()).isZero();
        }
    }

    @Test
    void abortDiscards_andTheLifetimeLimitAbortsAnOpenTransaction() throws InterruptedException {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(set.connectionString());
                ClientSession session = client.startSession()) {
            MongoCollection<Document> c = collection(client);
            session.startTransaction();
            c.insertOne(session, new Document("_id", 1));
            session.abortTransaction();
            assertThat(c.countDocuments()).isZero();

            client.getDatabase("admin")
                    .runCommand(new Document("setParameter", 1).append("transactionLifetimeLimitSeconds", 1));
            session.startTransaction();
            c.insertOne(session, new Document("_id", 2));
            // Waiting past the limit, not measuring it: the reaper aborts the transaction after 1 s.
            Thread.sleep(1_500);

            assertThatThrownBy(session::commitTransaction).isInstanceOfSatisfying(MongoCommandException.class, e -> {
                assertThat(e.getErrorCode()).isEqualTo(251);
                assertThat(e.hasErrorLabel("TransientTransactionError")).isTrue();
            });
            assertThat(c.countDocuments()).isZero();
        }
    }

    @Test
    void twoTransactionsWritingOneDocument_theSecondGetsWriteConflict_andCommitRetriedAnswersTheSame() {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(set.connectionString());
                ClientSession first = client.startSession();
                ClientSession second = client.startSession()) {
            MongoCollection<Document> c = collection(client);
            c.insertOne(new Document("_id", 1).append("v", 0));

            first.startTransaction();
            c.updateOne(first, Filters.eq("_id", 1), Updates.inc("v", 1));
            second.startTransaction();
            assertThatThrownBy(() -> c.updateOne(second, Filters.eq("_id", 1), Updates.inc("v", 10)))
                    .isInstanceOfSatisfying(MongoCommandException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(112);
                        assertThat(e.hasErrorLabel("TransientTransactionError")).isTrue();
                    });
            second.abortTransaction();

            first.commitTransaction();
            first.commitTransaction();

            assertThat(c.find().first()).isEqualTo(new Document("_id", 1).append("v", 1));
        }
    }

    @Test
    void aCommittedWriteAfterTheSnapshot_conflictsWithTheTransactionsWrite() {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(set.connectionString());
                ClientSession session = client.startSession()) {
            MongoCollection<Document> c = collection(client);
            c.insertMany(List.of(new Document("_id", 1).append("v", 0), new Document("_id", 2)));

            session.startTransaction();
            assertThat(c.find(session, Filters.eq("_id", 2)).first()).isNotNull();
            c.updateOne(Filters.eq("_id", 1), Updates.set("v", 5));
            assertThat(c.find(session, Filters.eq("_id", 1)).first())
                    .as("the snapshot")
                    .isEqualTo(new Document("_id", 1).append("v", 0));

            assertThatThrownBy(() -> c.updateOne(session, Filters.eq("_id", 1), Updates.inc("v", 1)))
                    .isInstanceOfSatisfying(MongoCommandException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(112);
                        assertThat(e.hasErrorLabel("TransientTransactionError")).isTrue();
                    });
            assertThatThrownBy(session::commitTransaction)
                    .isInstanceOfSatisfying(
                            MongoCommandException.class,
                            e -> assertThat(e.getErrorCode())
                                    .as("aborted by the conflict")
                                    .isEqualTo(251));
            assertThat(c.find(Filters.eq("_id", 1)).first()).isEqualTo(new Document("_id", 1).append("v", 5));
        }
    }

    @Test
    void aWriteOutsideWaitsForTheTransactionHoldingItsDocument() throws Exception {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(set.connectionString());
                ClientSession session = client.startSession()) {
            MongoCollection<Document> c = collection(client);
            c.insertOne(new Document("_id", 1).append("v", 0));
            session.startTransaction();
            c.updateOne(session, Filters.eq("_id", 1), Updates.set("v", 10));

            assertThatThrownBy(() -> c.withTimeout(300, TimeUnit.MILLISECONDS)
                            .updateOne(Filters.eq("_id", 1), Updates.inc("v", 1)))
                    .isInstanceOf(MongoException.class);
            CompletableFuture<Long> outside = CompletableFuture.supplyAsync(
                    () -> c.updateOne(Filters.eq("_id", 1), Updates.inc("v", 1)).getModifiedCount());
            c.insertOne(new Document("_id", 2));
            assertThat(outside).isNotDone();

            session.commitTransaction();

            assertThat(outside.get(10, TimeUnit.SECONDS)).isEqualTo(1);
            assertThat(c.find(Filters.eq("_id", 1)).first()).isEqualTo(new Document("_id", 1).append("v", 11));
        }
    }

    @Test
    void validation_writeConcernInsideRefused_andADuplicateKeyAborts() {
        Clients.Sent sent = new Clients.Sent();
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(set.connectionString(), b -> b.addCommandListener(sent));
                ClientSession session = client.startSession()) {
            MongoCollection<Document> c = collection(client);
            c.insertOne(new Document("_id", 1));
            session.startTransaction();
            c.insertOne(session, new Document("_id", 2));
            assertThatThrownBy(() -> client.getDatabase("txn")
                            .runCommand(
                                    session,
                                    new Document("insert", "c")
                                            .append("documents", List.of(new Document("_id", 3)))
                                            .append("writeConcern", new Document("w", 1))))
                    .as(() -> sent.commands("insert").toString())
                    .isInstanceOfSatisfying(
                            MongoCommandException.class,
                            e -> assertThat(e.getErrorCode()).isEqualTo(72));
            // Refused by the validation before the command runs (service_entry_point_common.cpp), so the transaction
            // goes on; only an error of the statement itself aborts it (_abortUnpreparedOrStashPreparedTransaction).
            session.commitTransaction();
            assertThat(c.countDocuments()).isEqualTo(2);

            session.startTransaction();
            // A non-transient write error is the statement's write error (ok: 1), so the driver raises
            // MongoWriteException, and it aborts the transaction (write_ops_exec.cpp handleError).
            assertThatThrownBy(() -> c.insertOne(session, new Document("_id", 1)))
                    .isInstanceOfSatisfying(
                            com.mongodb.MongoWriteException.class,
                            e -> assertThat(e.getCode()).isEqualTo(11000));
            assertThatThrownBy(() -> c.insertOne(session, new Document("_id", 4)))
                    .isInstanceOfSatisfying(
                            MongoCommandException.class,
                            e -> assertThat(e.getErrorCode()).isEqualTo(251));
            session.abortTransaction();
            assertThat(c.countDocuments()).isEqualTo(2);

            BsonDocument noTransaction =
                    client.getDatabase("admin").runCommand(new Document("ping", 1), BsonDocument.class);
            assertThat(noTransaction.getNumber("ok").intValue()).isEqualTo(1);
        }
    }

    @Test
    void threeMembers_aCommitReplicatesAsOneWrite_withMajorityWriteConcern() {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet()
                        .members(3)
                        .electionTimeout(Duration.ofMillis(300))
                        .start();
                MongoClient client = Clients.client(set.connectionString());
                ClientSession session = client.startSession()) {
            MongoCollection<Document> c = collection(client).withWriteConcern(WriteConcern.MAJORITY);
            c.insertOne(new Document("_id", 0));
            int before = set.oplogSize(set.primary());
            session.withTransaction(() -> {
                c.insertOne(session, new Document("_id", 1));
                c.deleteOne(session, Filters.eq("_id", 0));
                return null;
            });

            assertThat(set.oplogSize(set.primary()) - before)
                    .as("one oplog entry for the commit")
                    .isEqualTo(1);
            assertThat(set.awaitReplication(Duration.ofSeconds(10))).isTrue();
            for (var member : set.members()) {
                BsonDocument reply = member.engine().run("txn", new BsonDocument("find", new org.bson.BsonString("c")));
                assertThat(reply.getDocument("cursor").getArray("firstBatch"))
                        .as(member.name())
                        .containsExactly(new BsonDocument("_id", new org.bson.BsonInt32(1)));
            }
        }
    }

    @Test
    void clientBulkWriteInATransaction_on80() {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet()
                        .serverVersion(ServerVersion.V8_0)
                        .start();
                MongoClient client = Clients.client(set.connectionString());
                ClientSession session = client.startSession()) {
            MongoCollection<Document> c = collection(client);
            session.startTransaction();
            client.bulkWrite(
                    session,
                    List.of(
                            com.mongodb.client.model.bulk.ClientNamespacedWriteModel.insertOne(
                                    c.getNamespace(), new Document("_id", 1)),
                            com.mongodb.client.model.bulk.ClientNamespacedWriteModel.insertOne(
                                    new com.mongodb.MongoNamespace("txn", "d"), new Document("_id", 2))));
            assertThat(c.countDocuments()).isZero();
            session.commitTransaction();
            assertThat(c.countDocuments()).isEqualTo(1);
            assertThat(client.getDatabase("txn").getCollection("d").countDocuments())
                    .isEqualTo(1);
        }
    }
}
