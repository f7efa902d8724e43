package io.github.mongowriteguard.internal.execution;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.ServerAddress;
import java.util.List;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** One test per row of the table of what a server error proves (the table in {@link RefusalProof} and the README). */
class RefusalProofTest {

    private static MongoCommandException error(int code, String... labels) {
        BsonDocument reply = BsonDocument.parse("{ok: 0, code: " + code + ", errmsg: 'e'}");
        if (labels.length > 0) {
            reply.put(
                    "errorLabels",
                    new org.bson.BsonArray(List.of(labels).stream()
                            .map(org.bson.BsonString::new)
                            .toList()));
        }
        return new MongoCommandException(reply, new ServerAddress());
    }

    @ParameterizedTest(name = "{0}: one single-document statement {1}, several or multi-document {2}")
    @CsvSource({
        // not primary, checked before the command runs
        "10107, true, true",
        "13435, true, true",
        "13436, true, true",
        // routing checks before the statement writes
        "13388, true, true",
        // interruptions: the batch fails after what ran before the interrupt point
        "11602, true, false",
        "11600, true, false",
        "11601, true, false",
        "50, true, false",
        "262, true, false",
        // may follow a write: a stepdown or shutdown while it waits for its write concern
        "189, false, false",
        "91, false, false",
        // mongos lost the shard's answer
        "6, false, false",
        "89, false, false",
        // validation, parsing, authorization: before the statements
        "2, true, true",
        "121, true, true",
        "13, true, true"
    })
    void perCode(int code, boolean single, boolean several) {
        assertThat(RefusalProof.provesNothingApplied(error(code), true, false)).isEqualTo(single);
        assertThat(RefusalProof.provesNothingApplied(error(code), false, false)).isEqualTo(several);
    }

    /**
     * Through mongos a {@code MaxTimeMSExpired} is the router's own deadline for a shard's child batch
     * ({@code src/mongo/s/async_requests_sender.cpp}, {@code src/mongo/s/write_ops/batch_write_exec.cpp}): the shard
     * may still apply it, so it proves nothing even for one single-document statement. Other codes keep their rule.
     */
    @Test
    void maxTimeMSExpired_fromMongos_provesNothing_evenForOneSingleDocumentStatement() {
        assertThat(RefusalProof.provesNothingApplied(error(50), true, true)).isFalse();
        assertThat(RefusalProof.provesNothingApplied(error(50), true, false)).isTrue();
        assertThat(RefusalProof.provesNothingApplied(error(13388), true, true)).isTrue();
        assertThat(RefusalProof.provesNothingApplied(error(121), true, true)).isTrue();
    }

    /**
     * A kill of mongos' operation ({@code killOp}, or {@code killSessions}, which kills mongos' own operations of the
     * sessions first, {@code src/mongo/s/kill_sessions_remote.cpp}) is the same interrupt of its wait: every
     * outstanding child batch gets {@code Interrupted} (11601) while the shard may still apply it
     * ({@code src/mongo/s/async_requests_sender.cpp}). On a replica set it keeps the single-statement rule.
     */
    @Test
    void interrupted_fromMongos_provesNothing_evenForOneSingleDocumentStatement() {
        assertThat(RefusalProof.provesNothingApplied(error(11601), true, true)).isFalse();
        assertThat(RefusalProof.provesNothingApplied(error(11601), true, false)).isTrue();
        assertThat(RefusalProof.provesNothingApplied(11601, false, false, true, true))
                .isFalse();
        assertThat(RefusalProof.provesNothingApplied(error(121), true, true)).isTrue();
    }

    @Test
    void noWritesPerformed_provesItForAnyCode() {
        assertThat(RefusalProof.provesNothingApplied(
                        error(189, "RetryableWriteError", "NoWritesPerformed"), false, false))
                .isTrue();
    }

    @Test
    void retryableWriteErrorLabel_onAnOtherwiseFinalCode_provesNothing() {
        assertThat(RefusalProof.provesNothingApplied(error(2, "RetryableWriteError"), true, false))
                .isFalse();
    }

    @Test
    void aResendsNotWritablePrimary_afterAnEarlierPrimarySteppedDown_leavesTheEarlierSendInDoubt() {
        CopySender.Sent sent = new CopySender.Sent(
                SendResult.serverError(error(10107)), true, true, false, List.of(SendResult.serverError(error(189))));

        assertThat(RefusalProof.anEarlierSendMayHaveApplied(sent, true, false)).isTrue();
    }

    @Test
    void earlierRefusalsBeforeTheCommand_leaveNoDoubt() {
        CopySender.Sent sent = new CopySender.Sent(
                SendResult.serverError(error(10107)),
                true,
                true,
                false,
                List.of(SendResult.serverError(error(10107)), SendResult.serverError(error(13435))));

        assertThat(RefusalProof.anEarlierSendMayHaveApplied(sent, false, false)).isFalse();
    }

    @Test
    void anEarlierReplyThatWroteSomething_leavesDoubt() {
        SendResult partial = SendResult.reply(
                BsonDocument.parse("{ok: 1, n: 1, writeErrors: [{index: 1, code: 13388, errmsg: 'stale'}]}"));
        CopySender.Sent sent =
                new CopySender.Sent(SendResult.serverError(error(10107)), true, true, false, List.of(partial));

        assertThat(RefusalProof.anEarlierSendMayHaveApplied(sent, false, false)).isTrue();
    }

    @Test
    void anEarlierLostAnswer_leavesDoubt() {
        MongoException timeout = new MongoSocketReadTimeoutException("t", new ServerAddress(), new RuntimeException());
        CopySender.Sent sent = new CopySender.Sent(
                SendResult.serverError(error(10107)), true, true, true, List.of(SendResult.gaveUp(timeout)));

        assertThat(RefusalProof.anEarlierSendMayHaveApplied(sent, true, false)).isTrue();
    }
}
