package io.github.mongowriteguard;

import com.mongodb.ClientSessionOptions;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What the guard needs from a client besides the collection: explicit sessions, and the database to send its write
 * commands to. {@link #of(MongoClient)} adapts a client; Spring Data's {@code MongoDatabaseFactory} adapts the same
 * way ({@code getSession}, {@code getMongoDatabase}).
 *
 * <p>Why explicit sessions: the guard chooses the {@code (lsid, txnNumber)} of every write command it sends, so a
 * resend with the same pair is the same server copy, which the server runs at most once.
 *
 * <p>Implemented by applications (e.g. over a framework's database factory; new methods come with defaults).
 */
public interface MongoAccess {
    /**
     * Starts an explicit session; the guard sends every write command of a call in one.
     *
     * @param options the session options (the guard asks for causally consistent sessions off)
     * @return a new session, closed by the guard
     */
    ClientSession startSession(ClientSessionOptions options);

    /**
     * {@return the database the guard sends its write commands to}
     *
     * @param name the database's name
     */
    MongoDatabase getDatabase(String name);

    /**
     * The client this access's sessions and databases come from, so that the guard finds what {@link
     * WriteGuard#configure} read from that client's builder. By default null: the access does not say, and the guard
     * must then have been configured on exactly one builder. Spring Data's database factory names its client this way.
     *
     * @return the client, or null when the access does not say
     */
    default @Nullable MongoClient client() {
        return null;
    }

    /**
     * Adapts a driver client.
     *
     * @param client the client the guard was {@link WriteGuard#configure configured} on
     * @return sessions and databases of {@code client}
     */
    static MongoAccess of(MongoClient client) {
        /* A driver client's sessions and databases; it names its client, so the guard can check it. Equal for the
         * same client, so the guard knows an access of(client) from one of the application's own. */
        record ClientAccess(MongoClient client) implements MongoAccess {
            @Override
            public ClientSession startSession(ClientSessionOptions options) {
                return client.startSession(options);
            }

            @Override
            public MongoDatabase getDatabase(String name) {
                return client.getDatabase(name);
            }
        }
        return new ClientAccess(Objects.requireNonNull(client, "client"));
    }
}
