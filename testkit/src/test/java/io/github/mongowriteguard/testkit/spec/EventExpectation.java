package io.github.mongowriteguard.testkit.spec;

import java.util.List;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

/**
 * One {@code expectEvents} entry: the command events a client observed, in order, against the expected ones
 * ({@code command}, {@code commandName}, {@code databaseName} and {@code reply} matched as root documents).
 */
final class EventExpectation {
    private static final Set<String> EVENT_FIELDS = Set.of("command", "commandName", "databaseName", "reply");

    private EventExpectation() {}

    static void check(BsonDocument expectation, Entities entities, ValueMatcher matcher) {
        String client = expectation.getString("client").getValue();
        String eventType =
                expectation.getString("eventType", new BsonString("command")).getValue();
        if (!eventType.equals("command")) {
            throw new TestAbortedException(
                    "expectEvents of eventType " + eventType + " are not supported by the runner");
        }
        boolean ignoreExtra = expectation
                .getBoolean("ignoreExtraEvents", org.bson.BsonBoolean.FALSE)
                .getValue();
        BsonArray expected = expectation.getArray("events");
        List<EventRecorder.Event> actual = entities.recorder(client).events();
        String listing = describe(actual);
        if (ignoreExtra ? actual.size() < expected.size() : actual.size() != expected.size()) {
            throw new AssertionFailedError("client " + client + ": expected " + expected.size() + " events " + expected
                    + " but observed " + actual.size() + ":\n" + listing);
        }
        for (int i = 0; i < expected.size(); i++) {
            BsonDocument event = expected.get(i).asDocument();
            String type = event.getFirstKey();
            BsonDocument fields = event.getDocument(type);
            EventRecorder.Event observed = actual.get(i);
            String path = "client " + client + " event " + i;
            if (!type.equals(observed.type())) {
                throw new AssertionFailedError(path + ": expected " + type + " but observed " + observed.type()
                        + " for " + observed.commandName() + "; observed:\n" + listing);
            }
            for (String field : fields.keySet()) {
                if (!EVENT_FIELDS.contains(field)) {
                    throw new TestAbortedException(type + "." + field + " is not supported by the runner");
                }
            }
            if (fields.containsKey("commandName")
                    && !fields.getString("commandName").getValue().equals(observed.commandName())) {
                throw new AssertionFailedError(path + ": expected command "
                        + fields.getString("commandName").getValue() + " but observed " + observed.commandName()
                        + "; observed:\n" + listing);
            }
            if (fields.containsKey("databaseName")
                    && !fields.getString("databaseName").getValue().equals(observed.databaseName())) {
                throw new AssertionFailedError(path + ": expected database "
                        + fields.getString("databaseName").getValue() + " but observed " + observed.databaseName());
            }
            if (fields.containsKey("command")) {
                matcher.assertMatches(path + " command", fields.get("command"), observed.command());
            }
            if (fields.containsKey("reply")) {
                matcher.assertMatches(path + " reply", fields.get("reply"), observed.reply());
            }
        }
    }

    private static String describe(List<EventRecorder.Event> events) {
        StringBuilder builder = new StringBuilder();
        for (EventRecorder.Event event : events) {
            builder.append("  ").append(event.type()).append(' ').append(event.commandName());
            if (event.command() != null) {
                builder.append(' ').append(event.command().toJson());
            }
            builder.append('\n');
        }
        return builder.toString();
    }
}
