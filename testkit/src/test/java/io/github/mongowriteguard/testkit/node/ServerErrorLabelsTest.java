package io.github.mongowriteguard.testkit.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.MongoException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The labels the server derives itself, as mongodb/mongo {@code src/mongo/db/error_labels.cpp} derives them:
 * {@code RetryableWriteError} for every command with {@code txnNumber} and without {@code autocommit}
 * ({@code isRetryableWriteError}, no command-name list: 8.0's {@code bulkWrite} too), and
 * {@code TransientTransactionError} for the codes {@code isTransientTransactionError} names or takes by category
 * ({@code src/mongo/base/error_codes.yml}).
 */
class ServerErrorLabelsTest {

    private static void failNext(MongoClient client, String command, int code) {
        client.getDatabase("admin")
                .runCommand(new Document("configureFailPoint", "failCommand")
                        .append("mode", new Document("times", 1))
                        .append("data", new Document("failCommands", List.of(command)).append("errorCode", code)));
    }

    @Test
    void bulkWriteOfServer80_withTxnNumber_getsRetryableWriteError() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet()
                        .serverVersion(ServerVersion.V8_0)
                        .start();
                MongoClient client = Clients.client(cluster.connectionString(), b -> b.retryWrites(false));
                ClientSession session = client.startSession()) {
            failNext(client, "bulkWrite", 189);
            Document bulkWrite = Document.parse("{bulkWrite: 1, ops: [{insert: 0, document: {_id: 1}}],"
                    + " nsInfo: [{ns: 'labels.c'}], txnNumber: NumberLong(1)}");

            MongoException e = catchThrowableOfType(
                    MongoException.class, () -> client.getDatabase("admin").runCommand(session, bulkWrite));

            assertThat(e.getCode()).isEqualTo(189);
            assertThat(e.getErrorLabels()).contains("RetryableWriteError");
        }
    }

    @ParameterizedTest(name = "{0} transient: {1}")
    @CsvSource({
        "112, true", // WriteConflict
        "24, true", // LockTimeout
        "250, true", // StaleChunkHistory (SnapshotError)
        "246, true", // SnapshotUnavailable
        "13388, true", // StaleConfig (NeedRetargettingError)
        "249, true", // StaleDbVersion
        "241, false", // ConversionFailure: not a snapshot error
        "2, false" // BadValue
    })
    void transactionStatementError_isTransientAsErrorLabelsDecides(int code, boolean transient_) {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString());
                ClientSession session = client.startSession()) {
            client.getDatabase("labels").createCollection("t");
            failNext(client, "insert", code);
            session.startTransaction();

            MongoException e = catchThrowableOfType(
                    MongoException.class,
                    () -> client.getDatabase("labels").getCollection("t").insertOne(session, new Document("_id", 1)));
            session.abortTransaction();

            assertThat(e.getCode()).isEqualTo(code);
            assertThat(e.hasErrorLabel("TransientTransactionError")).isEqualTo(transient_);
        }
    }
}
