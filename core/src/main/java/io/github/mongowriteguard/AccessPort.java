package io.github.mongowriteguard;

import com.mongodb.ClientSessionOptions;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoDatabase;
import io.github.mongowriteguard.internal.ClientPort;

/**
 * A user's {@link MongoAccess} as the internals see it; equal when the accesses are equal, so the catalog finds the
 * topology it learned through an equal access.
 */
record AccessPort(MongoAccess access) implements ClientPort {
    @Override
    public ClientSession startSession(ClientSessionOptions options) {
        return access.startSession(options);
    }

    @Override
    public MongoDatabase getDatabase(String name) {
        return access.getDatabase(name);
    }
}
