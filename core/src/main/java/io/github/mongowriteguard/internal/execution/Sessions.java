package io.github.mongowriteguard.internal.execution;

import java.util.ArrayList;
import java.util.List;

import com.mongodb.ClientSessionOptions;
import com.mongodb.client.ClientSession;

import io.github.mongowriteguard.MongoAccess;

/**
 * The explicit sessions of one guarded call: one at a time; after a copy is left possibly running, the next command
 * gets a fresh session so that it does not wait behind that copy on the server's session check-out.
 */
final class Sessions implements AutoCloseable {
    private final MongoAccess access;
    private final List<ClientSession> all = new ArrayList<>();
    private ClientSession current;

    Sessions(MongoAccess access) {
        this.access = access;
        this.current = start();
    }

    private ClientSession start() {
        ClientSession session = access.startSession(ClientSessionOptions.builder().causallyConsistent(false).build());
        all.add(session);
        return session;
    }

    ClientSession current() {
        return current;
    }

    void replace() {
        current = start();
    }

    @Override
    public void close() {
        all.forEach(ClientSession::close);
    }
}
