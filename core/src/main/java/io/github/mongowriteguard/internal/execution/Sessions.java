package io.github.mongowriteguard.internal.execution;

import com.mongodb.ClientSessionOptions;
import com.mongodb.session.ClientSession;
import io.github.mongowriteguard.copies.StatementIds;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The explicit sessions of one guarded call: one at a time; after a copy is left possibly running, the next command
 * gets a fresh session so that it does not wait behind that copy on the server's session check-out. With the caller's
 * own session, that one session throughout (the call stops anyway when a copy is left running), never closed here.
 */
final class Sessions implements AutoCloseable {
    /** The options of every session the guard starts: immutable, so built once, not per call. */
    private static final ClientSessionOptions OWN =
            ClientSessionOptions.builder().causallyConsistent(false).build();

    private final @Nullable Source access;
    /** The caller's chosen identity every session started here carries, or null for the driver's own. */
    private final @Nullable StatementIds chosen;
    /** The first session the guard started, or null with the caller's session. */
    private @Nullable ClientSession first;
    /** The sessions started after {@link #first} (a copy was left possibly running); null until one is. */
    private @Nullable List<ClientSession> later;

    private ClientSession current;

    /**
     * Where the guard's own sessions come from: the synchronous client's {@code startSession} or the reactive one's
     * (awaited on the guard's thread).
     */
    @FunctionalInterface
    interface Source {
        ClientSession start(ClientSessionOptions options);
    }

    private Sessions(@Nullable Source access, @Nullable ClientSession callers) {
        this(access, callers, null);
    }

    private Sessions(@Nullable Source access, @Nullable ClientSession callers, @Nullable StatementIds chosen) {
        this.access = access;
        this.chosen = chosen;
        this.current = callers != null ? callers : start();
    }

    /** Sessions the guard starts and closes. */
    static Sessions own(Source access) {
        return new Sessions(access, null);
    }

    /**
     * Sessions the guard starts and closes, each seen with the caller's logical session id ({@link ChosenSessionId}):
     * a fresh one after a copy is left running carries the same id, so that on the server it waits behind that copy.
     */
    static Sessions chosen(Source access, StatementIds ids) {
        return new Sessions(access, null, ids);
    }

    /** A session held for a settle: used as it is, never replaced or closed here (the hold closes it). */
    static Sessions held(ClientSession session) {
        return new Sessions(null, session);
    }

    /** The caller's session, outside a transaction: the guard's transaction numbers advance its own. */
    static Sessions callers(ClientSession session) {
        return new Sessions(null, session);
    }

    private ClientSession start() {
        ClientSession session = java.util.Objects.requireNonNull(access).start(OWN);
        if (chosen != null) {
            session = ChosenSessionId.wrap(session, chosen.sessionId(), chosen.txnNumber());
        }
        if (first == null) {
            first = session;
        } else {
            if (later == null) {
                later = new ArrayList<>();
            }
            later.add(session);
        }
        return session;
    }

    ClientSession current() {
        return current;
    }

    /** Whether the guard started the sessions (and may hand one over to the settle hold). */
    boolean own() {
        return access != null;
    }

    /**
     * Hands {@code session} over to the settle hold: later commands go on a fresh session (so that the server keeps
     * this one's statement record), and {@link #close()} no longer closes it. Only for the guard's own sessions.
     */
    void handOver(ClientSession session) {
        if (access == null) {
            return;
        }
        if (current == session) {
            current = start();
        }
        if (first == session) {
            first = null;
        } else if (later != null) {
            later.remove(session);
        }
    }

    void replace() {
        if (access != null) {
            current = start();
        }
    }

    @Override
    public void close() {
        if (first != null) {
            first.close();
        }
        if (later != null) {
            later.forEach(ClientSession::close);
        }
    }
}
