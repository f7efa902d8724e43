package io.github.mongowriteguard.internal.catalog;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.event.CommandSucceededEvent;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.bson.BsonDocument;

/**
 * A client with a test-side command listener that counts what it asked of the catalog: the commands by name and
 * collection, and the documents each reply carried ({@code cursor.firstBatch} / {@code nextBatch}), as the driver saw
 * them on the wire.
 */
final class ConfigReads implements AutoCloseable {
    /** One command: its name, its collection (or database for a command on none), documents it brought back. */
    record Read(String command, String target, int documents) {}

    final MongoClient client;
    final List<Read> reads = new CopyOnWriteArrayList<>();
    private final Map<Integer, String> targets = new ConcurrentHashMap<>();

    ConfigReads(String connectionString) {
        this.client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(connectionString))
                .addCommandListener(new CommandListener() {
                    @Override
                    public void commandStarted(CommandStartedEvent event) {
                        BsonDocument command = event.getCommand();
                        String name = event.getCommandName();
                        String target = event.getDatabaseName();
                        if (name.equals("find") || name.equals("getMore")) {
                            target += "."
                                    + command.get(name.equals("find") ? "find" : "collection")
                                            .asString()
                                            .getValue();
                        }
                        targets.put(event.getRequestId(), name + " " + target);
                    }

                    @Override
                    public void commandSucceeded(CommandSucceededEvent event) {
                        String started = targets.remove(event.getRequestId());
                        if (started == null) {
                            return;
                        }
                        BsonDocument cursor = event.getResponse().getDocument("cursor", new BsonDocument());
                        int documents = cursor.containsKey("firstBatch")
                                ? cursor.getArray("firstBatch").size()
                                : cursor.containsKey("nextBatch")
                                        ? cursor.getArray("nextBatch").size()
                                        : 0;
                        String[] parts = started.split(" ", 2);
                        reads.add(new Read(parts[0], parts[1], documents));
                    }
                })
                .build());
    }

    /** The commands sent to {@code target} ({@code config.chunks}, {@code admin} ...) named {@code command}. */
    long commands(String command, String target) {
        return reads.stream()
                .filter(r -> r.command().equals(command) && r.target().equals(target))
                .count();
    }

    /** The documents that {@code find} and {@code getMore} brought back from {@code target}. */
    long documents(String target) {
        return reads.stream()
                .filter(r -> r.target().equals(target))
                .mapToLong(Read::documents)
                .sum();
    }

    void clear() {
        reads.clear();
    }

    @Override
    public void close() {
        client.close();
    }
}
