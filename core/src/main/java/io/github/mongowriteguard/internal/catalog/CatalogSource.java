package io.github.mongowriteguard.internal.catalog;

import com.mongodb.ReadPreference;
import com.mongodb.client.MongoCursor;
import io.github.mongowriteguard.internal.ClientPort;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;

/**
 * Where {@link CatalogReads} sends its commands: the synchronous driver ({@link #of(ClientPort)}) or the reactive one
 * (awaited on the guard's thread). Every command goes to the primary. Not API.
 */
public interface CatalogSource {
    /** {@return the client the topology is learned and cached for (weakly)} */
    Object client();

    /**
     * Runs {@code command} on {@code database} of the primary; throws what the driver throws.
     *
     * @param database the database
     * @param command  the command, with its {@code maxTimeMS}
     * @return the reply
     */
    BsonDocument runCommand(String database, BsonDocument command);

    /**
     * The documents of a {@code find} on the primary, read to the end (batches of 1,000).
     *
     * @param database   the database
     * @param collection the collection
     * @param filter     the filter
     * @param sort       the sort
     * @param projection the projection
     * @param limit      the most documents read
     * @param maxTimeMs  the server deadline of each batch
     * @return the documents in order
     */
    List<BsonDocument> find(
            String database,
            String collection,
            BsonDocument filter,
            BsonDocument sort,
            BsonDocument projection,
            int limit,
            long maxTimeMs);

    /**
     * The synchronous driver's, through {@code access}.
     *
     * @param access the sessions and databases of a synchronous client
     * @return its catalog source, cached by {@code access}
     */
    static CatalogSource of(ClientPort access) {
        return new CatalogSource() {
            @Override
            public Object client() {
                return access;
            }

            @Override
            public BsonDocument runCommand(String database, BsonDocument command) {
                return access.getDatabase(database).runCommand(command, ReadPreference.primary(), BsonDocument.class);
            }

            @Override
            public List<BsonDocument> find(
                    String database,
                    String collection,
                    BsonDocument filter,
                    BsonDocument sort,
                    BsonDocument projection,
                    int limit,
                    long maxTimeMs) {
                List<BsonDocument> found = new ArrayList<>();
                try (MongoCursor<BsonDocument> cursor = access.getDatabase(database)
                        .getCollection(collection, BsonDocument.class)
                        .withReadPreference(ReadPreference.primary())
                        .find(filter)
                        .sort(sort)
                        .projection(projection)
                        .batchSize(1_000)
                        .limit(limit)
                        .maxTime(maxTimeMs, TimeUnit.MILLISECONDS)
                        .iterator()) {
                    while (cursor.hasNext()) {
                        found.add(cursor.next());
                    }
                }
                return found;
            }
        };
    }
}
