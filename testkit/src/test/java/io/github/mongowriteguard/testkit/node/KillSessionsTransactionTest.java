package io.github.mongowriteguard.testkit.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoCommandException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * {@code killSessions} aborts the unprepared transaction of every session it names, also an idle one (no statement
 * running): mongodb/mongo {@code src/mongo/db/kill_sessions_local.cpp} {@code killSessionsAbortUnpreparedTransactions}
 * checks each matching session out and aborts its transaction. The transaction's writes are gone and its commit
 * answers {@code NoSuchTransaction}.
 */
class KillSessionsTransactionTest {

    @Test
    void killSessions_abortsTheIdleTransactionOfTheSession() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString());
                ClientSession session = client.startSession()) {
            MongoCollection<Document> c = client.getDatabase("ks").getCollection("c");
            c.insertOne(new Document("_id", 0));
            session.startTransaction();
            c.insertOne(session, new Document("_id", 1));
            BsonDocument lsid = session.getServerSession().getIdentifier();

            client.getDatabase("admin")
                    .runCommand(new Document("killSessions", List.of(new Document("id", lsid.get("id")))));

            assertThatThrownBy(session::commitTransaction)
                    .isInstanceOfSatisfying(
                            MongoCommandException.class,
                            e -> assertThat(e.getErrorCode()).isEqualTo(251));
            assertThat(c.countDocuments()).isEqualTo(1);
        }
    }

    @Test
    void killSessionsOfAnotherSession_leavesTheTransactionOpen() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString());
                ClientSession session = client.startSession();
                ClientSession other = client.startSession()) {
            MongoCollection<Document> c = client.getDatabase("ks").getCollection("c");
            c.insertOne(new Document("_id", 0));
            other.startTransaction();
            c.insertOne(other, new Document("_id", 9));
            other.commitTransaction();
            session.startTransaction();
            c.insertOne(session, new Document("_id", 1));

            client.getDatabase("admin")
                    .runCommand(new Document(
                            "killSessions",
                            List.of(new Document(
                                    "id",
                                    other.getServerSession().getIdentifier().get("id")))));
            session.commitTransaction();

            assertThat(c.countDocuments()).isEqualTo(3);
        }
    }
}
