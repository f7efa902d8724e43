package io.github.mongowriteguard.testkit.failpoint;

import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * mongod's {@code onPrimaryTransactionalWrite} fail point: evaluated once per statement of a retryable write
 * (a write with {@code lsid} and {@code txnNumber}) as the primary applies it. When it fires, the client's
 * connection is closed once the command has finished (unless {@code data.closeConnection} is false), and with
 * {@code data.failBeforeCommitExceptionCode} the statement fails with that code and is not applied.
 */
public final class OnPrimaryTransactionalWrite {
    private FailPointMode mode = FailPointMode.OFF;
    private BsonDocument data = new BsonDocument();

    /** What firing on one statement does. */
    public record Action(boolean closeConnection, Integer failBeforeCommitExceptionCode) {}

    /**
     * Applies a {@code configureFailPoint} command.
     *
     * @throws IllegalArgumentException when the mode is not understood
     * @param command the command, with {@code mode} and {@code data}
     */
    public synchronized void configure(BsonDocument command) {
        FailPointMode newMode = FailPointMode.parse(command.get("mode"));
        data = command.containsKey("data") ? command.getDocument("data").clone() : new BsonDocument();
        mode = newMode;
    }

    /** Turns the fail point off. */
    public synchronized void off() {
        mode = FailPointMode.OFF;
        data = new BsonDocument();
    }

    /** {@return whether the fail point is on} */
    public synchronized boolean isOn() {
        return !mode.isOff();
    }

    /**
     * Evaluates the fail point for one statement, counting it.
     *
     * @return what to do, or empty when the fail point does not fire
     */
    public synchronized Optional<Action> evaluate() {
        if (mode.isOff() || !mode.fire()) {
            return Optional.empty();
        }
        BsonValue close = data.get("closeConnection");
        BsonValue code = data.get("failBeforeCommitExceptionCode");
        return Optional.of(new Action(
                close == null || close.asBoolean().getValue(),
                code == null ? null : code.asNumber().intValue()));
    }
}
