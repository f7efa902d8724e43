package io.github.mongowriteguard.testkit.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoSocketException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import java.util.List;
import java.util.function.Consumer;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Applied, then the connection closed, for every write kind (multi-document ones included, which no server fail point
 * covers): the write runs to its end, the reply is lost and the driver sees a closed connection.
 */
class LostRepliesTest {

    private static void check(EmulatedClusterUnderTest cluster, String kind) {
        try (MongoClient client = Clients.client(cluster.connectionString(), b -> b.retryWrites(false))) {
            MongoCollection<Document> c = client.getDatabase("lost").getCollection("replies");
            c.insertMany(List.of(
                    new Document("_id", 1).append("g", 1).append("n", 0),
                    new Document("_id", 2).append("g", 1).append("n", 0),
                    new Document("_id", 3).append("g", 2).append("n", 0)));
            String command;
            Consumer<MongoCollection<Document>> write;
            Document expected;
            switch (kind) {
                case "insertOne" -> {
                    command = "insert";
                    write = w -> w.insertOne(new Document("_id", 4));
                    expected = new Document("_id", 4);
                }
                case "insertMany" -> {
                    command = "insert";
                    write = w -> w.insertMany(List.of(new Document("_id", 4), new Document("_id", 5)));
                    expected = new Document("_id", new Document("$in", List.of(4, 5)));
                }
                case "updateOne" -> {
                    command = "update";
                    write = w -> w.updateOne(new Document("_id", 1), new Document("$inc", new Document("n", 1)));
                    expected = new Document("_id", 1).append("n", 1);
                }
                case "upsertReplace" -> {
                    command = "update";
                    write = w -> w.bulkWrite(List.of(new ReplaceOneModel<>(
                            new Document("_id", 9),
                            new Document("r", 1),
                            new com.mongodb.client.model.ReplaceOptions().upsert(true))));
                    expected = new Document("_id", 9).append("r", 1);
                }
                case "updateMany" -> {
                    command = "update";
                    write = w -> w.updateMany(new Document("g", 1), new Document("$inc", new Document("n", 1)));
                    expected = new Document("g", 1).append("n", 1);
                }
                case "deleteOne" -> {
                    command = "delete";
                    write = w -> w.deleteOne(new Document("_id", 3));
                    expected = null;
                }
                case "deleteMany" -> {
                    command = "delete";
                    write = w -> w.deleteMany(new Document("g", 1));
                    expected = null;
                }
                default -> {
                    command = "update";
                    write = w -> w.bulkWrite(List.of(
                            new InsertOneModel<>(new Document("_id", 4)),
                            new UpdateOneModel<>(
                                    new Document("_id", 1),
                                    new Document("$inc", new Document("n", 1)),
                                    new UpdateOptions()),
                            new UpdateManyModel<>(new Document("g", 2), new Document("$set", new Document("m", 1))),
                            new DeleteOneModel<>(new Document("_id", 2)),
                            new DeleteManyModel<>(new Document("_id", 99))));
                    expected = new Document("_id", 3).append("m", 1);
                }
            }
            long before = c.countDocuments();
            cluster.loseReplies(command);

            assertThatThrownBy(() -> write.accept(c)).isInstanceOf(MongoSocketException.class);

            if (expected != null) {
                assertThat(c.countDocuments(expected)).as(kind + " was applied").isPositive();
            } else {
                assertThat(c.countDocuments()).as(kind + " was applied").isLessThan(before);
            }
            List<ReceivedCommand> lost = cluster.clientCommands(command);
            assertThat(lost).last().satisfies(r -> {
                assertThat(r.outcome()).isEqualTo(ReceivedCommand.Outcome.CONNECTION_CLOSED);
                assertThat(r.executed()).isTrue();
            });
        }
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "insertOne",
                "insertMany",
                "updateOne",
                "upsertReplace",
                "updateMany",
                "deleteOne",
                "deleteMany",
                "mixedBulk"
            })
    void onAReplicaSet(String kind) {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet().start()) {
            check(new EmulatedClusterUnderTest(set.connectionString(), set.primary()), kind);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"insertOne", "updateOne", "updateMany", "deleteMany", "mixedBulk"})
    void throughMongos(String kind) {
        try (EmulatedShardedCluster cluster =
                EmulatedCluster.sharded().shards(2).start()) {
            check(new EmulatedClusterUnderTest(cluster.connectionString(), cluster.mongos(0)), kind);
        }
    }

    /** The node whose replies are lost: a primary, or the mongos the client talks to. */
    private record EmulatedClusterUnderTest(String connectionString, EmulatedNode node) {
        void loseReplies(String command) {
            node.loseReplies(1, command);
        }

        List<ReceivedCommand> clientCommands(String command) {
            return node.truth().commands(command);
        }
    }
}
