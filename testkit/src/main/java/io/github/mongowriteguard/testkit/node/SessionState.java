package io.github.mongowriteguard.testkit.node;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.bson.BsonDocument;

/**
 * mongod's transaction table entry for one logical session ({@code config.transactions}; mongodb/mongo
 * {@code src/mongo/db/transaction/transaction_participant.cpp}): the session's current {@code txnNumber}, the
 * statements that ran under it and their results, and who has it checked out.
 */
final class SessionState {
    final String id;
    volatile BsonDocument lsid;
    /** The digest of the user that first used the session, which killSessions patterns match. */
    volatile byte[] uid;

    volatile long lastUse = System.currentTimeMillis();
    long txnNumber = -1;
    /** Executed statements of the current txnNumber by stmtId, as mongod's oplog entries remember them. */
    final Map<Integer, BsonDocument> statements = new ConcurrentHashMap<>();
    /** What each statement of the current txnNumber wrote ({@code {ns, op, item}}), as its oplog entry says. */
    final Map<Integer, BsonDocument> statementTargets = new ConcurrentHashMap<>();
    /** The history of the current txnNumber is known to be incomplete (a migration's dead-end sentinel). */
    volatile boolean incompleteHistory;

    long checkedOutBy;

    SessionState(String id) {
        this.id = id;
    }
}
