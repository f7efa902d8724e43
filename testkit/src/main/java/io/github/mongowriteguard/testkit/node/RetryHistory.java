package io.github.mongowriteguard.testkit.node;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Predicate;
import org.bson.BsonDocument;

/**
 * One session's retry history of one transaction number as a chunk migration carries it: the executed statements (by
 * stmtId, their recorded results) that wrote documents of the migrated chunk, or none with {@code incomplete} when the
 * donor could not send it whole. After mongodb/mongo {@code src/mongo/db/s/session_catalog_migration_source.cpp}
 * (the donor's statements of the chunk; the dead-end sentinel, {@code kIncompleteHistoryStmtId}, when its oplog no
 * longer holds them), {@code session_catalog_migration_destination.cpp} (the recipient keeps a newer transaction
 * number it already has) and {@code src/mongo/db/transaction/transaction_participant.cpp} (after the sentinel, a retry
 * of a statement the history lacks fails with {@code IncompleteTransactionHistory}, 217, instead of running again).
 */
record RetryHistory(
        String sessionId,
        BsonDocument lsid,
        long txnNumber,
        Map<Integer, BsonDocument> statements,
        boolean incomplete) {

    /**
     * What a donor's session sends: the statements of its current transaction number whose target ({@code {ns, op,
     * item}}) {@code inChunk} accepts. Call with the session catalog's lock held.
     *
     * @return the history, or null when no statement lies in the chunk or the session has no {@code lsid}
     */
    static RetryHistory of(SessionState session, Predicate<BsonDocument> inChunk) {
        Map<Integer, BsonDocument> moved = new HashMap<>();
        session.statements.forEach((stmtId, outcome) -> {
            BsonDocument target = session.statementTargets.get(stmtId);
            if (target != null && inChunk.test(target)) {
                moved.put(stmtId, outcome.clone());
            }
        });
        if (moved.isEmpty() || session.lsid == null) {
            return null;
        }
        return new RetryHistory(session.id, session.lsid, session.txnNumber, moved, false);
    }

    /** {@return the dead-end sentinel of the same session and transaction number: no statements, incomplete} */
    RetryHistory deadEnd() {
        return new RetryHistory(sessionId, lsid, txnNumber, Map.of(), true);
    }

    /**
     * The recipient's side: the statements join {@code session}'s history (a newer transaction number already there
     * wins; a newer one here replaces the session's statements), and an incomplete history marks the transaction. Call
     * with the session catalog's lock held.
     *
     * @param session the recipient's session of the same id
     */
    void mergeInto(SessionState session) {
        if (session.lsid == null) {
            session.lsid = lsid.clone();
        }
        if (txnNumber < session.txnNumber) {
            return;
        }
        if (txnNumber > session.txnNumber) {
            session.txnNumber = txnNumber;
            session.statements.clear();
            session.statementTargets.clear();
            session.incompleteHistory = false;
        }
        statements.forEach((stmtId, outcome) -> session.statements.putIfAbsent(stmtId, outcome.clone()));
        session.incompleteHistory |= incomplete;
    }
}
