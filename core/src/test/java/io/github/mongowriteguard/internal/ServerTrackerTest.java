package io.github.mongowriteguard.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.ServerAddress;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.connection.ClusterId;
import com.mongodb.connection.ConnectionId;
import com.mongodb.connection.ServerConnectionState;
import com.mongodb.connection.ServerDescription;
import com.mongodb.connection.ServerId;
import com.mongodb.connection.ServerType;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.event.ConnectionCheckedOutEvent;
import com.mongodb.event.ConnectionPoolListener;
import com.mongodb.event.ServerClosedEvent;
import com.mongodb.event.ServerDescriptionChangedEvent;
import com.mongodb.event.ServerListener;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The guard learns the server of each send and the servers' wire version from pool and server events: no command
 * listener of its own, the application's listeners kept, the same servers and comments as command events gave.
 */
class ServerTrackerTest {

    @Test
    void configure_addsPoolAndServerListeners_neverACommandListener_andKeepsTheApplicationsOwn() {
        WriteGuard guard = WriteGuard.create(WriteGuardSettings.defaults());
        List<String> commands = new CopyOnWriteArrayList<>();
        List<ConnectionCheckedOutEvent> checkOuts = new CopyOnWriteArrayList<>();
        List<ServerDescriptionChangedEvent> descriptions = new CopyOnWriteArrayList<>();
        CommandListener ownCommands = new CommandListener() {
            @Override
            public void commandStarted(CommandStartedEvent event) {
                commands.add(event.getCommandName());
            }
        };
        ConnectionPoolListener ownPool = new ConnectionPoolListener() {
            @Override
            public void connectionCheckedOut(ConnectionCheckedOutEvent event) {
                checkOuts.add(event);
            }
        };
        ServerListener ownServers = new ServerListener() {
            @Override
            public void serverDescriptionChanged(ServerDescriptionChangedEvent event) {
                descriptions.add(event);
            }
        };
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start()) {
            MongoClientSettings.Builder builder = MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(cluster.connectionString()))
                    .addCommandListener(ownCommands)
                    .applyToConnectionPoolSettings(pool -> pool.addConnectionPoolListener(ownPool))
                    .applyToServerSettings(server -> server.addServerListener(ownServers));
            guard.configure(builder);
            guard.configure(builder); // configured again: still one of each

            MongoClientSettings settings = builder.build();
            assertThat(settings.getCommandListeners()).containsExactly(ownCommands);
            assertThat(settings.getConnectionPoolSettings().getConnectionPoolListeners())
                    .hasSize(2)
                    .first()
                    .isSameAs(ownPool);
            assertThat(settings.getConnectionPoolSettings().getConnectionPoolListeners())
                    .last()
                    .isInstanceOf(ServerTracker.class);
            assertThat(settings.getServerSettings().getServerListeners())
                    .hasSize(2)
                    .first()
                    .isSameAs(ownServers);

            try (MongoClient client = MongoClients.create(settings)) {
                GuardedCollection<Document> guarded =
                        guard.guardCollection(client, client.getDatabase("db").getCollection("c"));
                WriteOutcome<Document> outcome =
                        guarded.execute(List.of(new InsertOneModel<>(new Document("_id", 1))), new BulkWriteOptions());

                assertThat(commands).contains("insert");
                assertThat(checkOuts).isNotEmpty();
                assertThat(descriptions).isNotEmpty();
                assertThat(outcome.serverAddress())
                        .isEqualTo(checkOuts
                                .get(checkOuts.size() - 1)
                                .getConnectionId()
                                .getServerId()
                                .getAddress());
            }
        }
    }

    /**
     * mongod 4.4 added {@code comment} to write commands; 4.2 refuses it as an unknown field. The guard's comment
     * follows the wire version of the server the last command went to: none before the first command.
     */
    @ParameterizedTest
    @EnumSource(
            value = ServerVersion.class,
            names = {"V4_2", "V4_4", "V8_0"})
    void theGuardsComment_followsTheWireVersionOfTheLastCommandsServer(ServerVersion version) throws Exception {
        try (EmulatedReplicaSet cluster =
                        EmulatedCluster.replicaSet().serverVersion(version).start();
                Fixture fixture = new Fixture(cluster.connectionString())) {
            // server listeners run in order on the driver's event thread: once this one, added after the guard's,
            // saw the primary, so did the guard's
            assertThat(fixture.primarySeen.await(10, TimeUnit.SECONDS)).isTrue();
            GuardedCollection<Document> guarded = fixture.guarded("comments");

            for (int id = 1; id <= 2; id++) {
                WriteOutcome<Document> outcome =
                        guarded.execute(List.of(new InsertOneModel<>(new Document("_id", id))), new BulkWriteOptions());
                assertThat(outcome.outcome(0).status()).isEqualTo(WriteStatus.APPLIED);
            }

            assertThat(fixture.inserts).hasSize(2);
            assertThat(fixture.inserts.get(0)).doesNotContainKey("comment");
            if (version.wireVersion() >= 9) {
                assertThat(fixture.inserts.get(1).get("comment")).isInstanceOf(BsonString.class);
            } else {
                assertThat(fixture.inserts.get(1)).doesNotContainKey("comment");
            }
        }
    }

    @Test
    void eachSend_recordsTheMongosItWentTo_onEveryThread() throws Exception {
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(1).mongos(3).start();
                Fixture fixture = new Fixture(cluster.connectionString())) {
            GuardedCollection<Document> guarded = fixture.guarded("spread");
            ExecutorService threads = Executors.newFixedThreadPool(4);
            try {
                List<Future<List<ServerAddress[]>>> perThread = new ArrayList<>();
                for (int t = 0; t < 4; t++) {
                    int base = t * 1000;
                    perThread.add(threads.submit(() -> {
                        List<ServerAddress[]> pairs = new ArrayList<>();
                        for (int i = 0; i < 15; i++) {
                            WriteOutcome<Document> outcome = guarded.execute(
                                    List.of(new InsertOneModel<>(new Document("_id", base + i))),
                                    new BulkWriteOptions());
                            pairs.add(new ServerAddress[] {outcome.serverAddress(), fixture.lastInsertOfThisThread.get()
                            });
                        }
                        return pairs;
                    }));
                }
                Set<ServerAddress> seen = ConcurrentHashMap.newKeySet();
                for (Future<List<ServerAddress[]>> future : perThread) {
                    for (ServerAddress[] pair : future.get(60, TimeUnit.SECONDS)) {
                        assertThat(pair[0]).isNotNull().isEqualTo(pair[1]);
                        seen.add(pair[0]);
                    }
                }
                // the driver picks a mongos at random among those within its latency window: the sends spread
                assertThat(seen).hasSizeGreaterThan(1);
            } finally {
                threads.shutdownNow();
            }
        }
    }

    @Test
    void wireVersion_isTheMonitorsVersionOfTheServerLastCheckedOut_andALoadBalancerCounts50() {
        ServerTracker tracker = new ServerTracker();
        ClusterId cluster = new ClusterId();
        ServerAddress old = new ServerAddress("old", 27017);
        ServerAddress current = new ServerAddress("new", 27017);
        tracker.serverDescriptionChanged(changed(cluster, connected(current, ServerType.SHARD_ROUTER, 21)));
        tracker.serverDescriptionChanged(changed(cluster, connected(old, ServerType.SHARD_ROUTER, 8)));
        assertThat(tracker.maxWireVersion()).as("before the first command").isEqualTo(-1);
        assertThat(tracker.serverOfLastSendOnThisThread()).isNull();

        tracker.connectionCheckedOut(checkedOut(cluster, current));
        assertThat(tracker.maxWireVersion()).isEqualTo(21);
        assertThat(tracker.serverOfLastSendOnThisThread()).isEqualTo(current);
        tracker.connectionCheckedOut(checkedOut(cluster, old));
        assertThat(tracker.maxWireVersion()).isEqualTo(8);
        assertThat(tracker.serverOfLastSendOnThisThread()).isEqualTo(old);

        // unreachable for a while: it keeps its version
        tracker.serverDescriptionChanged(changed(
                cluster,
                ServerDescription.builder()
                        .address(current)
                        .state(ServerConnectionState.CONNECTING)
                        .build()));
        tracker.connectionCheckedOut(checkedOut(cluster, current));
        assertThat(tracker.maxWireVersion()).isEqualTo(21);
        // closed, so unknown: the last known version stays
        tracker.serverClosed(new ServerClosedEvent(new ServerId(cluster, old)));
        tracker.connectionCheckedOut(checkedOut(cluster, old));
        assertThat(tracker.maxWireVersion()).isEqualTo(21);

        ServerTracker loadBalanced = new ServerTracker();
        loadBalanced.serverDescriptionChanged(changed(
                cluster,
                ServerDescription.builder()
                        .ok(true)
                        .state(ServerConnectionState.CONNECTED)
                        .type(ServerType.LOAD_BALANCER)
                        .address(current)
                        .build()));
        loadBalanced.connectionCheckedOut(checkedOut(cluster, current));
        assertThat(loadBalanced.maxWireVersion()).isEqualTo(ServerTracker.LOAD_BALANCED_WIRE_VERSION);
    }

    private static ConnectionCheckedOutEvent checkedOut(ClusterId cluster, ServerAddress address) {
        return new ConnectionCheckedOutEvent(new ConnectionId(new ServerId(cluster, address)), 1, 0);
    }

    private static ServerDescription connected(ServerAddress address, ServerType type, int wireVersion) {
        return ServerDescription.builder()
                .ok(true)
                .state(ServerConnectionState.CONNECTED)
                .type(type)
                .address(address)
                .maxWireVersion(wireVersion)
                .build();
    }

    private static ServerDescriptionChangedEvent changed(ClusterId cluster, ServerDescription description) {
        return new ServerDescriptionChangedEvent(
                new ServerId(cluster, description.getAddress()),
                description,
                ServerDescription.builder()
                        .address(description.getAddress())
                        .state(ServerConnectionState.CONNECTING)
                        .build());
    }

    /** A guarded client with a test-side command listener: the inserts sent and each thread's last insert's server. */
    private static final class Fixture implements AutoCloseable {
        final WriteGuard guard = WriteGuard.create(WriteGuardSettings.defaults());
        final List<BsonDocument> inserts = new CopyOnWriteArrayList<>();
        final ThreadLocal<ServerAddress> lastInsertOfThisThread = new ThreadLocal<>();
        final CountDownLatch primarySeen = new CountDownLatch(1);
        final MongoClient client;

        Fixture(String connectionString) {
            MongoClientSettings.Builder builder = MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(connectionString))
                    .applyToClusterSettings(c -> c.localThreshold(1, TimeUnit.HOURS))
                    .addCommandListener(new CommandListener() {
                        @Override
                        public void commandStarted(CommandStartedEvent event) {
                            if (event.getCommandName().equals("insert")) {
                                inserts.add(event.getCommand().clone());
                                lastInsertOfThisThread.set(
                                        event.getConnectionDescription().getServerAddress());
                            }
                        }
                    });
            guard.configure(builder)
                    .applyToServerSettings(server -> server.addServerListener(new ServerListener() {
                        @Override
                        public void serverDescriptionChanged(ServerDescriptionChangedEvent event) {
                            if (event.getNewDescription().isPrimary()) {
                                primarySeen.countDown();
                            }
                        }
                    }));
            client = MongoClients.create(builder.build());
        }

        GuardedCollection<Document> guarded(String collection) {
            return guard.guardCollection(client, client.getDatabase("db").getCollection(collection));
        }

        @Override
        public void close() {
            client.close();
        }
    }
}
