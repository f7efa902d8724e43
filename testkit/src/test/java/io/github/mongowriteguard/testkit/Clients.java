package io.github.mongowriteguard.testkit;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.bson.Document;

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

    /**
     * The operations {@code currentOp} lists for {@code filter} once there are at least {@code count}, asked every 10 ms
     * for up to 10 s; an {@link AssertionError} after that.
     */
    public static List<Document> waitForOps(MongoClient client, Document filter, int count)
            throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (System.nanoTime() < until) {
            Document command = new Document("currentOp", 1);
            command.putAll(filter);
            List<Document> ops = client.getDatabase("admin").runCommand(command).getList("inprog", Document.class);
            if (ops.size() >= count) {
                return ops;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("fewer than " + count + " operations matching " + filter.toJson());
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
