package io.github.mongowriteguard.testkit.failpoint;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.bson.BsonArray;
import org.bson.BsonDocument;

/**
 * The {@code failCommand} fail point of mongod ({@code enableTestCommands=1}), set with
 * {@code {configureFailPoint: "failCommand", mode: ..., data: ...}} on {@code admin}.
 *
 * <p>Modes: {@code "alwaysOn"}, {@code "off"}, {@code {times: n}} (the next n matching commands),
 * {@code {skip: n}} (all matching commands after the first n). Data: {@code failCommands}, {@code appName},
 * {@code errorCode}, {@code errorLabels}, {@code writeConcernError}, {@code closeConnection},
 * {@code blockConnection} with {@code blockTimeMS}, {@code failInternalCommands}. A command matches when its name
 * is in {@code failCommands}, if {@code appName} is set its connection's appName equals it, and it does not come from
 * an internal client (mongos or another cluster member) unless {@code failInternalCommands: true}: mongodb/mongo
 * {@code src/mongo/db/commands.cpp} {@code shouldActivateFailCommandFailPoint} ({@code kInternalClient} session tag).
 * A command the fail point does not match is not counted ({@code times} and {@code skip} are not used up).
 */
public final class FailCommand {
    private FailPointMode mode = FailPointMode.OFF;
    private BsonDocument data = new BsonDocument();

    /** What one triggered evaluation asks the server to do, in mongod's order: close, block, error. */
    public record Action(
            boolean closeConnection,
            long blockTimeMs,
            Integer errorCode,
            List<String> errorLabels,
            BsonDocument writeConcernError) {
        /** {@return whether the fail point gives the error labels itself (else the server adds its own)} */
        public boolean hasErrorLabels() {
            return errorLabels != null;
        }
    }

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

    /** Turns the fail point off, as {@code mode: "off"} does. */
    public synchronized void off() {
        mode = FailPointMode.OFF;
        data = new BsonDocument();
    }

    /**
     * {@link #evaluate(String, String, boolean)} for a client (not internal) connection.
     *
     * @param commandName the command's name
     * @param appName     the connection's appName, or null
     * @return what the fail point makes the command do, or empty when it does not fire
     */
    public synchronized Optional<Action> evaluate(String commandName, String appName) {
        return evaluate(commandName, appName, false);
    }

    /**
     * Decides whether this command triggers the fail point, counting it if so.
     *
     * @param commandName    the command's name
     * @param appName        the connection's appName, or null
     * @param internalClient whether the command comes from mongos or another cluster member
     * @return what the fail point makes the command do, or empty when it does not fire
     */
    public synchronized Optional<Action> evaluate(String commandName, String appName, boolean internalClient) {
        if (internalClient
                && !data.getBoolean("failInternalCommands", org.bson.BsonBoolean.FALSE)
                        .getValue()) {
            return Optional.empty();
        }
        if (mode.isOff() || !matches(commandName, appName) || !mode.fire()) {
            return Optional.empty();
        }
        return Optional.of(new Action(
                data.getBoolean("closeConnection", org.bson.BsonBoolean.FALSE).getValue(),
                data.getBoolean("blockConnection", org.bson.BsonBoolean.FALSE).getValue()
                                && data.containsKey("blockTimeMS")
                        ? data.get("blockTimeMS").asNumber().longValue()
                        : 0,
                data.containsKey("errorCode") ? data.get("errorCode").asNumber().intValue() : null,
                data.containsKey("errorLabels") ? strings(data.getArray("errorLabels")) : null,
                data.containsKey("writeConcernError")
                        ? data.getDocument("writeConcernError").clone()
                        : null));
    }

    private boolean matches(String commandName, String appName) {
        if (!data.containsKey("failCommands")) {
            return false;
        }
        boolean named = data.getArray("failCommands").stream()
                .anyMatch(v -> v.isString() && v.asString().getValue().equals(commandName));
        if (!named) {
            return false;
        }
        return !data.containsKey("appName")
                || data.getString("appName").getValue().equals(appName);
    }

    private static List<String> strings(BsonArray array) {
        List<String> result = new ArrayList<>();
        array.forEach(v -> result.add(v.asString().getValue()));
        return List.copyOf(result);
    }
}
