package io.github.mongowriteguard.testkit.spec;

import com.mongodb.event.CommandFailedEvent;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.event.CommandSucceededEvent;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;

/**
 * The command events one client entity observes ({@code observeEvents}), minus {@code ignoreCommandMonitoringEvents},
 * the runner's own {@code configureFailPoint} commands, the commands the clients send on their own
 * ({@link SpecClients#ownCommand}) and, unless {@code observeSensitiveCommands}, the security-sensitive commands.
 */
final class EventRecorder implements CommandListener {
    private static final Set<String> SENSITIVE = Set.of(
            "authenticate",
            "saslStart",
            "saslContinue",
            "getnonce",
            "createUser",
            "updateUser",
            "copydbgetnonce",
            "copydbsaslstart",
            "copydb",
            "hello",
            "ismaster",
            "isMaster");

    /** One observed event: its type as the unified format names it, and its fields. */
    record Event(String type, String commandName, String databaseName, BsonDocument command, BsonDocument reply) {}

    private final Set<String> observed;
    private final Set<String> ignored;
    private final boolean observeSensitive;
    private final SpecClients clients;
    private final List<Event> events = new CopyOnWriteArrayList<>();
    /** The request ids of commands the clients sent on their own ({@link SpecClients#ownCommand}). */
    private final Set<Integer> own = ConcurrentHashMap.newKeySet();

    EventRecorder(Set<String> observed, Set<String> ignored, boolean observeSensitive, SpecClients clients) {
        this.observed = observed;
        this.ignored = ignored;
        this.observeSensitive = observeSensitive;
        this.clients = clients;
    }

    List<Event> events() {
        return List.copyOf(events);
    }

    private boolean skip(String type, String commandName) {
        return !observed.contains(type)
                || ignored.contains(commandName)
                || commandName.equals("configureFailPoint")
                || (!observeSensitive && SENSITIVE.contains(commandName));
    }

    @Override
    public void commandStarted(CommandStartedEvent event) {
        if (clients.ownCommand(event.getCommandName(), event.getDatabaseName(), event.getCommand())) {
            own.add(event.getRequestId());
            return;
        }
        if (!skip("commandStartedEvent", event.getCommandName())) {
            events.add(new Event(
                    "commandStartedEvent",
                    event.getCommandName(),
                    event.getDatabaseName(),
                    copy(event.getCommand()),
                    null));
        }
    }

    @Override
    public void commandSucceeded(CommandSucceededEvent event) {
        if (own.remove(event.getRequestId())) {
            return;
        }
        if (!skip("commandSucceededEvent", event.getCommandName())) {
            events.add(new Event(
                    "commandSucceededEvent",
                    event.getCommandName(),
                    event.getDatabaseName(),
                    null,
                    copy(event.getResponse())));
        }
    }

    @Override
    public void commandFailed(CommandFailedEvent event) {
        if (own.remove(event.getRequestId())) {
            return;
        }
        if (!skip("commandFailedEvent", event.getCommandName())) {
            events.add(new Event("commandFailedEvent", event.getCommandName(), event.getDatabaseName(), null, null));
        }
    }

    /** The driver's event documents may be backed by buffers it reuses; keep a copy of our own. */
    private static BsonDocument copy(BsonDocument document) {
        return document == null
                ? null
                : new RawBsonDocument(document, new BsonDocumentCodec()).decode(new BsonDocumentCodec());
    }
}
