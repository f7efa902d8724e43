package io.github.mongowriteguard.internal.copies;

import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;

/**
 * Which session a {@code currentOp} entry belongs to. The overlap gate asks {@code currentOp} for its own session only,
 * but it does not take the server's (or a proxy's) filtering on trust: an entry counts as the gate's only when it
 * carries the gate's own {@code lsid.id}, so an operation of another session (another user's, another client's) can
 * never make the gate refuse a retry, and the gate's {@code killSessions} names only its own session anyway.
 *
 * <p>mongod reports the session as a top-level {@code lsid: {id, uid}} ({@code src/mongo/db/curop.cpp},
 * {@code reportState}); the command itself may carry it too, unless {@code currentOp} truncated it.
 */
final class SessionOfOperation {

    private SessionOfOperation() {}

    /** Whether {@code op} shows the session id {@code sessionId}; an entry without any {@code lsid} is nobody's. */
    static boolean isOf(BsonDocument op, BsonValue sessionId) {
        BsonValue shown = id(op.get("lsid"));
        if (shown == null) {
            BsonValue command = op.get("command");
            shown = command != null && command.isDocument()
                    ? id(command.asDocument().get("lsid"))
                    : null;
        }
        return sessionId.equals(shown);
    }

    private static @Nullable BsonValue id(@Nullable BsonValue lsid) {
        return lsid != null && lsid.isDocument() ? lsid.asDocument().get("id") : null;
    }
}
