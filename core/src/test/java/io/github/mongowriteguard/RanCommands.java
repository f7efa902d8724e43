package io.github.mongowriteguard;

import com.mongodb.event.CommandFailedEvent;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.event.CommandSucceededEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The write commands a client sent, each cut to the statements the server may have run: an ORDERED command's statements
 * after its first write error did not run (mongod stops there: {@code write_ops_exec.cpp}; mongos too:
 * {@code batch_write_exec.cpp}), so a guard that sends them again later sends each write to run once.
 */
final class RanCommands implements CommandListener {
    private static final Set<String> WRITE_COMMANDS = Set.of("insert", "update", "delete");
    private static final Map<String, String> STATEMENTS =
            Map.of("insert", "documents", "update", "updates", "delete", "deletes");

    private final Map<Integer, BsonDocument> started = new ConcurrentHashMap<>();
    private final List<BsonDocument> ran = new CopyOnWriteArrayList<>();

    @Override
    public void commandStarted(CommandStartedEvent event) {
        if (WRITE_COMMANDS.contains(event.getCommandName())) {
            started.put(event.getRequestId(), event.getCommand().clone());
        }
    }

    @Override
    public void commandSucceeded(CommandSucceededEvent event) {
        BsonDocument command = started.remove(event.getRequestId());
        if (command != null) {
            ran.add(cut(command, event.getResponse()));
        }
    }

    @Override
    public void commandFailed(CommandFailedEvent event) {
        BsonDocument command = started.remove(event.getRequestId());
        if (command != null) {
            ran.add(command);
        }
    }

    void clear() {
        started.clear();
        ran.clear();
    }

    /** The commands in the order they completed, then any without an answer. */
    List<BsonDocument> commands() {
        List<BsonDocument> commands = new ArrayList<>(ran);
        commands.addAll(started.values());
        return commands;
    }

    private static BsonDocument cut(BsonDocument command, BsonDocument reply) {
        BsonArray errors = reply.getArray("writeErrors", new BsonArray());
        if (errors.isEmpty() || !command.getBoolean("ordered", BsonBoolean.TRUE).getValue()) {
            return command;
        }
        int first = Integer.MAX_VALUE;
        for (BsonValue error : errors) {
            first = Math.min(first, error.asDocument().getNumber("index").intValue());
        }
        String field = STATEMENTS.get(command.getFirstKey());
        BsonArray statements = command.getArray(field);
        BsonDocument kept = new BsonDocument(); // the event's command may be immutable (a RawBsonDocument)
        command.forEach(kept::put);
        kept.put(field, new BsonArray(new ArrayList<>(statements.subList(0, Math.min(first + 1, statements.size())))));
        return kept;
    }
}
