package io.github.mongowriteguard.testkit.sharding;

import static io.github.mongowriteguard.testkit.Clients.waitForOps;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * {@code currentOp}, {@code $currentOp} and {@code killSessions} through mongos, as a real mongos answers them
 * (mongodb/mongo, 4.4 to 8.0):
 * <ul>
 *   <li>{@code currentOp} and {@code $currentOp} list the <em>shards'</em> operations, each with a {@code shard}
 *       field, {@code opid} as {@code "<shard>:<opid>"} and {@code client_s} for {@code client}; mongos' own
 *       operations only with {@code $currentOp: {localOps: true}} ({@code src/mongo/s/commands/cluster_current_op.cpp},
 *       {@code src/mongo/db/pipeline/document_source_current_op.cpp} {@code doGetNext}, {@code kLocalOpsFieldName});</li>
 *   <li>{@code killSessions} kills mongos' own operations of the sessions and then multicasts
 *       {@code killAllSessionsByPattern} to every shard host ({@code src/mongo/s/kill_sessions_remote.cpp},
 *       {@code killSessionsRemote}).</li>
 * </ul>
 */
class IntrospectionThroughMongosTest {
    private static final String NS = "intro.held";

    @Test
    void currentOp_throughMongos_listsTheShardsOperations_withShardAndStringOpid_notMongosOwn() throws Exception {
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(2).start();
                MongoClient writer = Clients.client(cluster.connectionString(), b -> b.applicationName("writer"));
                MongoClient observer = Clients.client(cluster.connectionString());
                StallHandle stall = cluster.shard(0).stall(Stall.uninterruptible(NS, Duration.ofSeconds(2)))) {
            CompletableFuture<Void> write = CompletableFuture.runAsync(
                    () -> writer.getDatabase("intro").getCollection("held").insertOne(new Document("v", 1)));

            Document op = waitForOps(observer, new Document("ns", NS), 1).get(0);

            assertThat(op.getString("shard")).isEqualTo("shard00");
            assertThat(op.get("opid")).isInstanceOf(String.class);
            assertThat(op.getString("opid")).matches("shard00:\\d+");
            assertThat(op).containsKey("client_s").doesNotContainKey("client");
            assertThat(op.getString("op")).isEqualTo("insert");
            assertThat(op.get("lsid", Document.class)).containsKeys("id", "uid");
            // Every entry comes from a shard: mongos' own insert (waiting for shard00) is not listed.
            List<Document> all = observer.getDatabase("admin")
                    .runCommand(new Document("currentOp", 1))
                    .getList("inprog", Document.class);
            assertThat(all).allSatisfy(o -> assertThat(o.getString("opid")).contains(":"));
            assertThat(all).extracting(o -> o.getString("shard")).isSorted();

            List<Document> aggregated = observer.getDatabase("admin")
                    .aggregate(List.of(
                            new Document("$currentOp", new Document("allUsers", true)),
                            new Document("$match", new Document("ns", NS))))
                    .into(new ArrayList<>());
            assertThat(aggregated)
                    .singleElement()
                    .satisfies(o -> assertThat(o.getString("opid")).isEqualTo(op.getString("opid")));

            // localOps: mongos' own operations, numeric opids, no shard field.
            List<Document> local = observer.getDatabase("admin")
                    .aggregate(List.of(
                            new Document("$currentOp", new Document("allUsers", true).append("localOps", true)),
                            new Document("$match", new Document("ns", NS))))
                    .into(new ArrayList<>());
            assertThat(local).singleElement().satisfies(o -> {
                assertThat(o.get("opid")).isInstanceOf(Integer.class);
                assertThat(o).doesNotContainKey("shard");
                assertThat(o.getString("appName")).isEqualTo("writer");
            });
            write.get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void currentOp_throughMongos_isCountedOncePerShardAsked_localOpsNot() {
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(3).start();
                MongoClient observer = Clients.client(cluster.connectionString())) {
            cluster.routing().reset();

            observer.getDatabase("admin").runCommand(new Document("currentOp", 1));
            observer.getDatabase("admin")
                    .aggregate(List.of(new Document("$currentOp", new Document("allUsers", true))))
                    .into(new ArrayList<>());
            observer.getDatabase("admin")
                    .aggregate(List.of(
                            new Document("$currentOp", new Document("allUsers", true).append("localOps", true))))
                    .into(new ArrayList<>());

            assertThat(cluster.routing().currentOpShardRequests())
                    .as("two commands that fan out to 3 shards; localOps stays on mongos")
                    .isEqualTo(6);
            cluster.routing().reset();
            assertThat(cluster.routing().currentOpShardRequests()).isZero();
        }
    }

    @Test
    void currentOpStage_refusesAnUnknownOption_asTheServerParsesIt() {
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(1).start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            assertThatThrownBy(() -> client.getDatabase("admin")
                            .aggregate(List.of(new Document("$currentOp", new Document("ownOps", true))))
                            .into(new ArrayList<>()))
                    .isInstanceOfSatisfying(MongoException.class, e -> {
                        assertThat(e.getCode()).isEqualTo(9);
                        assertThat(e.getMessage()).contains("Unrecognized option 'ownOps' in $currentOp stage");
                    });
        }
    }

    @Test
    void killSessions_throughMongos_reachesTheShardRunningTheSessionsWrite() throws Exception {
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(2).start();
                MongoClient writer = Clients.client(cluster.connectionString(), b -> b.retryWrites(false));
                MongoClient admin = Clients.client(cluster.connectionString());
                StallHandle stall = cluster.shard(0).stall(Stall.interruptible(NS, Duration.ofSeconds(30)))) {
            CompletableFuture<Void> write = CompletableFuture.runAsync(
                    () -> writer.getDatabase("intro").getCollection("held").insertOne(new Document("v", 1)));
            Document op = waitForOps(admin, new Document("ns", NS), 1).get(0);
            Document lsid = op.get("lsid", Document.class);

            long start = System.nanoTime();
            admin.getDatabase("admin")
                    .runCommand(new Document("killSessions", List.of(new Document("id", lsid.get("id")))));

            // The shard's operation ends at its next interrupt point, long before its 30 s stall.
            assertThat(cluster.truth().awaitIdle(c -> c.commandName().equals("insert"), Duration.ofSeconds(5)))
                    .isTrue();
            assertThat(System.nanoTime() - start)
                    .isLessThan(Duration.ofSeconds(5).toNanos());
            assertThat(cluster.shard(0).truth().commands("insert"))
                    .singleElement()
                    .satisfies(c -> assertThat(c.errorCode()).isEqualTo(11601));
            assertThatThrownBy(() -> write.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(MongoException.class);
            assertThat(admin.getDatabase("intro").getCollection("held").countDocuments())
                    .isZero();
        }
    }
}
