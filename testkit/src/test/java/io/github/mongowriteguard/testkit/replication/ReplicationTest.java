package io.github.mongowriteguard.testkit.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoWriteConcernException;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.event.CommandFailedEvent;
import com.mongodb.event.CommandListener;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A replica set of three members: writes and retryable-write records replicate, a stepdown elects a secondary that the
 * driver finds through {@code hello}, a retry on the new primary gets the recorded result, and {@code w: 1} writes that
 * never reached a majority are rolled back by a failover while {@code w: "majority"} writes survive it.
 */
class ReplicationTest {
    static final Duration ELECTION_TIMEOUT = Duration.ofMillis(300);

    static EmulatedReplicaSet threeMembers() {
        return EmulatedCluster.replicaSet()
                .members(3)
                .electionTimeout(ELECTION_TIMEOUT)
                .start();
    }

    static MongoClient client(EmulatedReplicaSet set) {
        return Clients.client(
                set.connectionString(),
                b -> b.applyToClusterSettings(c -> c.serverSelectionTimeout(10, TimeUnit.SECONDS))
                        .applyToServerSettings(s -> s.heartbeatFrequency(100, TimeUnit.MILLISECONDS)
                                .minHeartbeatFrequency(20, TimeUnit.MILLISECONDS))
                        .applyToSocketSettings(s ->
                                s.connectTimeout(500, TimeUnit.MILLISECONDS).readTimeout(2, TimeUnit.SECONDS)));
    }

    /** The {@code shop.orders} collection with {@code w: "majority"}. */
    static MongoCollection<Document> majorityOrders(MongoClient client) {
        return client.getDatabase("shop").getCollection("orders").withWriteConcern(WriteConcern.MAJORITY);
    }

    /** The documents a member stores, read from its own engine. */
    static List<BsonDocument> stored(EmulatedNode member, String database, String collection) {
        BsonDocument reply = member.engine()
                .run(
                        database,
                        new BsonDocument("find", new BsonString(collection))
                                .append("sort", new BsonDocument("_id", new BsonInt32(1))));
        if (!reply.containsKey("cursor")) {
            return List.of();
        }
        return reply.getDocument("cursor").getArray("firstBatch").stream()
                .map(v -> v.asDocument())
                .toList();
    }

    @Test
    void majorityWrites_reachEverySecondary_withTheirRetryRecords() {
        try (EmulatedReplicaSet set = threeMembers();
                MongoClient client = client(set)) {
            MongoCollection<Document> orders = majorityOrders(client);
            orders.insertOne(new Document("_id", 1).append("n", 1));
            orders.updateOne(new Document("_id", 1), new Document("$inc", new Document("n", 1)));
            orders.insertOne(new Document("_id", 2));
            orders.deleteOne(new Document("_id", 2));

            assertThat(set.awaitReplication(Duration.ofSeconds(5))).isTrue();
            for (EmulatedNode member : set.members()) {
                assertThat(stored(member, "shop", "orders"))
                        .as(member.name())
                        .containsExactly(BsonDocument.parse("{_id: 1, n: 2}"));
                assertThat(set.oplogSize(member)).isEqualTo(set.oplogSize(set.primary()));
            }
            // A secondary serves reads that allow it.
            assertThat(orders.withReadPreference(ReadPreference.secondary()).countDocuments())
                    .isEqualTo(1);
        }
    }

    @Test
    void aResendOnTheNewPrimary_getsTheRecordedResult_andAppliesNothingTwice() {
        try (EmulatedReplicaSet set = threeMembers();
                MongoClient client = client(set);
                ClientSession session = client.startSession()) {
            MongoDatabase shop = client.getDatabase("shop");
            shop.getCollection("counters").insertOne(new Document("_id", 1).append("n", 0));
            BsonDocument inc = new BsonDocument("update", new BsonString("counters"))
                    .append("updates", new BsonArray(List.of(BsonDocument.parse("{q: {_id: 1}, u: {$inc: {n: 1}}}"))))
                    .append("txnNumber", new BsonInt64(7))
                    .append("writeConcern", new BsonDocument("w", new BsonString("majority")));
            EmulatedNode first = set.primary();

            Document once = shop.runCommand(session, inc, ReadPreference.primary());
            set.stepDown();
            EmulatedNode second = set.awaitPrimary(Duration.ofSeconds(5));
            Document again = resendUntilAnswered(shop, session, inc);

            assertThat(second).isNotSameAs(first);
            assertThat(once.get("nModified")).isEqualTo(1);
            assertThat(again.get("nModified")).as("the recorded result").isEqualTo(1);
            assertThat(shop.getCollection("counters").find().first().getInteger("n"))
                    .isEqualTo(1);
            List<ReceivedCommand> updates = set.truth().commands("update");
            ReceivedCommand last = updates.get(updates.size() - 1);
            assertThat(last.node()).startsWith(second.name() + "/");
            assertThat(last.outcome()).isEqualTo(ReceivedCommand.Outcome.RETRIED_RESULT);
            assertThat(updates.subList(1, updates.size() - 1))
                    .as("refused by the old primary, now a secondary")
                    .allSatisfy(c -> assertThat(c.errorCode()).isEqualTo(10107));
            assertThat(set.truth().copies(c -> c.commandName().equals("update")))
                    .hasSize(1);
        }
    }

    /** Resends a command (with its txnNumber) until a primary answers, as an application or the guard does. */
    static Document resendUntilAnswered(MongoDatabase database, ClientSession session, BsonDocument command) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            try {
                return database.runCommand(session, command, ReadPreference.primary());
            } catch (com.mongodb.MongoNotPrimaryException | com.mongodb.MongoSocketException e) {
                if (System.nanoTime() - until > 0) {
                    throw e;
                }
            }
        }
    }

    /** The driver's own retry, after an answer lost in a failover, goes to the primary it discovers with hello. */
    @Test
    void theDriversRetry_afterAFailover_findsTheNewPrimary_andGetsTheRecordedResult() {
        try (EmulatedReplicaSet set = threeMembers()) {
            EmulatedNode first = set.primary();
            CommandListener failover = new CommandListener() {
                @Override
                public void commandFailed(CommandFailedEvent event) {
                    if (event.getCommandName().equals("insert")) {
                        set.stepDown(Duration.ofSeconds(60), Duration.ofSeconds(5), false);
                    }
                }
            };
            try (MongoClient client = Clients.client(
                    set.connectionString(),
                    b -> b.addCommandListener(failover)
                            .applyToServerSettings(s -> s.heartbeatFrequency(100, TimeUnit.MILLISECONDS)
                                    .minHeartbeatFrequency(20, TimeUnit.MILLISECONDS)))) {
                MongoCollection<Document> orders =
                        client.getDatabase("shop").getCollection("orders").withWriteConcern(WriteConcern.MAJORITY);
                first.loseReplies(1, "insert");

                orders.insertOne(new Document("_id", 1));

                assertThat(orders.countDocuments()).isEqualTo(1);
                List<ReceivedCommand> inserts = set.truth().commands("insert");
                assertThat(inserts).hasSize(2);
                assertThat(inserts.get(0).node()).startsWith(first.name() + "/");
                assertThat(inserts.get(1).node()).doesNotStartWith(first.name() + "/");
                assertThat(inserts.get(1).outcome()).isEqualTo(ReceivedCommand.Outcome.RETRIED_RESULT);
            }
        }
    }

    @Test
    void w1WritesNotReplicated_areRolledBackByAForcedFailover_majorityWaitsAndSurvives() {
        try (EmulatedReplicaSet set = threeMembers();
                MongoClient client = client(set)) {
            MongoCollection<Document> orders = client.getDatabase("shop").getCollection("orders");
            orders.withWriteConcern(WriteConcern.MAJORITY).insertOne(new Document("_id", "committed"));
            EmulatedNode first = set.primary();
            set.secondaries().forEach(set::pauseReplication);

            orders.withWriteConcern(WriteConcern.W1).insertOne(new Document("_id", "w1"));
            assertThatThrownBy(() -> orders.withWriteConcern(
                                    WriteConcern.MAJORITY.withWTimeout(200, TimeUnit.MILLISECONDS))
                            .insertOne(new Document("_id", "majority-timed-out")))
                    .isInstanceOfSatisfying(
                            MongoWriteConcernException.class,
                            e -> assertThat(e.getWriteConcernError().getCode()).isEqualTo(64));
            set.stepDown(Duration.ofSeconds(60), Duration.ZERO, true);
            set.secondaries().forEach(set::resumeReplication);
            EmulatedNode second = set.awaitPrimary(Duration.ofSeconds(5));
            set.members().forEach(set::resumeReplication);
            assertThat(set.awaitReplication(Duration.ofSeconds(5))).isTrue();

            assertThat(second).isNotSameAs(first);
            assertThat(orders.find().map(d -> d.get("_id")).into(new java.util.ArrayList<>()))
                    .containsExactly("committed");
            assertThat(stored(first, "shop", "orders"))
                    .as("the old primary rolled back")
                    .containsExactly(BsonDocument.parse("{_id: 'committed'}"));
            assertThat(set.rolledBack())
                    .extracting(d -> d.getDocument("o").get("_id"))
                    .containsExactlyInAnyOrder(new BsonString("w1"), new BsonString("majority-timed-out"));

            // A majority write is on a majority: the next failover keeps it.
            orders.withWriteConcern(WriteConcern.MAJORITY).insertOne(new Document("_id", "after"));
            // The majority may be the primary and the first member (both now unelectable for 60 s): let the third catch
            // up first, since the emulated secondaries sync from the primary only (a real set would chain from the
            // first member and elect the third once it caught up). Without this the test failed about 1 run in 4.
            assertThat(set.awaitReplication(Duration.ofSeconds(5))).isTrue();
            set.stepDown(Duration.ofSeconds(60), Duration.ZERO, true);
            set.awaitPrimary(Duration.ofSeconds(5));
            assertThat(orders.countDocuments(new Document("_id", "after"))).isEqualTo(1);
        }
    }
}
