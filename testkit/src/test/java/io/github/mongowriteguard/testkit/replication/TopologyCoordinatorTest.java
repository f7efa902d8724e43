package io.github.mongowriteguard.testkit.replication;

import static io.github.mongowriteguard.testkit.replication.ReplicationTest.client;
import static io.github.mongowriteguard.testkit.replication.ReplicationTest.majorityOrders;
import static io.github.mongowriteguard.testkit.replication.ReplicationTest.stored;
import static io.github.mongowriteguard.testkit.replication.ReplicationTest.threeMembers;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import java.time.Duration;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * {@link TopologyCoordinator}: a set without a reachable primary elects the most up-to-date electable secondary that a
 * majority votes for (a voter refuses a candidate staler than itself: mongodb/mongo
 * {@code src/mongo/db/repl/topology_coordinator.cpp} {@code processReplSetRequestVotes}), and
 * {@code replSetGetStatus} reports the set as the asking member sees it ({@code prepareStatusResponse}).
 */
class TopologyCoordinatorTest {

    @Test
    void stoppedPrimary_isReplacedAfterTheElectionTimeout_andRejoinsAsASecondary() {
        try (EmulatedReplicaSet set = threeMembers();
                MongoClient client = client(set)) {
            MongoCollection<Document> orders = majorityOrders(client);
            orders.insertOne(new Document("_id", 1));
            EmulatedNode first = set.primary();

            set.stop(first);
            orders.insertOne(new Document("_id", 2));
            EmulatedNode second = set.primary();
            set.start(first);

            assertThat(second).isNotSameAs(first);
            assertThat(set.state(first)).isEqualTo(MemberState.SECONDARY);
            assertThat(set.awaitReplication(Duration.ofSeconds(5))).isTrue();
            assertThat(stored(first, "shop", "orders"))
                    .extracting(d -> d.getInt32("_id").getValue())
                    .containsExactly(1, 2);
        }
    }

    /** Of two secondaries, the one that missed a majority write cannot win: the other has the newer oplog. */
    @Test
    void anElection_choosesTheSecondaryWithTheNewestOplog() {
        try (EmulatedReplicaSet set = threeMembers();
                MongoClient client = client(set)) {
            MongoCollection<Document> orders = majorityOrders(client);
            orders.insertOne(new Document("_id", 1));
            EmulatedNode first = set.primary();
            List<EmulatedNode> secondaries = set.secondaries();
            EmulatedNode stale = secondaries.get(0);
            EmulatedNode fresh = secondaries.get(1);
            set.pauseReplication(stale);
            orders.insertOne(new Document("_id", 2)); // on the primary and the fresh secondary: a majority

            set.stop(first);

            assertThat(set.awaitPrimary(Duration.ofSeconds(5))).isSameAs(fresh);
            assertThat(set.state(stale)).isEqualTo(MemberState.SECONDARY);
            assertThat(set.oplogSize(stale)).isLessThan(set.oplogSize(fresh));
        }
    }

    @Test
    void replSetGetStatus_reportsEveryMember_asThePrimarySeesIt() {
        try (EmulatedReplicaSet set = threeMembers();
                MongoClient client = client(set)) {
            EmulatedNode primary = set.primary();
            EmulatedNode stopped = set.secondaries().get(0);
            set.stop(stopped);

            Document status = client.getDatabase("admin").runCommand(new Document("replSetGetStatus", 1));

            assertThat(status.getString("set")).isEqualTo("rs0");
            assertThat(status.getInteger("myState")).isEqualTo(1);
            assertThat(status.get("term", Number.class).longValue()).isEqualTo(1);
            List<Document> members = status.getList("members", Document.class);
            assertThat(members)
                    .extracting(m -> m.getString("name"))
                    .containsExactlyElementsOf(
                            set.members().stream().map(EmulatedNode::address).toList());
            Document self = members.get(set.members().indexOf(primary));
            assertThat(self.getBoolean("self")).isTrue();
            assertThat(self.getInteger("state")).isEqualTo(1);
            assertThat(self.getInteger("health")).isEqualTo(1);
            Document down = members.get(set.members().indexOf(stopped));
            assertThat(down.getInteger("health")).isZero();
            assertThat(down.getString("stateStr")).isEqualTo("(not reachable/healthy)");
            assertThat(down.containsKey("self")).isFalse();
        }
    }
}
