package io.github.mongowriteguard.internal;

import com.mongodb.ClientSessionOptions;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;

/**
 * What the guard's internals need of a client: explicit sessions, and the databases to send commands to. The root
 * package adapts the user's {@code MongoAccess} to it, so that no internal package imports the public entry points.
 * Equal ports stand for the same sessions and databases (the catalog keys its topologies by port). Not API.
 */
public interface ClientPort {
    /** {@return a new explicit session, closed by the caller} */
    ClientSession startSession(ClientSessionOptions options);

    /** {@return the database {@code name}} */
    MongoDatabase getDatabase(String name);

    /** {@return the sessions and databases of a driver client; ports of the same client are equal} */
    static ClientPort of(MongoClient client) {
        record Client(MongoClient client) implements ClientPort {
            @Override
            public ClientSession startSession(ClientSessionOptions options) {
                return client.startSession(options);
            }

            @Override
            public MongoDatabase getDatabase(String name) {
                return client.getDatabase(name);
            }
        }
        return new Client(java.util.Objects.requireNonNull(client, "client"));
    }
}
