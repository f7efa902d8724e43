package io.github.mongowriteguard.testkit.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.ServerVersion;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * The error labels the server adds itself, per version (mongodb/mongo {@code src/mongo/db/error_labels.cpp}
 * {@code ErrorLabelBuilder}): from 4.4 {@code RetryableWriteError} for a retryable code of a retryable write; the
 * 6.0+ source has mongos stop adding it ("mongos should not attach RetryableWriteError label to retryable errors
 * thrown by the config server or targeted shards") and mongod add {@code NoWritesPerformed} next to it when the
 * connection had written before and this command wrote nothing ({@code isErrorWithNoWritesPerformed}). A fail point
 * with {@code errorLabels} replaces all of them (not used here).
 */
class RetryableWriteLabelsTest {
    /**
     * ExceededTimeLimit (262) on the first send and the driver's retry (a retryable code that does not make the driver
     * clear its pool, so both sends use the one pooled connection).
     */
    private static final Document EXCEEDED = new Document("configureFailPoint", "failCommand")
            .append("mode", new Document("times", 2))
            .append("data", new Document("failCommands", List.of("insert")).append("errorCode", 262));

    @Test
    void mongod44_labelsARetryableCode_withoutNoWritesPerformed() {
        assertThat(labelsAfterAWrite(ServerVersion.V4_4)).containsExactly("RetryableWriteError");
    }

    @Test
    void mongod60_addsNoWritesPerformed_onlyWhenTheConnectionWroteBefore() {
        assertThat(labelsAfterAWrite(ServerVersion.V6_0)).containsExactly("RetryableWriteError", "NoWritesPerformed");
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet()
                        .serverVersion(ServerVersion.V6_0)
                        .start();
                MongoClient client = Clients.client(
                        cluster.connectionString(), b -> b.applyToConnectionPoolSettings(p -> p.maxSize(1)))) {
            client.getDatabase("admin").runCommand(EXCEEDED);
            MongoException e = catchThrowableOfType(
                    MongoException.class,
                    () -> client.getDatabase("labels").getCollection("c").insertOne(new Document("v", 1)));
            assertThat(e.getErrorLabels()).containsExactly("RetryableWriteError");
        }
    }

    @Test
    void mongos44_labelsItsRetryableError_mongos60_doesNot() {
        for (ServerVersion version : List.of(ServerVersion.V4_4, ServerVersion.V6_0)) {
            try (EmulatedShardedCluster cluster =
                            EmulatedCluster.sharded().serverVersion(version).start();
                    MongoClient client = Clients.client(cluster.connectionString())) {
                client.getDatabase("admin").runCommand(EXCEEDED); // on mongos
                MongoException e = catchThrowableOfType(
                        MongoException.class,
                        () -> client.getDatabase("labels").getCollection("c").insertOne(new Document("v", 1)));

                assertThat(e.getCode()).isEqualTo(262);
                if (version == ServerVersion.V4_4) {
                    assertThat(e.getErrorLabels()).containsExactly("RetryableWriteError");
                } else {
                    assertThat(e.getErrorLabels()).isEmpty();
                }
            }
        }
    }

    /** One connection (pool of 1): a successful insert, then one whose send and retry the fail point fails. */
    private static java.util.Set<String> labelsAfterAWrite(ServerVersion version) {
        try (EmulatedReplicaSet cluster =
                        EmulatedCluster.replicaSet().serverVersion(version).start();
                MongoClient client = Clients.client(
                        cluster.connectionString(), b -> b.applyToConnectionPoolSettings(p -> p.maxSize(1)))) {
            MongoCollection<Document> c = client.getDatabase("labels").getCollection("c");
            c.insertOne(new Document("v", 0));
            client.getDatabase("admin").runCommand(EXCEEDED);
            MongoException e = catchThrowableOfType(MongoException.class, () -> c.insertOne(new Document("v", 1)));
            assertThat(e.getCode()).isEqualTo(262);
            return new java.util.LinkedHashSet<>(e.getErrorLabels());
        }
    }
}
