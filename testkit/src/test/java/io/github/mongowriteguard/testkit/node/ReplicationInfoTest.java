package io.github.mongowriteguard.testkit.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.time.Duration;
import org.bson.Document;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

/**
 * {@link ReplicationInfo}: a member's {@code hello} describes the set as the member sees it now (its state, the hosts,
 * the primary it knows) and the primary's {@code electionId} grows with the term, so the driver takes the newest
 * primary (mongodb/mongo {@code src/mongo/db/repl/replication_info.cpp}, {@code replication_coordinator_impl.cpp}
 * {@code fillIsMasterForReplSet}, {@code OID::fromTerm}).
 */
class ReplicationInfoTest {

    private static Document hello(EmulatedNode member, String command) {
        try (MongoClient direct = Clients.client("mongodb://" + member.address() + "/?directConnection=true")) {
            return direct.getDatabase("admin").runCommand(new Document(command, 1));
        }
    }

    @Test
    void aSecondarysHello_namesItsSetItsHostsAndThePrimaryItKnows() {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet()
                .members(3)
                .electionTimeout(Duration.ofMillis(300))
                .start()) {
            EmulatedNode secondary = set.secondaries().get(0);

            Document reply = hello(secondary, "hello");

            assertThat(reply.getBoolean("isWritablePrimary")).isFalse();
            assertThat(reply.getBoolean("secondary")).isTrue();
            assertThat(reply.getString("setName")).isEqualTo("rs0");
            assertThat(reply.getList("hosts", String.class))
                    .containsExactlyElementsOf(
                            set.members().stream().map(EmulatedNode::address).toList());
            assertThat(reply.getString("primary")).isEqualTo(set.primary().address());
            assertThat(reply.getString("me")).isEqualTo(secondary.address());
            assertThat(reply.containsKey("electionId")).isFalse();
            assertThat(hello(secondary, "isMaster").getBoolean("ismaster")).isFalse();
        }
    }

    @Test
    void theElectionId_growsWithTheTerm() {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet()
                .members(3)
                .electionTimeout(Duration.ofMillis(300))
                .start()) {
            EmulatedNode first = set.primary();
            Document before = hello(first, "hello");

            set.stepDown(Duration.ofSeconds(60), Duration.ofSeconds(10), false);
            EmulatedNode second = set.awaitPrimary(Duration.ofSeconds(5));
            Document after = hello(second, "hello");

            assertThat(before.getBoolean("isWritablePrimary")).isTrue();
            assertThat(after.getBoolean("isWritablePrimary")).isTrue();
            assertThat(after.get("electionId", ObjectId.class)).isGreaterThan(before.get("electionId", ObjectId.class));
            assertThat(hello(first, "hello").getString("primary")).isEqualTo(second.address());
        }
    }
}
