package io.github.mongowriteguard.security;

import static org.assertj.core.api.Assertions.catchThrowable;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import io.github.mongowriteguard.GuardedClient;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.TestDeployment;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.bson.Document;

/**
 * One deployment, one client, and the same collection name in two databases: {@code driver} written by the raw driver,
 * {@code guard} through the guard; every write command either sent is recorded, so a test can say "nothing was sent".
 */
final class SideBySide implements AutoCloseable {
    static final List<String> WRITE_COMMANDS = List.of("insert", "update", "delete", "findAndModify", "bulkWrite");

    /** The deployment: a real one with {@code -Dmongo.uri}, or an emulated replica set. */
    final AutoCloseable deployment;

    final WriteGuard guard;
    final MongoClient client;
    final List<String> sentWrites = new CopyOnWriteArrayList<>();
    final MongoCollection<Document> driver;
    final GuardedCollection<Document> guarded;

    SideBySide(String collection) {
        this(collection, 10);
    }

    /** With a socket timeout long enough that load on the machine cannot make the driver resend a large bulk. */
    SideBySide(String collection, int socketTimeoutSeconds) {
        this(TestDeployment.replicaSet(), collection, socketTimeoutSeconds);
    }

    /** On an emulated replica set of {@code version} (client-level {@code bulkWrite} needs 8.0). */
    SideBySide(String collection, ServerVersion version) {
        this(EmulatedCluster.replicaSet().serverVersion(version).start(), collection, 10);
    }

    private SideBySide(AutoCloseable deployment, String collection, int socketTimeoutSeconds) {
        this.deployment = deployment;
        String connectionString = deployment instanceof TestDeployment test
                ? test.connectionString()
                : ((EmulatedReplicaSet) deployment).connectionString();
        this.guard = WriteGuard.create(WriteGuardSettings.defaults());
        this.client = MongoClients.create(guard.configure(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(connectionString))
                        .applyToSocketSettings(s -> s.readTimeout(socketTimeoutSeconds, TimeUnit.SECONDS))
                        .addCommandListener(new CommandListener() {
                            @Override
                            public void commandStarted(CommandStartedEvent event) {
                                if (WRITE_COMMANDS.contains(event.getCommandName())) {
                                    sentWrites.add(event.getDatabaseName() + "." + event.getCommandName());
                                }
                            }
                        }))
                .build());
        this.driver = client.getDatabase("driver").getCollection(collection);
        this.guarded = guard.guardCollection(client, client.getDatabase("guard").getCollection(collection));
        driver.drop();
        guarded.unwrap().drop();
    }

    GuardedClient guardedClient() {
        return guard.guardClient(client);
    }

    /** What {@code call} threw, or null. */
    static Throwable thrown(Runnable call) {
        return catchThrowable(call::run);
    }

    @Override
    public void close() {
        client.close();
        try {
            deployment.close();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
