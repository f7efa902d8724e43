package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** Which clients a guard wraps: those built from a builder given to its configure, each with what was read there. */
class WriteGuardClientsTest {

    private static MongoClientSettings.Builder settings(EmulatedReplicaSet cluster, int socketTimeoutMs) {
        return MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(cluster.connectionString()))
                .applyToSocketSettings(s -> s.readTimeout(socketTimeoutMs, TimeUnit.MILLISECONDS));
    }

    /** An access of the application's own (not {@code MongoAccess.of}), naming its client or not. */
    private static MongoAccess accessOf(MongoClient client, boolean namesItsClient) {
        return new MongoAccess() {
            @Override
            public com.mongodb.client.ClientSession startSession(com.mongodb.ClientSessionOptions options) {
                return client.startSession(options);
            }

            @Override
            public com.mongodb.client.MongoDatabase getDatabase(String name) {
                return client.getDatabase(name);
            }

            @Override
            public @org.jspecify.annotations.Nullable MongoClient client() {
                return namesItsClient ? client : null;
            }
        };
    }

    @Test
    void aClientNotConfiguredByThisGuard_isRefusedWithTheFix() {
        WriteGuard guard = WriteGuard.create();
        WriteGuard other = WriteGuard.create();
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient configured = MongoClients.create(
                        guard.configure(settings(cluster, 3_000)).build());
                MongoClient plain = MongoClients.create(settings(cluster, 3_000).build());
                MongoClient others = MongoClients.create(
                        other.configure(settings(cluster, 3_000)).build())) {
            assertThat(guard.guardCollection(
                            configured, configured.getDatabase("g").getCollection("c")))
                    .isNotNull();
            for (MongoClient client : new MongoClient[] {plain, others}) {
                assertThatThrownBy(() -> guard.guardCollection(
                                client, client.getDatabase("g").getCollection("c")))
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining(
                                "not built from a MongoClientSettings.Builder given to this guard's configure")
                        .hasMessageContaining("guard.configure(builder)");
            }
        }
    }

    @Test
    void twoConfiguredClients_eachKeepTheirOwnSocketTimeout_andReadingTheBuilderLaterChangesNothing() {
        WriteGuard guard = WriteGuard.create();
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start()) {
            MongoClientSettings.Builder slowBuilder = guard.configure(settings(cluster, 3_000));
            try (MongoClient slow = MongoClients.create(slowBuilder.build());
                    MongoClient fast = MongoClients.create(
                            guard.configure(settings(cluster, 1_500)).build())) {
                slowBuilder.applyToSocketSettings(
                        s -> s.readTimeout(600, TimeUnit.MILLISECONDS)); // after configure: not seen
                guard.guardCollection(slow, slow.getDatabase("g").getCollection("slow"))
                        .insertOne(new Document("v", 1));
                guard.guardCollection(fast, fast.getDatabase("g").getCollection("fast"))
                        .insertOne(new Document("v", 2));

                assertThat(cluster.truth().commands("insert"))
                        .extracting(c -> c.maxTimeMs())
                        .containsExactly(2_000L, 1_000L);
            }
        }
    }

    @Test
    void anAccessThatDoesNotNameItsClient_isRefusedWhenTheGuardWasConfiguredOnSeveral() {
        WriteGuard guard = WriteGuard.create();
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient first = MongoClients.create(
                        guard.configure(settings(cluster, 3_000)).build());
                MongoClient second = MongoClients.create(
                        guard.configure(settings(cluster, 3_000)).build())) {
            MongoAccess access = accessOf(first, false);
            assertThatThrownBy(() ->
                            guard.guardCollection(access, first.getDatabase("g").getCollection("c")))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("configured on 2 client settings builders")
                    .hasMessageContaining("use one WriteGuard per client");
            assertThat(guard.guardCollection(second, second.getDatabase("g").getCollection("c")))
                    .isNotNull();
        }
    }

    @Test
    void anAccessThatNamesItsClient_writesWithThatClientsDeadline_whenTheGuardWasConfiguredOnSeveral() {
        WriteGuard guard = WriteGuard.create();
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient first = MongoClients.create(
                        guard.configure(settings(cluster, 3_000)).build());
                MongoClient second = MongoClients.create(
                        guard.configure(settings(cluster, 1_500)).build())) {
            MongoAccess access = accessOf(second, true);

            guard.guardCollection(access, second.getDatabase("g").getCollection("c"))
                    .insertOne(new Document("v", 1));

            assertThat(cluster.truth().commands("insert"))
                    .extracting(c -> c.maxTimeMs())
                    .containsExactly(1_000L);
        }
    }
}
