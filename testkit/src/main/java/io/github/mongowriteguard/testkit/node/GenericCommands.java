package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.engine.StorageEngine;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.bson.BsonArray;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;

/**
 * The commands the server answers itself rather than its storage or router: {@code ping}, {@code buildInfo}
 * (mongodb/mongo {@code src/mongo/db/commands/generic.cpp}, {@code generic_servers.cpp}), {@code serverStatus} and its
 * command counters ({@code src/mongo/db/commands/server_status.cpp}, {@code server_status_metric.cpp}),
 * {@code setParameter}, the session commands, {@code currentOp} and the kills, the replica-set commands of a member
 * ({@code src/mongo/db/repl/repl_set_commands.cpp}), change streams' cursors.
 */
final class GenericCommands {
    private final EmulatedNode node;
    private final NodeIdentity identity;
    private final Transactions transactions;
    private final CurrentOpCommand currentOpCommand;
    private final KillCommands killCommands;
    private final CommandExecutor executor;
    private final Introspection introspection;
    private final SessionCatalog sessionCatalog;
    private final ChangeStreams changeStreams;
    private final Map<String, long[]> commandCounters = new ConcurrentHashMap<>();
    private final long startedMillis = System.currentTimeMillis();

    GenericCommands(
            EmulatedNode node,
            NodeIdentity identity,
            Transactions transactions,
            CurrentOpCommand currentOpCommand,
            KillCommands killCommands,
            CommandExecutor executor,
            Introspection introspection,
            SessionCatalog sessionCatalog,
            ChangeStreams changeStreams) {
        this.node = node;
        this.identity = identity;
        this.transactions = transactions;
        this.currentOpCommand = currentOpCommand;
        this.killCommands = killCommands;
        this.executor = executor;
        this.introspection = introspection;
        this.sessionCatalog = sessionCatalog;
        this.changeStreams = changeStreams;
    }

    /** {@return how many times the command arrived, as {@code serverStatus().metrics.commands.<name>.total}} */
    long commandCount(String commandName) {
        long[] counter = commandCounters.get(commandName);
        return counter == null ? 0 : counter[0];
    }

    /**
     * Answers the commands the emulated server owns (introspection, sessions, status) and returns null for
     * everything the storage engine or router should run.
     */
    BsonDocument answerNodeCommand(OperationContext operation, BsonDocument command) {
        String commandName = command.getFirstKey();
        switch (commandName) {
            case "ping":
            case "endSessions":
            case "refreshSessions":
                return EmulatedNode.ok();
            case "buildInfo":
            case "buildinfo":
                return buildInfo();
            case "setParameter":
                if (command.containsKey("transactionLifetimeLimitSeconds")
                        && identity.kind() != NodeIdentity.Kind.MONGOS) {
                    long was = transactions.lifetimeLimitSeconds();
                    transactions.lifetimeLimitSeconds(
                            command.getNumber("transactionLifetimeLimitSeconds").longValue());
                    return EmulatedNode.ok().append("was", new BsonInt32((int) was));
                }
                return null;
            case "serverStatus":
                return serverStatus();
            case "currentOp":
                return currentOpCommand.currentOpCommand(operation, command);
            case "killOp":
                return killCommands.killOpCommand(operation, command);
            case "killSessions":
                return killCommands.killSessionsCommand(operation, command);
            case "killAllSessions":
                // {killAllSessions: []} kills every session; users in the array ({user, db}) are not told apart.
                killCommands.killSessions(List.of(SessionMatch.ALL));
                if (executor instanceof ShardOperations shards) {
                    return KillCommands.killedOnShards(
                            shards.killSessionsOnShards(operation, List.of(SessionMatch.ALL)));
                }
                return EmulatedNode.ok();
            case "aggregate":
                if (operation.database().equals("admin") && Introspection.isCurrentOpPipeline(command)) {
                    return currentOpCommand.currentOpAggregate(operation, command);
                }
                if (Introspection.isListLocalSessionsPipeline(command)) {
                    return introspection.listLocalSessionsAggregate(
                            sessionCatalog.localSessions(), operation.database(), command);
                }
                if (ChangeStreams.isChangeStream(command)) {
                    return changeStreams.open(operation.database(), command);
                }
                return null;
            case "replSetStepDown":
            case "replSetGetStatus":
            case "replSetStepUp":
            case "replSetFreeze":
                return node.membership() != null
                        ? node.membership().command(operation)
                        : StorageEngine.error(
                                76,
                                "NoReplicationEnabled",
                                "this node's replica set does not replicate"
                                        + " (the testkit's single-member set; start one with members(3))");
            case "getMore":
                return changeStreams.owns(command) ? changeStreams.getMore(operation, command) : null;
            case "killCursors":
                return changeStreams.killsOwned(command) ? changeStreams.killCursors(command) : null;
            default:
                return null;
        }
    }

    private BsonDocument buildInfo() {
        BsonArray versionArray = new BsonArray(List.of(
                new BsonInt32(identity.version().major()),
                new BsonInt32(identity.version().minor()),
                new BsonInt32(0),
                new BsonInt32(0)));
        return EmulatedNode.ok()
                .append("version", new BsonString(identity.version().versionString()))
                .append("gitVersion", new BsonString("mongo-write-guard-testkit"))
                .append("versionArray", versionArray)
                .append("maxBsonObjectSize", new BsonInt32(16 * 1024 * 1024));
    }

    private BsonDocument serverStatus() {
        BsonDocument commands = new BsonDocument();
        commandCounters.forEach((commandName, counter) -> commands.put(
                commandName,
                new BsonDocument("failed", new BsonInt64(counter[1])).append("total", new BsonInt64(counter[0]))));
        return EmulatedNode.ok()
                .append("host", new BsonString(node.address()))
                .append("version", new BsonString(identity.version().versionString()))
                .append("process", new BsonString(identity.kind() == NodeIdentity.Kind.MONGOS ? "mongos" : "mongod"))
                .append("uptimeMillis", new BsonInt64(System.currentTimeMillis() - startedMillis))
                .append("localTime", new BsonDateTime(System.currentTimeMillis()))
                .append("metrics", new BsonDocument("commands", commands));
    }

    void count(String commandName, boolean failed) {
        long[] counter = commandCounters.computeIfAbsent(commandName, n -> new long[2]);
        synchronized (counter) {
            counter[failed ? 1 : 0]++;
        }
    }
}
