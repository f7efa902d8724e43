package io.github.mongowriteguard.testkit;

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

/** Real driver clients for tests, with the commands they sent. */
public final class Clients {
    private Clients() {}

    public static MongoClient client(String connectionString) {
        return client(connectionString, builder -> {});
    }

    public static MongoClient client(String connectionString, Consumer<MongoClientSettings.Builder> customizer) {
        MongoClientSettings.Builder builder = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(connectionString))
                .applyToClusterSettings(cluster -> cluster.serverSelectionTimeout(10, TimeUnit.SECONDS));
        customizer.accept(builder);
        return MongoClients.create(builder.build());
    }

    /**
     * {@code connectionString} with a user's credentials, authenticated against {@code admin}, where the testkit keeps
     * its users.
     */
    public static String withUser(String connectionString, String user, String password) {
        String withUser = connectionString.replace("mongodb://", "mongodb://" + user + ":" + password + "@");
        return withUser + (withUser.contains("?") ? "&" : "?") + "authSource=admin";
    }

    /** Records the commands a client sent (handshakes and heartbeats are not command events). */
    public static final class Sent implements CommandListener {
        private final List<CommandStartedEvent> started = new CopyOnWriteArrayList<>();

        @Override
        public void commandStarted(CommandStartedEvent event) {
            started.add(event);
        }

        public List<BsonDocument> commands(String name) {
            return started.stream()
                    .filter(e -> e.getCommandName().equals(name))
                    .map(CommandStartedEvent::getCommand)
                    .toList();
        }
    }
}
