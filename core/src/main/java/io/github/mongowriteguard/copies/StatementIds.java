package io.github.mongowriteguard.copies;

import java.util.Arrays;
import java.util.Objects;
import java.util.UUID;

/**
 * The server identity a caller chooses for the writes of one guarded bulk
 * ({@code GuardedCollection.execute(models, options, statementIds)}): the logical session id ({@code lsid.id}), one
 * transaction number and, per write, its statement id ({@code stmtIds}). A write sent again with the same identity,
 * by this process or by another one (another {@code MongoClient}, a new owner of the work after a crash), is the same
 * server copy: the server checks the session out one command at a time, answers a statement that already ran under
 * that {@code (lsid, txnNumber, stmtId)} from its record, and runs one that did not (mongodb/mongo
 * {@code src/mongo/db/transaction/transaction_participant.cpp} {@code checkStatementExecuted},
 * {@code src/mongo/db/ops/write_ops_exec.cpp}). The same transaction number may be used by several calls with new
 * statement ids ({@code TransactionParticipant::beginOrContinue}: a retryable write continues at the active number).
 *
 * <p>What the server cannot tell is UNKNOWN, never a blind rewrite: a transaction number lower than one the session
 * already ran ({@code TransactionTooOld}, 225) and a history no longer in the oplog ({@code
 * IncompleteTransactionHistory}, 217). The server keeps the statement records as long as the session
 * ({@code localLogicalSessionTimeoutMinutes}, 30 by default, from its last use) and its oplog window.
 *
 * <p>The server matches a resend to its record by these ids alone, never by the statement's contents: a write resent
 * under an id that already ran is answered with that run's result even when it differs (an insert given another
 * generated {@code _id} is answered as applied, and the document is the first one's, while the outcome's
 * {@code assignedId} names the id given this time). Give an id to one write only, keep the mapping from ids to writes
 * stable across processes, and give inserts their {@code _id}s from the work itself.
 *
 * <p>Immutable and validated: ids are not negative and not repeated.
 *
 * <pre>{@code
 * StatementIds ids = StatementIds.of(UUID.nameUUIDFromBytes(key), offset >>> 16, stmtIdsOfEachWrite);
 * WriteOutcome<Document> outcome = guarded.execute(models, new BulkWriteOptions(), ids);
 * }</pre>
 */
public final class StatementIds {
    private final UUID sessionId;
    private final long txnNumber;
    private final int[] stmtIds;

    private StatementIds(UUID sessionId, long txnNumber, int[] stmtIds) {
        this.sessionId = sessionId;
        this.txnNumber = txnNumber;
        this.stmtIds = stmtIds;
    }

    /**
     * The identity of a bulk's writes.
     *
     * @param sessionId the logical session id every send carries ({@code lsid: {id: sessionId}})
     * @param txnNumber the transaction number of every write, 0 or more
     * @param stmtIds   the statement id of each write, in the bulk's order: 0 or more, no two alike
     * @return the identity
     * @throws IllegalArgumentException for a negative or repeated id, or no statement id
     * @throws NullPointerException     for a null session id or array
     */
    public static StatementIds of(UUID sessionId, long txnNumber, int... stmtIds) {
        Objects.requireNonNull(sessionId, "sessionId");
        Objects.requireNonNull(stmtIds, "stmtIds");
        if (txnNumber < 0) {
            throw new IllegalArgumentException(
                    "txnNumber " + txnNumber + " is negative: the server's transaction numbers start at 0");
        }
        if (stmtIds.length == 0) {
            throw new IllegalArgumentException("no statement id: give one per write of the bulk");
        }
        int[] copy = stmtIds.clone();
        int[] sorted = copy.clone();
        Arrays.sort(sorted);
        if (sorted[0] < 0) {
            throw new IllegalArgumentException("statement id " + sorted[0] + " is negative: give ids of 0 or more");
        }
        for (int i = 1; i < sorted.length; i++) {
            if (sorted[i] == sorted[i - 1]) {
                throw new IllegalArgumentException("statement id " + sorted[i] + " is given twice for txnNumber "
                        + txnNumber + ": the server would answer the second write with the first one's record and"
                        + " never run it; give each write its own id");
            }
        }
        return new StatementIds(sessionId, txnNumber, copy);
    }

    /** {@return the logical session id} */
    public UUID sessionId() {
        return sessionId;
    }

    /** {@return the transaction number of every write} */
    public long txnNumber() {
        return txnNumber;
    }

    /** {@return the number of statement ids (the number of writes they identify)} */
    public int size() {
        return stmtIds.length;
    }

    /**
     * The statement id of one write.
     *
     * @param index the write's index in the bulk
     * @return its statement id
     */
    public int stmtId(int index) {
        return stmtIds[index];
    }

    @Override
    public String toString() {
        return "StatementIds[session " + sessionId + ", txnNumber " + txnNumber + ", " + stmtIds.length + " ids]";
    }
}
