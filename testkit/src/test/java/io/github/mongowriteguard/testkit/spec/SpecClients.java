package io.github.mongowriteguard.testkit.spec;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import java.util.function.UnaryOperator;
import org.bson.BsonDocument;

/**
 * How the runner's client and collection entities are made: the driver's own ({@link #DRIVER}, {@link UnifiedSpecTest}),
 * or a client built through a write guard whose collection entities write through the guard (core's
 * {@code GuardedUnifiedSpecTest}, through testkit's test jar). Everything else of the runner (initial data, fail points,
 * reads, sessions, expectations, outcome) stays the same.
 */
public interface SpecClients {

    /** The driver as it is: the client from the runner's settings, the collection unchanged. */
    SpecClients DRIVER = settings -> {
        MongoClient client = MongoClients.create(settings.build());
        return Opened.of(client, collection -> collection, client::close);
    };

    /**
     * Opens a client entity's clients.
     *
     * @param settings the runner's settings for the entity (URI options, its command listener, timeouts)
     * @return the opened clients, closed with the test's entities
     */
    Opened open(MongoClientSettings.Builder settings);

    /**
     * Why {@code test} of {@code file} cannot run through these clients (it is then skipped with that reason), or null.
     *
     * @param file the spec file's name relative to the spec directory, e.g. {@code retryable-writes/insertOne.json}
     * @param test the test
     * @return the reason, or null to run it
     */
    default String skipReason(String file, BsonDocument test) {
        return null;
    }

    /**
     * Why {@code test}'s {@code expectEvents} are not compared through these clients (results, errors and outcome still
     * are), or null to compare them.
     *
     * @param file the spec file's name relative to the spec directory
     * @param test the test
     * @return the reason, or null
     */
    default String eventsNotCompared(String file, BsonDocument test) {
        return null;
    }

    /**
     * Whether a command these clients send on their own, not for an operation of the test (e.g. a guard's catalog
     * reads), is left out of the observed command events; its succeeded or failed event is left out with it.
     *
     * @param commandName  the command's name
     * @param databaseName its database
     * @param command      the command sent
     * @return true to leave it out of {@code expectEvents}
     */
    default boolean ownCommand(String commandName, String databaseName, BsonDocument command) {
        return false;
    }

    /** The clients of one client entity. */
    interface Opened extends AutoCloseable {

        /** {@return the synchronous client of the entity: reads, fail points, sessions, its command events} */
        MongoClient client();

        /**
         * The collection entity the operations use, from the entity's driver collection (options already applied).
         *
         * @param collection the driver's collection
         * @return the collection whose write methods the operations call
         */
        MongoCollection<BsonDocument> writesThrough(MongoCollection<BsonDocument> collection);

        @Override
        void close();

        /**
         * Opened clients from their parts.
         *
         * @param client        the synchronous client
         * @param writesThrough the collection entity for the driver's collection
         * @param close         closes every client opened
         * @return the opened clients
         */
        static Opened of(
                MongoClient client, UnaryOperator<MongoCollection<BsonDocument>> writesThrough, Runnable close) {
            return new Opened() {
                @Override
                public MongoClient client() {
                    return client;
                }

                @Override
                public MongoCollection<BsonDocument> writesThrough(MongoCollection<BsonDocument> collection) {
                    return writesThrough.apply(collection);
                }

                @Override
                public void close() {
                    close.run();
                }
            };
        }
    }
}
