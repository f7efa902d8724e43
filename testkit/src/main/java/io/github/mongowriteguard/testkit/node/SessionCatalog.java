package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.auth.Principal;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The node's sessions and their retry history, as mongod's {@code SessionCatalog} (mongodb/mongo
 * {@code src/mongo/db/session/session_catalog.cpp}: one command at a time checks a session out, a second waits) and
 * {@code TransactionParticipant} keep them ({@code src/mongo/db/transaction/transaction_participant.cpp}: the
 * executed statements of the current {@code txnNumber}, rebuilt on a secondary from the oplog,
 * {@code src/mongo/db/repl/session_update_tracker.cpp}, and carried by a chunk migration,
 * {@code src/mongo/db/s/session_catalog_migration_source.cpp}).
 */
final class SessionCatalog {
    private final Map<String, SessionState> sessions = new ConcurrentHashMap<>();
    private final ReentrantLock lock;
    private final Condition changed;

    SessionCatalog(ReentrantLock lock, Condition changed) {
        this.lock = lock;
        this.changed = changed;
    }

    /** {@return every session the node has seen} */
    Collection<SessionState> all() {
        return sessions.values();
    }

    /** Forgets every session, as a restarted mongod does (the retryable-write records come back from the oplog). */
    void clear() {
        sessions.clear();
    }

    /** The {@code $listLocalSessions} documents: the sessions this node has seen, {@code {_id: {id, uid}, lastUse}}. */
    List<BsonDocument> localSessions() {
        List<BsonDocument> result = new ArrayList<>();
        for (SessionState session : sessions.values()) {
            if (session.lsid != null) {
                result.add(new BsonDocument("_id", session.lsid).append("lastUse", new BsonDateTime(session.lastUse)));
            }
        }
        return result;
    }

    SessionState checkOut(OperationContext operation) {
        String id = sessionId(operation.command().get("lsid"));
        SessionState session = sessions.computeIfAbsent(id, SessionState::new);
        lock.lock();
        try {
            operation.awaitInterruptibly(() -> session.checkedOutBy == 0, Long.MAX_VALUE);
            session.checkedOutBy = operation.opid();
            session.lastUse = System.currentTimeMillis();
            if (session.lsid == null) {
                session.lsid = sessionIdDocument(operation.command().getDocument("lsid"));
                session.uid = sessionUid(operation);
            }
            return session;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw OperationInterruptedException.killed();
        } finally {
            lock.unlock();
        }
    }

    void checkIn(SessionState session) {
        lock.lock();
        try {
            session.checkedOutBy = 0;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** The lsid as mongod stores it: {@code {id, uid}}, uid being the SHA-256 of the (here: no) user name. */
    private static BsonDocument sessionIdDocument(BsonDocument lsid) {
        BsonDocument id = new BsonDocument("id", lsid.get("id"));
        id.put("uid", lsid.containsKey("uid") ? lsid.get("uid") : new org.bson.BsonBinary(NO_USER_DIGEST));
        return id;
    }

    private static final byte[] NO_USER_DIGEST = sha256("");

    private static byte[] sha256(String text) {
        try {
            return java.security.MessageDigest.getInstance("SHA-256")
                    .digest(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static String sessionId(BsonValue lsid) {
        if (lsid == null || !lsid.isDocument() || !lsid.asDocument().containsKey("id")) {
            return null;
        }
        BsonValue id = lsid.asDocument().get("id");
        if (id.isBinary()) {
            return id.asBinary().asUuid().toString();
        }
        return id.toString();
    }

    /** The session's {@code uid}: the client's, else the digest of the operation's user (none: SHA-256 of ""). */
    static byte[] sessionUid(OperationContext operation) {
        BsonValue lsid = operation.command().get("lsid");
        if (lsid != null && lsid.isDocument() && lsid.asDocument().isBinary("uid")) {
            return lsid.asDocument().getBinary("uid").getData();
        }
        return Principal.digestOf(operation.connection().principal());
    }

    /** Forgets every retryable-write record (before they are rebuilt from the oplog); sessions stay known. */
    void clearRetryRecords() {
        for (SessionState session : sessions.values()) {
            synchronized (session) {
                session.txnNumber = -1;
                session.statements.clear();
            }
        }
    }

    /**
     * Applies a retryable-write record from the oplog, as a secondary updates {@code config.transactions} from the
     * oplog entries that carry {@code lsid}, {@code txnNumber} and {@code stmtId}
     * ({@code src/mongo/db/repl/session_update_tracker.cpp}).
     *
     * @param sessionId the session's id, as this node keys its sessions
     * @param lsid      the session's {@code lsid}
     * @param txnNumber the write's transaction number
     * @param stmtId    the statement's id
     * @param outcome   the statement's result, as a retry gets it
     */
    void applyRetryRecord(String sessionId, BsonDocument lsid, long txnNumber, int stmtId, BsonDocument outcome) {
        SessionState session = sessions.computeIfAbsent(sessionId, SessionState::new);
        synchronized (session) {
            if (session.lsid == null) {
                session.lsid = lsid;
            }
            if (txnNumber > session.txnNumber) {
                session.txnNumber = txnNumber;
                session.statements.clear();
            }
            if (txnNumber == session.txnNumber) {
                session.statements.put(stmtId, outcome);
            }
        }
    }

    /**
     * The retry history a migration copies from this donor ({@link RetryHistory#of}): per session, the executed
     * statements of its current transaction number whose write {@code inChunk} accepts ({@code {ns, op, item}}: op
     * {@code insert}, {@code update} or {@code delete}, item the statement's document or update/delete entry).
     *
     * @param inChunk accepts the statement targets that lie in the migrated chunk
     * @return one entry per session with statements to copy
     */
    List<RetryHistory> retryHistory(Predicate<BsonDocument> inChunk) {
        List<RetryHistory> history = new ArrayList<>();
        for (SessionState session : sessions.values()) {
            lock.lock();
            try {
                RetryHistory sent = RetryHistory.of(session, inChunk);
                if (sent != null) {
                    history.add(sent);
                }
            } finally {
                lock.unlock();
            }
        }
        return history;
    }

    /**
     * The recipient's side ({@link RetryHistory#mergeInto}): the statements join the session's history (a newer
     * transaction number already here wins), and an incomplete history marks the transaction so that a retry of a
     * statement it lacks fails with {@code IncompleteTransactionHistory} (217) instead of running again.
     *
     * @param history the retry history the donor sent
     */
    void receiveRetryHistory(List<RetryHistory> history) {
        for (RetryHistory entry : history) {
            SessionState session = sessions.computeIfAbsent(entry.sessionId(), SessionState::new);
            lock.lock();
            try {
                entry.mergeInto(session);
            } finally {
                lock.unlock();
            }
        }
    }
}
