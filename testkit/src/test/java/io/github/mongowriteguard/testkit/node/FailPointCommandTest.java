package io.github.mongowriteguard.testkit.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoWriteConcernException;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * {@link FailPointCommand}: {@code configureFailPoint} with several fail points at once, as on mongod: each fail point has one configuration (a new {@code configureFailPoint}
 * replaces it: {@code FailPoint::setMode} in {@code src/mongo/util/fail_point.cpp}), different fail points act
 * together, and each member of a set has its own (they do not follow the primary).
 */
class FailPointCommandTest {

    private static void configure(MongoClient client, String failPoint, Object mode, Document data) {
        client.getDatabase("admin")
                .runCommand(new Document("configureFailPoint", failPoint)
                        .append("mode", mode)
                        .append("data", data));
    }

    @Test
    void configuringAFailPointAgain_replacesItsConfiguration() {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(set.connectionString(), b -> b.retryWrites(false))) {
            MongoCollection<Document> c = client.getDatabase("fp").getCollection("replace");
            configure(
                    client,
                    "failCommand",
                    "alwaysOn",
                    new Document("failCommands", List.of("insert")).append("errorCode", 2));
            configure(
                    client,
                    "failCommand",
                    "alwaysOn",
                    new Document("failCommands", List.of("delete")).append("errorCode", 2));

            c.insertOne(new Document("_id", 1));
            assertThatThrownBy(() -> c.deleteOne(new Document("_id", 1))).isInstanceOf(MongoException.class);
            configure(client, "failCommand", "off", new Document());
            assertThat(c.countDocuments()).isEqualTo(1);
        }
    }

    /**
     * failCommand (a write-concern error on updates), onPrimaryTransactionalWrite (inserts applied, then the connection
     * closed) and, on a secondary, stopReplProducer (replication stopped) all act at once.
     */
    @Test
    void differentFailPoints_actTogether() throws Exception {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet()
                        .members(3)
                        .electionTimeout(Duration.ofMillis(300))
                        .start();
                MongoClient client = Clients.client(
                        set.connectionString(),
                        b -> b.retryWrites(false).applyToSocketSettings(s -> s.readTimeout(3, TimeUnit.SECONDS)))) {
            MongoCollection<Document> c = client.getDatabase("fp").getCollection("together");
            c.insertOne(new Document("_id", 0));
            EmulatedNode lagging = set.secondaries().get(0);
            try (MongoClient toSecondary =
                    Clients.client("mongodb://" + lagging.address() + "/?directConnection=true")) {
                configure(toSecondary, "stopReplProducer", "alwaysOn", new Document());
            }
            configure(
                    client,
                    "failCommand",
                    new Document("times", 1),
                    new Document("failCommands", List.of("update"))
                            .append("writeConcernError", new Document("code", 91).append("errmsg", "shutting down")));
            configure(
                    client,
                    "onPrimaryTransactionalWrite",
                    new Document("times", 1),
                    new Document("closeConnection", true));

            assertThatThrownBy(() -> c.updateOne(new Document("_id", 0), new Document("$set", new Document("u", 1))))
                    .isInstanceOfSatisfying(
                            MongoWriteConcernException.class,
                            e -> assertThat(e.getWriteConcernError().getCode()).isEqualTo(91));
            try (com.mongodb.client.ClientSession session = client.startSession()) {
                // The guard's way to send a retryable write: runCommand with txnNumber (retryWrites is off here).
                assertThatThrownBy(() -> client.getDatabase("fp")
                                .runCommand(
                                        session,
                                        new Document("insert", "together")
                                                .append("documents", List.of(new Document("_id", 1)))
                                                .append("txnNumber", 1L)))
                        .isInstanceOf(MongoSocketException.class);
            }

            assertThat(c.countDocuments())
                    .as("the update and the insert were applied")
                    .isEqualTo(2);
            assertThat(c.find(new Document("_id", 0)).first()).containsEntry("u", 1);
            assertThat(set.awaitReplication(Duration.ofSeconds(5))).isTrue();
            assertThat(set.oplogSize(lagging)).as("it stopped replicating").isLessThan(set.oplogSize(set.primary()));
            try (MongoClient toSecondary =
                    Clients.client("mongodb://" + lagging.address() + "/?directConnection=true")) {
                configure(toSecondary, "stopReplProducer", "off", new Document());
            }
            assertThat(set.awaitReplication(Duration.ofSeconds(5))).isTrue();
        }
    }

    @Test
    void eachMember_hasItsOwnFailPoints_whichDoNotFollowThePrimary() {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet()
                        .members(3)
                        .electionTimeout(Duration.ofMillis(300))
                        .start();
                MongoClient client = Clients.client(
                        set.connectionString(),
                        b -> b.retryWrites(false)
                                .applyToServerSettings(s -> s.heartbeatFrequency(100, TimeUnit.MILLISECONDS)
                                        .minHeartbeatFrequency(20, TimeUnit.MILLISECONDS)))) {
            MongoCollection<Document> c = client.getDatabase("fp").getCollection("members");
            EmulatedNode first = set.primary();
            configure(
                    client,
                    "failCommand",
                    "alwaysOn",
                    new Document("failCommands", List.of("insert")).append("errorCode", 2));
            assertThatThrownBy(() -> c.insertOne(new Document("_id", 1))).isInstanceOf(MongoException.class);

            set.stepDown(Duration.ofSeconds(60), Duration.ofSeconds(5), false);
            try (MongoClient later = Clients.client(set.connectionString(), b -> b.retryWrites(false))) {
                MongoCollection<Document> again = later.getDatabase("fp").getCollection("members");
                again.withWriteConcern(WriteConcern.MAJORITY).insertOne(new Document("_id", 2));
                assertThat(again.countDocuments()).isEqualTo(1);
            }

            assertThat(set.primary()).isNotSameAs(first);
            assertThat(first.failCommand().evaluate("insert", null))
                    .as("the old primary keeps its fail point")
                    .isPresent();
        }
    }
}
