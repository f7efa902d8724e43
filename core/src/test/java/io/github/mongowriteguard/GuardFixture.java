package io.github.mongowriteguard;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.bson.BsonDocument;

/** A guarded client on a deployment, with the write commands it sent as a test-side listener saw them. */
final class GuardFixture implements AutoCloseable {
    final WriteGuard guard;
    final MongoClient client;
    final List<BsonDocument> sent = new CopyOnWriteArrayList<>();

    GuardFixture(
            String connectionString,
            WriteGuardSettings settings,
            int socketTimeoutMs,
            Consumer<MongoClientSettings.Builder> customizer) {
        this.guard = WriteGuard.create(settings);
        MongoClientSettings.Builder builder = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(connectionString))
                .applyToClusterSettings(c -> c.serverSelectionTimeout(10, TimeUnit.SECONDS))
                .applyToSocketSettings(s -> s.readTimeout(socketTimeoutMs, TimeUnit.MILLISECONDS))
                .addCommandListener(new CommandListener() {
                    @Override
                    public void commandStarted(CommandStartedEvent event) {
                        if (List.of("insert", "update", "delete").contains(event.getCommandName())) {
                            sent.add(event.getCommand().clone());
                        }
                    }
                });
        customizer.accept(builder);
        this.client = MongoClients.create(guard.configure(builder).build());
    }

    GuardFixture(String connectionString, int socketTimeoutMs) {
        this(connectionString, WriteGuardSettings.defaults(), socketTimeoutMs, b -> {});
    }

    <T> GuardedCollection<T> wrap(com.mongodb.client.MongoCollection<T> collection) {
        return guard.guardCollection(client, collection);
    }

    @Override
    public void close() {
        client.close();
    }

    /**
     * Makes the next {@code command} fail once with ShutdownInProgress (91) and the {@code RetryableWriteError} label,
     * before it runs: a fail point of the deployment, as mongod's {@code failCommand}.
     */
    void failOnceRetryably(String command) {
        client.getDatabase("admin")
                .runCommand(new org.bson.Document("configureFailPoint", "failCommand")
                        .append("mode", new org.bson.Document("times", 1))
                        .append(
                                "data",
                                new org.bson.Document("failCommands", List.of(command))
                                        .append("errorCode", 91)
                                        .append("errorLabels", List.of("RetryableWriteError"))));
    }
}
