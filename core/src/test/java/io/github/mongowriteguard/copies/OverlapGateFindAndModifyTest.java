package io.github.mongowriteguard.copies;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.MongoSocketException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.github.mongowriteguard.internal.copies.LiveCopyLedger;
import io.github.mongowriteguard.internal.copies.OverlapGate;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.mongowriteguard.testkit.stall.StallMode;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The gate finds a running {@code findAndModify}: {@code currentOp} shows it with {@code op: "command"} (the write
 * commands set their logical op to insert/update/remove in {@code src/mongo/db/ops/write_ops_exec.cpp};
 * {@code find_and_modify.cpp} does not, and {@code curop.cpp} reports {@code logicalOpToString}), so only its
 * {@code command} names it, also when {@code currentOp} truncated it to {@code {$truncated: "{ findAndModify: ..."}}.
 */
class OverlapGateFindAndModifyTest {
    private static final String NS = "gate.records";
    private static final int SOCKET_TIMEOUT_MS = 300;
    private static final long MAX_TIME_MS = 100;

    @ParameterizedTest
    @CsvSource({"false,false", "false,true", "true,false", "true,true"})
    void runningFindAndModify_isSeen_andRefusesTheRetry(boolean sharded, boolean large) throws Exception {
        AutoCloseable deployment;
        String uri;
        EmulatedNode stalled;
        if (sharded) {
            EmulatedShardedCluster cluster = EmulatedCluster.sharded().shards(2).start();
            deployment = cluster;
            uri = cluster.connectionString();
            stalled = cluster.shard(0);
        } else {
            EmulatedReplicaSet set = EmulatedCluster.replicaSet().start();
            deployment = set;
            uri = set.connectionString();
            stalled = set.primary();
        }
        try (deployment;
                MongoClient client = client(uri);
                StallHandle stall = stalled.stall(
                        new Stall(NS, Stall.WRITE_COMMANDS, StallMode.UNINTERRUPTIBLE, Duration.ofSeconds(3)))) {
            LiveCopyLedger.Copy copy;
            long sentAt;
            try (ClientSession session = client.startSession()) {
                String lsid = session.getServerSession()
                        .getIdentifier()
                        .getBinary("id")
                        .asUuid()
                        .toString();
                copy = new LiveCopyLedger().start(NS, lsid, 7L, "mwg:fam:1.1");
                BsonDocument update = new BsonDocument(
                        "$set", new BsonDocument("pad", new BsonString(large ? "p".repeat(2_000) : "p")));
                BsonDocument findAndModify = new BsonDocument("findAndModify", new BsonString("records"))
                        .append("query", new BsonDocument("_id", new BsonInt32(1)))
                        .append("update", update)
                        .append("upsert", BsonBoolean.TRUE)
                        .append("maxTimeMS", new BsonInt64(MAX_TIME_MS))
                        .append("txnNumber", new BsonInt64(7))
                        .append("comment", new BsonString("mwg:fam:1.1"));
                copy.sent();
                sentAt = System.nanoTime();
                if (sharded) {
                    // mongos answers at the command's maxTimeMS, below the socket timeout, while the stalled shard
                    // still runs the copy (src/mongo/s/async_requests_sender.cpp)
                    assertThatThrownBy(() -> client.getDatabase("gate").runCommand(session, findAndModify))
                            .isInstanceOfSatisfying(
                                    MongoException.class,
                                    e -> assertThat(e.getCode()).isEqualTo(50));
                } else {
                    assertThatThrownBy(() -> client.getDatabase("gate").runCommand(session, findAndModify))
                            .isInstanceOf(MongoSocketException.class);
                }
                copy.clientGaveUp();
            }

            GateVerdict verdict = new OverlapGate(Duration.ofMillis(50))
                    .beforeRetry(client.getDatabase("admin"), copy, sentAt, MAX_TIME_MS);

            assertThat(verdict).isEqualTo(GateVerdict.REFUSED);
            assertThat(copy.snapshot().possiblyRunning()).isTrue();
            stall.release();
        }
    }

    private static MongoClient client(String uri) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .applyToSocketSettings(s -> s.readTimeout(SOCKET_TIMEOUT_MS, TimeUnit.MILLISECONDS))
                .applyToClusterSettings(c -> c.serverSelectionTimeout(5, TimeUnit.SECONDS))
                .retryWrites(false)
                .build());
    }
}
