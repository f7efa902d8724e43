package io.github.mongowriteguard.testkit.spec;

import java.util.HashSet;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.opentest4j.TestAbortedException;

/**
 * An operation's {@code arguments}, read one by one; an argument the operation did not read makes the test
 * skipped rather than silently ignored.
 */
final class Arguments {
    private final String operation;
    private final BsonDocument arguments;
    private final Set<String> read = new HashSet<>();

    Arguments(String operation, BsonDocument arguments) {
        this.operation = operation;
        this.arguments = arguments == null ? new BsonDocument() : arguments;
    }

    boolean has(String name) {
        read.add(name);
        return arguments.containsKey(name);
    }

    BsonValue get(String name) {
        read.add(name);
        BsonValue value = arguments.get(name);
        if (value == null) {
            throw new IllegalArgumentException(operation + " needs the argument '" + name + "'");
        }
        return value;
    }

    BsonValue get(String name, BsonValue fallback) {
        read.add(name);
        return arguments.get(name, fallback);
    }

    BsonDocument document(String name) {
        return get(name).asDocument();
    }

    BsonDocument document(String name, BsonDocument fallback) {
        return has(name) ? get(name).asDocument() : fallback;
    }

    String string(String name) {
        return get(name).asString().getValue();
    }

    /** Skips the test when an argument was given that the operation does not support. */
    void requireAllRead() {
        for (String name : arguments.keySet()) {
            if (!read.contains(name)) {
                throw new TestAbortedException(operation + " argument '" + name + "' is not supported by the runner");
            }
        }
    }
}
