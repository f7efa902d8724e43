package io.github.mongowriteguard.testkit.replication;

import static io.github.mongowriteguard.testkit.replication.ReplicationTest.client;
import static io.github.mongowriteguard.testkit.replication.ReplicationTest.majorityOrders;
import static io.github.mongowriteguard.testkit.replication.ReplicationTest.stored;
import static io.github.mongowriteguard.testkit.replication.ReplicationTest.threeMembers;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoWriteConcernException;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * {@link ReplicationWaiter}: {@code w: "majority"} waits until a majority of the members hold the write, and a wait
 * that does not end that way ends with a {@code writeConcernError} while the write stays applied: {@code wtimeout}
 * with {@code WriteConcernFailed} (64, {@code errInfo.wtimeout}), the command's {@code maxTimeMS} with
 * {@code MaxTimeMSExpired} (50) (mongodb/mongo {@code src/mongo/db/repl/replication_coordinator_impl.cpp}
 * {@code _awaitReplication_inlock}).
 */
class ReplicationWaiterTest {

    @Test
    void wMajority_isSatisfiedByThePrimaryAndOneSecondary_whileTheOtherSecondaryIsPaused() {
        try (EmulatedReplicaSet set = threeMembers();
                MongoClient client = client(set)) {
            MongoCollection<Document> orders = majorityOrders(client);
            List<EmulatedNode> secondaries = set.secondaries();
            set.pauseReplication(secondaries.get(0));

            orders.insertOne(new Document("_id", 1));

            assertThat(stored(secondaries.get(1), "shop", "orders")).containsExactly(BsonDocument.parse("{_id: 1}"));
            assertThat(stored(secondaries.get(0), "shop", "orders")).isEmpty();
        }
    }

    @Test
    void wMajority_withEverySecondaryPaused_endsAtItsWtimeout_withWriteConcernFailed_andTheWriteStaysApplied() {
        try (EmulatedReplicaSet set = threeMembers();
                MongoClient client = client(set)) {
            MongoCollection<Document> orders = client.getDatabase("shop").getCollection("orders");
            set.secondaries().forEach(set::pauseReplication);

            assertThatThrownBy(() -> orders.withWriteConcern(
                                    WriteConcern.MAJORITY.withWTimeout(200, TimeUnit.MILLISECONDS))
                            .insertOne(new Document("_id", 1)))
                    .isInstanceOfSatisfying(MongoWriteConcernException.class, e -> {
                        assertThat(e.getWriteConcernError().getCode()).isEqualTo(64);
                        assertThat(e.getWriteConcernError().getCodeName()).isEqualTo("WriteConcernFailed");
                        assertThat(e.getWriteConcernError()
                                        .getDetails()
                                        .getBoolean("wtimeout")
                                        .getValue())
                                .isTrue();
                    });
            assertThat(stored(set.primary(), "shop", "orders")).containsExactly(BsonDocument.parse("{_id: 1}"));
        }
    }

    @Test
    void wMajority_withEverySecondaryPaused_endsAtTheCommandsMaxTimeMS_withMaxTimeMSExpired() {
        try (EmulatedReplicaSet set = threeMembers();
                MongoClient client = client(set)) {
            set.secondaries().forEach(set::pauseReplication);

            Document reply = client.getDatabase("shop")
                    .runCommand(Document.parse("{insert: 'orders', documents: [{_id: 1}],"
                            + " writeConcern: {w: 'majority'}, maxTimeMS: 200}"));

            assertThat(reply.get("n", Number.class).intValue()).isEqualTo(1);
            Document error = reply.get("writeConcernError", Document.class);
            assertThat(error.getInteger("code")).isEqualTo(50);
            assertThat(error.getString("codeName")).isEqualTo("MaxTimeMSExpired");
            assertThat(stored(set.primary(), "shop", "orders")).containsExactly(BsonDocument.parse("{_id: 1}"));
        }
    }
}
