package io.github.mongowriteguard.testkit.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoSecurityException;
import com.mongodb.client.MongoClient;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
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
 * Users, SCRAM-SHA-256 and the privileges the overlap gate depends on, as the server checks them (mongodb/mongo):
 * <ul>
 *   <li>mongod's {@code currentOp} needs {@code inprog}, or an authenticated user asking {@code $ownOps: true}, which
 *       then lists only that user's operations ({@code src/mongo/db/commands/current_op.cpp},
 *       {@code checkAuthForCommand}; {@code current_op_common.cpp}: {@code allUsers: !$ownOps});</li>
 *   <li>mongos' {@code currentOp} needs {@code inprog} whatever {@code $ownOps} says
 *       ({@code src/mongo/s/commands/cluster_current_op.cpp}), and so does its {@code $currentOp} unless
 *       {@code localOps: true} ({@code document_source_current_op.h}, {@code requiredPrivileges}: "In a sharded
 *       cluster, we always need the inprog privilege to run $currentOp on the shards");</li>
 *   <li>any user may kill its own sessions; an id alone names the caller's own session
 *       ({@code src/mongo/db/commands/kill_sessions_command.cpp}).</li>
 * </ul>
 */
class AuthorizationTest {
    private static final String NS = "auth.held";

    @Test
    void scram_authenticatesTheRealDriver_andRefusesAWrongPasswordAndAnUnauthenticatedCommand() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet()
                        .user("app", "secret", "readWriteAnyDatabase")
                        .start();
                MongoClient app = Clients.client(Clients.withUser(cluster.connectionString(), "app", "secret"));
                MongoClient wrong = Clients.client(Clients.withUser(cluster.connectionString(), "app", "wrong"));
                MongoClient anonymous = Clients.client(cluster.connectionString())) {
            app.getDatabase("auth").getCollection("c").insertOne(new Document("v", 1));
            assertThat(app.getDatabase("auth").getCollection("c").countDocuments())
                    .isEqualTo(1);

            assertThatThrownBy(
                            () -> wrong.getDatabase("auth").getCollection("c").insertOne(new Document("v", 2)))
                    .isInstanceOf(MongoSecurityException.class);
            assertThatThrownBy(() ->
                            anonymous.getDatabase("auth").getCollection("c").insertOne(new Document("v", 3)))
                    .isInstanceOfSatisfying(
                            MongoCommandException.class,
                            e -> assertThat(e.getErrorCode()).isEqualTo(13));
        }
    }

    @Test
    void mongod_currentOpWithoutInprog_isUnauthorized_unlessOwnOps_whichListsOnlyTheUsersOwnOperations()
            throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet()
                        .user("app", "secret", "readWriteAnyDatabase")
                        .user("other", "secret", "readWriteAnyDatabase")
                        .user("admin", "secret", "root")
                        .start();
                MongoClient app = Clients.client(Clients.withUser(cluster.connectionString(), "app", "secret"));
                MongoClient other = Clients.client(Clients.withUser(cluster.connectionString(), "other", "secret"));
                MongoClient admin = Clients.client(Clients.withUser(cluster.connectionString(), "admin", "secret"));
                StallHandle stall = cluster.primary().stall(Stall.uninterruptible(NS, Duration.ofSeconds(1)))) {
            CompletableFuture<?> mine = CompletableFuture.runAsync(
                    () -> app.getDatabase("auth").getCollection("held").insertOne(new Document("v", 1)));
            CompletableFuture<?> theirs = CompletableFuture.runAsync(
                    () -> other.getDatabase("auth").getCollection("held").insertOne(new Document("v", 2)));
            awaitOps(admin, new Document("currentOp", 1).append("ns", NS), 2);

            assertThatThrownBy(() -> app.getDatabase("admin").runCommand(new Document("currentOp", 1)))
                    .isInstanceOfSatisfying(
                            MongoCommandException.class,
                            e -> assertThat(e.getErrorCode()).isEqualTo(13));
            List<Document> own = app.getDatabase("admin")
                    .runCommand(
                            new Document("currentOp", 1).append("$ownOps", true).append("ns", NS))
                    .getList("inprog", Document.class);
            assertThat(own)
                    .singleElement()
                    .satisfies(op -> assertThat(op.getList("effectiveUsers", Document.class))
                            .singleElement()
                            .satisfies(u -> assertThat(u.getString("user")).isEqualTo("app")));
            // $currentOp without allUsers needs no inprog and lists the user's own operations too.
            List<Document> stage = app.getDatabase("admin")
                    .aggregate(List.of(
                            new Document("$currentOp", new Document()), new Document("$match", new Document("ns", NS))))
                    .into(new ArrayList<>());
            assertThat(stage).hasSize(1);
            assertThatThrownBy(() -> app.getDatabase("admin")
                            .aggregate(List.of(new Document("$currentOp", new Document("allUsers", true))))
                            .into(new ArrayList<>()))
                    .isInstanceOfSatisfying(
                            MongoCommandException.class,
                            e -> assertThat(e.getErrorCode()).isEqualTo(13));
            assertThat(admin.getDatabase("admin")
                            .runCommand(new Document("currentOp", 1).append("ns", NS))
                            .getList("inprog", Document.class))
                    .hasSize(2);
            mine.get(10, TimeUnit.SECONDS);
            theirs.get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void killSessions_killsTheCallersOwnSession_butNotAnotherUsersSessionOfTheSameId() throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet()
                        .user("app", "secret", "readWriteAnyDatabase")
                        .user("admin", "secret", "root")
                        .start();
                MongoClient app = Clients.client(
                        Clients.withUser(cluster.connectionString(), "app", "secret"), b -> b.retryWrites(false));
                MongoClient admin = Clients.client(Clients.withUser(cluster.connectionString(), "admin", "secret"));
                StallHandle stall = cluster.primary().stall(Stall.interruptible(NS, Duration.ofSeconds(30)))) {
            CompletableFuture<?> write = CompletableFuture.runAsync(
                    () -> app.getDatabase("auth").getCollection("held").insertOne(new Document("v", 1)));
            Document op = awaitOps(admin, new Document("currentOp", 1).append("ns", NS), 1)
                    .get(0);
            Object id = op.get("lsid", Document.class).get("id");

            // The admin names only the id: that is the admin's own session of that id, so nothing is killed.
            admin.getDatabase("admin").runCommand(new Document("killSessions", List.of(new Document("id", id))));
            Thread.sleep(100);
            assertThat(cluster.truth().commands("insert"))
                    .singleElement()
                    .satisfies(c -> assertThat(c.running()).isTrue());

            app.getDatabase("admin").runCommand(new Document("killSessions", List.of(new Document("id", id))));
            assertThat(cluster.truth().awaitIdle(c -> c.commandName().equals("insert"), Duration.ofSeconds(5)))
                    .isTrue();
            assertThat(cluster.truth().commands("insert"))
                    .singleElement()
                    .satisfies(c -> assertThat(c.errorCode()).isEqualTo(11601));
            assertThatThrownBy(() -> write.get(10, TimeUnit.SECONDS)).isNotNull();
        }
    }

    @Test
    void mongos_currentOpNeedsInprogEvenWithOwnOps_localOpsDoesNot_andTheUsersKillSessionsReachesTheShard()
            throws Exception {
        try (EmulatedShardedCluster cluster = EmulatedCluster.sharded()
                        .shards(2)
                        .user("app", "secret", "readWriteAnyDatabase")
                        .user("monitor", "secret", "clusterMonitor")
                        .start();
                MongoClient app = Clients.client(
                        Clients.withUser(cluster.connectionString(), "app", "secret"), b -> b.retryWrites(false));
                MongoClient monitor =
                        Clients.client(Clients.withUser(cluster.connectionString(), "monitor", "secret"));
                StallHandle stall = cluster.shard(0).stall(Stall.interruptible(NS, Duration.ofSeconds(30)))) {
            CompletableFuture<?> write = CompletableFuture.runAsync(
                    () -> app.getDatabase("auth").getCollection("held").insertOne(new Document("v", 1)));
            Document op = awaitOps(monitor, new Document("currentOp", 1).append("ns", NS), 1)
                    .get(0);
            assertThat(op.getString("opid")).startsWith("shard00:");

            for (Document command :
                    List.of(new Document("currentOp", 1), new Document("currentOp", 1).append("$ownOps", true))) {
                assertThatThrownBy(() -> app.getDatabase("admin").runCommand(command))
                        .isInstanceOfSatisfying(
                                MongoCommandException.class,
                                e -> assertThat(e.getErrorCode()).isEqualTo(13));
            }
            assertThatThrownBy(() -> app.getDatabase("admin")
                            .aggregate(List.of(new Document("$currentOp", new Document())))
                            .into(new ArrayList<>()))
                    .isInstanceOfSatisfying(
                            MongoCommandException.class,
                            e -> assertThat(e.getErrorCode()).isEqualTo(13));
            List<Document> local = app.getDatabase("admin")
                    .aggregate(List.of(
                            new Document("$currentOp", new Document("localOps", true)),
                            new Document("$match", new Document("ns", NS))))
                    .into(new ArrayList<>());
            assertThat(local).singleElement().satisfies(o -> assertThat(o).doesNotContainKey("shard"));

            app.getDatabase("admin")
                    .runCommand(new Document(
                            "killSessions",
                            List.of(new Document(
                                    "id", op.get("lsid", Document.class).get("id")))));
            assertThat(cluster.truth().awaitIdle(c -> c.commandName().equals("insert"), Duration.ofSeconds(5)))
                    .isTrue();
            assertThat(cluster.shard(0).truth().commands("insert"))
                    .singleElement()
                    .satisfies(c -> assertThat(c.errorCode()).isEqualTo(11601));
            assertThatThrownBy(() -> write.get(10, TimeUnit.SECONDS)).isNotNull();
        }
    }

    private static List<Document> awaitOps(MongoClient client, Document command, int count)
            throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (System.nanoTime() < until) {
            List<Document> ops = client.getDatabase("admin").runCommand(command).getList("inprog", Document.class);
            if (ops.size() >= count) {
                return ops;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("fewer than " + count + " operations for " + command.toJson());
    }
}
