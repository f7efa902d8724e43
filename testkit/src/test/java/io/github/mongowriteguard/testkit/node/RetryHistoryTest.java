package io.github.mongowriteguard.testkit.node;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/**
 * A chunk migration's retry history, one session at a time: what the donor sends (the statements of its current
 * transaction number that wrote the chunk, or the dead-end sentinel) and how the recipient's session takes it in (a
 * newer transaction number wins, statements already there stay, the sentinel marks the history incomplete). The
 * end-to-end behaviour through mongos, a migration and the driver's retry is {@code RetryHistoryAcrossMigrationTest}.
 */
class RetryHistoryTest {
    private static final BsonDocument LSID = new BsonDocument("id", new BsonString("session-1"));

    private static BsonDocument outcome(int n) {
        return new BsonDocument("ok", new BsonInt32(1)).append("n", new BsonInt32(n));
    }

    private static BsonDocument target(int id) {
        return new BsonDocument("ns", new BsonString("shop.orders"))
                .append("op", new BsonString("insert"))
                .append("item", new BsonDocument("_id", new BsonInt32(id)));
    }

    private static boolean inChunk(BsonDocument target) {
        return target.getDocument("item").getInt32("_id").getValue() < 10;
    }

    /** A donor's session in txnNumber 7: stmt 0 wrote _id 1 (in the chunk), stmt 1 _id 20 (not), stmt 2 unknown. */
    private static SessionState donorSession() {
        SessionState session = new SessionState("session-1");
        session.lsid = LSID;
        session.txnNumber = 7;
        session.statements.put(0, outcome(1));
        session.statementTargets.put(0, target(1));
        session.statements.put(1, outcome(1));
        session.statementTargets.put(1, target(20));
        session.statements.put(2, outcome(1));
        return session;
    }

    /** A recipient's session already in {@code txnNumber}, with statement {@code stmtId} recorded. */
    private static SessionState recipientIn(long txnNumber, int stmtId) {
        SessionState recipient = new SessionState("session-1");
        recipient.lsid = LSID;
        recipient.txnNumber = txnNumber;
        recipient.statements.put(stmtId, outcome(2));
        return recipient;
    }

    @Test
    void of_sendsOnlyTheStatementsThatWroteTheChunk_asCopies() {
        SessionState session = donorSession();

        RetryHistory sent = RetryHistory.of(session, RetryHistoryTest::inChunk);

        assertThat(sent.sessionId()).isEqualTo("session-1");
        assertThat(sent.lsid()).isEqualTo(LSID);
        assertThat(sent.txnNumber()).isEqualTo(7);
        assertThat(sent.statements()).containsOnlyKeys(0);
        assertThat(sent.incomplete()).isFalse();
        sent.statements().get(0).put("n", new BsonInt32(99));
        assertThat(session.statements.get(0).getInt32("n").getValue()).isEqualTo(1);
    }

    @Test
    void of_sendsNothing_whenNoStatementWroteTheChunk_orTheSessionHasNoLsid() {
        assertThat(RetryHistory.of(donorSession(), target -> false)).isNull();

        SessionState withoutLsid = donorSession();
        withoutLsid.lsid = null;
        assertThat(RetryHistory.of(withoutLsid, RetryHistoryTest::inChunk)).isNull();
    }

    @Test
    void deadEnd_keepsTheSessionAndTxnNumber_withoutAnyStatement() {
        RetryHistory sentinel =
                RetryHistory.of(donorSession(), RetryHistoryTest::inChunk).deadEnd();

        assertThat(sentinel.sessionId()).isEqualTo("session-1");
        assertThat(sentinel.txnNumber()).isEqualTo(7);
        assertThat(sentinel.statements()).isEmpty();
        assertThat(sentinel.incomplete()).isTrue();
    }

    @Test
    void mergeInto_aNewSession_takesTheLsidTxnNumberAndStatements() {
        SessionState recipient = new SessionState("session-1");

        new RetryHistory("session-1", LSID, 7, Map.of(0, outcome(1)), false).mergeInto(recipient);

        assertThat(recipient.lsid).isEqualTo(LSID);
        assertThat(recipient.txnNumber).isEqualTo(7);
        assertThat(recipient.statements).containsOnlyKeys(0);
        assertThat(recipient.incompleteHistory).isFalse();
    }

    @Test
    void mergeInto_aSessionAlreadyInANewerTxnNumber_changesNothing() {
        SessionState recipient = recipientIn(8, 5);

        new RetryHistory("session-1", LSID, 7, Map.of(0, outcome(1)), true).mergeInto(recipient);

        assertThat(recipient.txnNumber).isEqualTo(8);
        assertThat(recipient.statements).containsOnlyKeys(5);
        assertThat(recipient.incompleteHistory).isFalse();
    }

    @Test
    void mergeInto_aNewerTxnNumber_replacesTheOlderStatements_andTheirIncompleteMark() {
        SessionState recipient = recipientIn(6, 5);
        recipient.statementTargets.put(5, target(3));
        recipient.incompleteHistory = true;

        new RetryHistory("session-1", LSID, 7, Map.of(0, outcome(1)), false).mergeInto(recipient);

        assertThat(recipient.txnNumber).isEqualTo(7);
        assertThat(recipient.statements).containsOnlyKeys(0);
        assertThat(recipient.statementTargets).isEmpty();
        assertThat(recipient.incompleteHistory).isFalse();
    }

    @Test
    void mergeInto_theSameTxnNumber_keepsTheStatementsAlreadyThere_andAddsTheOthers() {
        SessionState recipient = recipientIn(7, 0);

        new RetryHistory("session-1", LSID, 7, Map.of(0, outcome(1), 1, outcome(1)), false).mergeInto(recipient);

        assertThat(recipient.statements).containsOnlyKeys(0, 1);
        assertThat(recipient.statements.get(0)).isEqualTo(outcome(2));
    }

    @Test
    void mergeInto_theDeadEndSentinel_marksTheTransactionsHistoryIncomplete_andKeepsItsStatements() {
        SessionState recipient = recipientIn(7, 0);

        new RetryHistory("session-1", LSID, 7, Map.of(), false).deadEnd().mergeInto(recipient);

        assertThat(recipient.incompleteHistory).isTrue();
        assertThat(recipient.statements).containsOnlyKeys(0);
    }
}
