package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.auth.CommandPrivileges;
import io.github.mongowriteguard.testkit.auth.Principal;
import io.github.mongowriteguard.testkit.engine.StorageEngine;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * What the node is running, as {@code currentOp} and {@code $currentOp} show it: mongodb/mongo
 * {@code src/mongo/db/commands/current_op.cpp} and {@code current_op_common.cpp} (the command),
 * {@code src/mongo/db/pipeline/document_source_current_op.cpp} (the stage), {@code src/mongo/db/curop.cpp} (each
 * operation's document); on mongos the shards' operations ({@code src/mongo/s/commands/cluster_current_op.cpp}).
 */
final class CurrentOpCommand {
    private final EmulatedNode node;
    private final Map<Long, OperationContext> active;
    private final CommandExecutor executor;
    private final Introspection introspection;

    CurrentOpCommand(
            EmulatedNode node,
            Map<Long, OperationContext> active,
            CommandExecutor executor,
            Introspection introspection) {
        this.node = node;
        this.active = active;
        this.executor = executor;
        this.introspection = introspection;
    }

    /**
     * The running operations as {@code $currentOp} shows them to a user with {@code inprog}, not truncated.
     *
     * @return one {@code currentOp} document per running operation
     */
    List<BsonDocument> currentOps() {
        return currentOps(false, null);
    }

    /**
     * The running operations as {@code currentOp} documents, mongod's {@code CurOp::reportCurrentOpForClient} and
     * {@code reportState} (mongodb/mongo {@code src/mongo/db/curop.cpp}): {@code opid} a number; {@code lsid}
     * ({@code {id, uid}}) at top level; {@code secs_running} and {@code microsecs_running} once the command passed its
     * fail point and not-primary checks (also while it then waits at the session check-out), not while a fail point
     * block holds it; {@code command} truncated when
     * {@code truncate} and larger than 1,000 bytes ({@link CommandTruncation}).
     *
     * @param truncate  {@code truncateOps}
     * @param ownOpsOf  only the operations of this user ({@code $ownOps} / {@code allUsers: false}), or null for all
     * @return one {@code currentOp} document per selected running operation
     */
    List<BsonDocument> currentOps(boolean truncate, Principal ownOpsOf) {
        List<BsonDocument> ops = new ArrayList<>();
        long now = System.nanoTime();
        for (OperationContext operation : active.values()) {
            Principal owner = operation.connection().principal();
            if (ownOpsOf != null && (owner == null || !owner.fullName().equals(ownOpsOf.fullName()))) {
                continue;
            }
            BsonDocument command = operation.command();
            BsonDocument op = new BsonDocument("type", new BsonString("op"))
                    .append("host", new BsonString(node.address()))
                    .append(
                            "desc",
                            new BsonString("conn" + operation.connection().id()))
                    .append("connectionId", new BsonInt64(operation.connection().id()))
                    .append("client", new BsonString(operation.connection().peer()));
            if (operation.connection().appName() != null) {
                op.append("appName", new BsonString(operation.connection().appName()));
            }
            if (owner != null) {
                op.append(
                        "effectiveUsers",
                        new BsonArray(List.of(new BsonDocument("user", new BsonString(owner.user()))
                                .append("db", new BsonString(owner.db())))));
            }
            op.append("active", BsonBoolean.TRUE).append("opid", new BsonInt32((int) operation.opid()));
            if (operation.isKilled()) {
                op.append("killPending", BsonBoolean.TRUE);
            }
            if (command.isDocument("lsid") && command.getDocument("lsid").containsKey("id")) {
                op.append(
                        "lsid",
                        new BsonDocument("id", command.getDocument("lsid").get("id"))
                                .append("uid", new org.bson.BsonBinary(SessionCatalog.sessionUid(operation))));
            }
            if (operation.isExecuting()) {
                long micros = TimeUnit.NANOSECONDS.toMicros(now - operation.executionStartNanos());
                op.append("secs_running", new BsonInt64(micros / 1_000_000))
                        .append("microsecs_running", new BsonInt64(micros));
            }
            op.append("op", new BsonString(opType(operation.commandName())))
                    .append("ns", new BsonString(EmulatedNode.namespace(operation.database(), command)))
                    .append(
                            "command",
                            truncate ? CommandTruncation.truncated(operation.description()) : operation.description())
                    .append("waitingForLock", BsonBoolean.FALSE);
            if (command.containsKey("txnNumber")) {
                op.append(
                        "transaction",
                        new BsonDocument("parameters", new BsonDocument("txnNumber", command.get("txnNumber"))));
            }
            ops.add(op);
        }
        return ops;
    }

    private static String opType(String commandName) {
        switch (commandName) {
            case "insert":
                return "insert";
            case "update":
                return "update";
            case "delete":
                return "remove";
            case "find":
                return "query";
            case "getMore":
                return "getmore";
            default:
                return "command";
        }
    }

    /**
     * {@code currentOp}: the {@code $currentOp} pipeline the server builds from it ({@code truncateOps: true} unless
     * {@code $truncateOps: false}, {@code allUsers: !$ownOps}) then the other fields as a {@code $match}
     * (mongodb/mongo {@code src/mongo/db/commands/current_op_common.cpp}). On mongos it lists the shards'
     * operations sorted by {@code shard}, not mongos' own ({@code src/mongo/s/commands/cluster_current_op.cpp}).
     */
    BsonDocument currentOpCommand(OperationContext operation, BsonDocument command) {
        boolean truncate =
                !command.containsKey("$truncateOps") || CommandPrivileges.truthy(command.get("$truncateOps"));
        Principal ownOpsOf = CommandPrivileges.truthy(command.get("$ownOps")) ? requester(operation) : null;
        if (executor instanceof ShardOperations shards) {
            try {
                return introspection.currentOp(shards.shardCurrentOps(operation, truncate, ownOpsOf), command, true);
            } catch (ShardOperations.Unreachable e) {
                return e.reply();
            }
        }
        return introspection.currentOp(currentOps(truncate, ownOpsOf), command, false);
    }

    /**
     * {@code aggregate: 1} on {@code admin} whose first stage is {@code $currentOp} ({@code allUsers},
     * {@code localOps}, {@code truncateOps}, {@code idleConnections}, {@code idleSessions}, {@code idleCursors},
     * {@code backtrace}; anything else is {@code FailedToParse}), from
     * mongodb/mongo {@code src/mongo/db/pipeline/document_source_current_op.cpp}. On mongos the shards' operations
     * unless {@code localOps: true}, which lists mongos' own.
     */
    BsonDocument currentOpAggregate(OperationContext operation, BsonDocument command) {
        BsonValue specValue = command.getArray("pipeline").get(0).asDocument().get("$currentOp");
        if (!specValue.isDocument()) {
            return StorageEngine.error(
                    9,
                    "FailedToParse",
                    "$currentOp options must be specified in an object, but found: " + specValue.getBsonType());
        }
        BsonDocument spec = specValue.asDocument();
        for (Map.Entry<String, BsonValue> option : spec.entrySet()) {
            if (!Introspection.CURRENT_OP_OPTIONS.contains(option.getKey())) {
                return StorageEngine.error(
                        9, "FailedToParse", "Unrecognized option '" + option.getKey() + "' in $currentOp stage.");
            }
            if (!option.getValue().isBoolean()) {
                return StorageEngine.error(
                        9,
                        "FailedToParse",
                        "The '" + option.getKey() + "' parameter of the $currentOp"
                                + " stage must be a boolean value, but found: "
                                + option.getValue().getBsonType());
            }
        }
        boolean allUsers = spec.getBoolean("allUsers", BsonBoolean.FALSE).getValue();
        boolean localOps = spec.getBoolean("localOps", BsonBoolean.FALSE).getValue();
        boolean truncate = spec.getBoolean("truncateOps", BsonBoolean.FALSE).getValue();
        Principal ownOpsOf = allUsers ? null : requester(operation);
        if (executor instanceof ShardOperations shards && !localOps) {
            try {
                return introspection.currentOpAggregate(shards.shardCurrentOps(operation, truncate, ownOpsOf), command);
            } catch (ShardOperations.Unreachable e) {
                return e.reply();
            }
        }
        return introspection.currentOpAggregate(currentOps(truncate, ownOpsOf), command);
    }

    /** The user whose own operations an unprivileged view shows; null when authorization is off (all are "own"). */
    private Principal requester(OperationContext operation) {
        return node.users().enabled() || operation.connection().isInternal()
                ? operation.connection().principal()
                : null;
    }
}
