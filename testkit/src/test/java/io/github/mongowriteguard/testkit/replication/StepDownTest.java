package io.github.mongowriteguard.testkit.replication;

import static io.github.mongowriteguard.testkit.replication.ReplicationTest.client;
import static io.github.mongowriteguard.testkit.replication.ReplicationTest.majorityOrders;
import static io.github.mongowriteguard.testkit.replication.ReplicationTest.stored;
import static io.github.mongowriteguard.testkit.replication.ReplicationTest.threeMembers;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import java.time.Duration;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * {@link StepDown}: {@code replSetStepDown} waits for a majority and an electable secondary to catch up
 * ({@code ExceededTimeLimit} otherwise, unless forced), the stepped-down primary stays unelectable for the stepdown
 * period, and a primary that cannot see a majority relinquishes by itself (mongodb/mongo
 * {@code src/mongo/db/repl/replication_coordinator_impl.cpp} {@code stepDown}; {@code topology_coordinator.cpp}).
 */
class StepDownTest {

    @Test
    void stepDown_withoutACaughtUpSecondary_failsWithExceededTimeLimit_andTheNodeStaysPrimary() {
        try (EmulatedReplicaSet set = threeMembers();
                MongoClient client = client(set)) {
            MongoCollection<Document> orders = client.getDatabase("shop").getCollection("orders");
            orders.insertOne(new Document("_id", 1));
            EmulatedNode first = set.primary();
            set.secondaries().forEach(set::pauseReplication);
            orders.insertOne(new Document("_id", 2));

            assertThatThrownBy(() -> client.getDatabase("admin")
                            .runCommand(new Document("replSetStepDown", 30).append("secondaryCatchUpPeriodSecs", 0)))
                    .isInstanceOfSatisfying(com.mongodb.MongoCommandException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(262);
                        assertThat(e.getErrorMessage()).contains("No electable secondaries caught up");
                    });
            assertThat(set.primary()).isSameAs(first);
            orders.insertOne(new Document("_id", 3));
            assertThat(orders.countDocuments()).isEqualTo(3);
        }
    }

    @Test
    void aForcedStepDown_withoutACaughtUpSecondary_stepsDownAnyway_andAnotherMemberIsElected() {
        try (EmulatedReplicaSet set = threeMembers();
                MongoClient client = client(set)) {
            MongoCollection<Document> orders = client.getDatabase("shop").getCollection("orders");
            orders.withWriteConcern(WriteConcern.MAJORITY).insertOne(new Document("_id", 1));
            EmulatedNode first = set.primary();
            set.secondaries().forEach(set::pauseReplication);
            orders.withWriteConcern(WriteConcern.W1).insertOne(new Document("_id", 2));

            set.stepDown(Duration.ofSeconds(60), Duration.ZERO, true);

            assertThat(set.state(first)).isEqualTo(MemberState.SECONDARY);
            set.members().forEach(set::resumeReplication);
            assertThat(set.awaitPrimary(Duration.ofSeconds(5))).isNotSameAs(first);
        }
    }

    @Test
    void replSetStepDown_throughTheDriver_electsASecondary_andWritesGoOn() {
        try (EmulatedReplicaSet set = threeMembers();
                MongoClient client = client(set)) {
            MongoCollection<Document> orders = majorityOrders(client);
            orders.insertOne(new Document("_id", 1));
            EmulatedNode first = set.primary();

            client.getDatabase("admin").runCommand(new Document("replSetStepDown", 30));
            orders.insertOne(new Document("_id", 2));

            assertThat(set.primary()).isNotSameAs(first);
            assertThat(set.state(first)).isEqualTo(MemberState.SECONDARY);
            assertThat(orders.countDocuments()).isEqualTo(2);
            Document status = client.getDatabase("admin").runCommand(new Document("replSetGetStatus", 1));
            assertThat(status.getInteger("myState")).isEqualTo(1);
            assertThat(status.getList("members", Document.class)).hasSize(3);
        }
    }

    /** Within its stepdown period the old primary does not stand: when the next primary goes, the third member wins. */
    @Test
    void aSteppedDownPrimary_isNotElectedAgain_withinItsStepDownPeriod() {
        try (EmulatedReplicaSet set = threeMembers();
                MongoClient client = client(set)) {
            MongoCollection<Document> orders = majorityOrders(client);
            orders.insertOne(new Document("_id", 1));
            EmulatedNode first = set.primary();
            set.stepDown(Duration.ofSeconds(60), Duration.ofSeconds(10), false);
            EmulatedNode second = set.awaitPrimary(Duration.ofSeconds(5));
            orders.insertOne(new Document("_id", 2));
            assertThat(set.awaitReplication(Duration.ofSeconds(5))).isTrue();
            EmulatedNode third = set.members().stream()
                    .filter(m -> m != first && m != second)
                    .findFirst()
                    .orElseThrow();

            set.stop(second);

            assertThat(set.awaitPrimary(Duration.ofSeconds(5))).isSameAs(third);
            assertThat(set.state(first)).isEqualTo(MemberState.SECONDARY);
        }
    }

    @Test
    void aPrimaryPartitionedAway_stepsDown_aNewOneIsElected_andTheClientWritesThere() {
        try (EmulatedReplicaSet set = threeMembers();
                MongoClient client = client(set)) {
            MongoCollection<Document> orders = majorityOrders(client);
            orders.insertOne(new Document("_id", 1));
            EmulatedNode first = set.primary();

            try (EmulatedReplicaSet.Partition cut = set.partition(first, PartitionMode.CLOSE_CONNECTIONS)) {
                orders.insertOne(new Document("_id", 2));
                assertThat(set.primary()).isNotSameAs(first);
                RestartAndPartitionTest.awaitState(set, first, MemberState.SECONDARY);
            }
            assertThat(set.awaitReplication(Duration.ofSeconds(5))).isTrue();
            assertThat(stored(first, "shop", "orders")).hasSize(2);
        }
    }
}
