package io.github.mongowriteguard.testkit.replication;

import static io.github.mongowriteguard.testkit.replication.ReplicationTest.client;
import static io.github.mongowriteguard.testkit.replication.ReplicationTest.resendUntilAnswered;
import static io.github.mongowriteguard.testkit.replication.ReplicationTest.stored;
import static io.github.mongowriteguard.testkit.replication.ReplicationTest.threeMembers;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoSocketException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** Restarts (what survives: majority-committed data and retry records) and network partitions of one member. */
class RestartAndPartitionTest {

    @Test
    void restartingEveryMember_keepsMajorityCommittedDataAndRetryRecords() {
        try (EmulatedReplicaSet set = threeMembers();
                MongoClient client = client(set);
                ClientSession session = client.startSession()) {
            MongoDatabase shop = client.getDatabase("shop");
            BsonDocument insert = new BsonDocument("insert", new BsonString("orders"))
                    .append("documents", new BsonArray(List.of(BsonDocument.parse("{_id: 1, n: 1}"))))
                    .append("txnNumber", new BsonInt64(3))
                    .append("writeConcern", new BsonDocument("w", new BsonString("majority")));
            shop.runCommand(session, insert, ReadPreference.primary());

            for (EmulatedNode member : set.members()) {
                set.restart(member);
                set.awaitPrimary(Duration.ofSeconds(5));
            }
            Document again = resendUntilAnswered(shop, session, insert);

            assertThat(again.getInteger("n")).as("the recorded result").isEqualTo(1);
            assertThat(shop.getCollection("orders").countDocuments()).isEqualTo(1);
            ReceivedCommand last = set.truth()
                    .commands("insert")
                    .get(set.truth().commands("insert").size() - 1);
            assertThat(last.outcome()).isEqualTo(ReceivedCommand.Outcome.RETRIED_RESULT);
        }
    }

    /** A w:1 write the primary alone had is gone after it crashes and comes back: the set moved on without it. */
    @Test
    void aCrashedPrimarysUnreplicatedWrite_isRolledBackWhenItRejoins() {
        try (EmulatedReplicaSet set = threeMembers();
                MongoClient client = client(set)) {
            MongoCollection<Document> orders = client.getDatabase("shop").getCollection("orders");
            orders.withWriteConcern(WriteConcern.MAJORITY).insertOne(new Document("_id", "kept"));
            EmulatedNode first = set.primary();
            set.secondaries().forEach(set::pauseReplication);
            orders.withWriteConcern(WriteConcern.W1).insertOne(new Document("_id", "lost"));

            set.stop(first);
            set.members().forEach(set::resumeReplication);
            set.awaitPrimary(Duration.ofSeconds(5));
            set.start(first);
            assertThat(set.awaitReplication(Duration.ofSeconds(5))).isTrue();

            assertThat(orders.find().map(d -> d.get("_id")).into(new java.util.ArrayList<>()))
                    .containsExactly("kept");
            assertThat(stored(first, "shop", "orders"))
                    .extracting(d -> d.get("_id"))
                    .containsExactly(new BsonString("kept"));
            assertThat(set.rolledBack())
                    .extracting(d -> d.getDocument("o").get("_id"))
                    .containsExactly(new BsonString("lost"));
        }
    }

    @Test
    void aBlackHole_leavesRequestsUnanswered_untilTheSocketTimeout() {
        try (EmulatedReplicaSet set = threeMembers()) {
            EmulatedNode secondary = set.secondaries().get(0);
            try (MongoClient direct = Clients.client(
                    "mongodb://" + secondary.address() + "/?directConnection=true",
                    b -> b.applyToSocketSettings(s -> s.readTimeout(300, TimeUnit.MILLISECONDS)))) {
                MongoCollection<Document> orders = direct.getDatabase("shop")
                        .getCollection("orders")
                        .withReadPreference(ReadPreference.secondaryPreferred());
                assertThat(orders.countDocuments()).isZero();

                try (EmulatedReplicaSet.Partition cut = set.partition(secondary, PartitionMode.BLACK_HOLE)) {
                    long start = System.nanoTime();
                    assertThatThrownBy(orders::countDocuments).isInstanceOf(MongoSocketReadTimeoutException.class);
                    assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(300));
                }
                assertThat(orders.countDocuments()).isZero();
            }
        }
    }

    @Test
    void closedConnections_failFast_andTheNodeAnswersAgainOnceHealed() {
        try (EmulatedReplicaSet set = threeMembers()) {
            EmulatedNode secondary = set.secondaries().get(0);
            try (MongoClient direct = Clients.client(
                    "mongodb://" + secondary.address() + "/?directConnection=true",
                    b -> b.applyToClusterSettings(c -> c.serverSelectionTimeout(1, TimeUnit.SECONDS))
                            .applyToServerSettings(s -> s.heartbeatFrequency(50, TimeUnit.MILLISECONDS)
                                    .minHeartbeatFrequency(10, TimeUnit.MILLISECONDS)))) {
                MongoCollection<Document> orders = direct.getDatabase("shop")
                        .getCollection("orders")
                        .withReadPreference(ReadPreference.secondaryPreferred());
                orders.countDocuments();
                try (EmulatedReplicaSet.Partition cut = set.partition(secondary, PartitionMode.CLOSE_CONNECTIONS)) {
                    assertThatThrownBy(orders::countDocuments)
                            .isInstanceOfAny(MongoSocketException.class, com.mongodb.MongoTimeoutException.class);
                }
                assertThat(orders.countDocuments()).isZero();
            }
        }
    }

    static void awaitState(EmulatedReplicaSet set, EmulatedNode member, MemberState state) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (set.state(member) != state) {
            if (System.nanoTime() - until > 0) {
                throw new AssertionError(member + " is " + set.state(member) + ", not " + state);
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }
}
