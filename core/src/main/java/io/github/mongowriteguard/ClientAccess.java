package io.github.mongowriteguard;

import com.mongodb.ClientSessionOptions;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;

/** A driver client's sessions and databases ({@link MongoAccess#of}); it names its client, so the guard can check it. */
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
