package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.auth.CommandPrivileges;
import io.github.mongowriteguard.testkit.auth.Principal;
import io.github.mongowriteguard.testkit.engine.StorageEngine;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Whether the connection's user may run a command, asked before the command runs, as mongod's
 * {@code AuthorizationSession} is (mongodb/mongo {@code src/mongo/db/auth/authorization_session_impl.cpp},
 * {@code authorization_checks.cpp}; the privileges themselves are {@link CommandPrivileges}).
 */
final class AuthorizationSession {
    /** Commands a connection may run before it authenticates (those whose {@code requiresAuth()} is false). */
    private static final Set<String> NO_AUTHENTICATION = Set.of(
            "hello",
            "ismaster",
            "isMaster",
            "saslStart",
            "saslContinue",
            "ping",
            "buildInfo",
            "buildinfo",
            "endSessions",
            "logout");

    static final int UNAUTHORIZED = 13;

    private final EmulatedNode node;
    private final NodeIdentity identity;

    AuthorizationSession(EmulatedNode node, NodeIdentity identity) {
        this.node = node;
        this.identity = identity;
    }

    /**
     * The server's authorization check before a command runs (4.4 {@code execCommandDatabase}: before the fail
     * point): nothing but the handshake without authentication, and the cluster actions of the introspection
     * commands. mongod's {@code currentOp} needs {@code inprog} unless the user is authenticated and asks
     * {@code $ownOps: true} ({@code src/mongo/db/commands/current_op.cpp}); mongos' needs {@code inprog} always
     * ({@code src/mongo/s/commands/cluster_current_op.cpp}); {@code $currentOp} needs it for {@code allUsers: true}
     * and, on mongos, unless {@code localOps: true} ({@code document_source_current_op.h},
     * {@code requiredPrivileges}). Internal connections (mongos to shard) are trusted.
     */
    BsonDocument authorize(OperationContext operation) {
        if (!node.users().enabled() || operation.connection().isInternal()) {
            return null;
        }
        String commandName = operation.commandName();
        Principal caller = operation.connection().principal();
        if (caller == null) {
            return NO_AUTHENTICATION.contains(commandName)
                    ? null
                    : StorageEngine.error(
                            UNAUTHORIZED, "Unauthorized", "command " + commandName + " requires authentication");
        }
        BsonDocument command = operation.command();
        boolean mongos = identity.kind() == NodeIdentity.Kind.MONGOS;
        boolean allowed = switch (commandName) {
            case "currentOp" -> caller.has("inprog") || (!mongos && CommandPrivileges.truthy(command.get("$ownOps")));
            case "aggregate" -> {
                if (!operation.database().equals("admin") || !Introspection.isCurrentOpPipeline(command)) {
                    yield CommandPrivileges.allows(caller, operation.database(), commandName, command);
                }
                BsonValue spec =
                        command.getArray("pipeline").get(0).asDocument().get("$currentOp");
                boolean allUsers = spec.isDocument()
                        && CommandPrivileges.truthy(spec.asDocument().get("allUsers"));
                boolean localOps = spec.isDocument()
                        && CommandPrivileges.truthy(spec.asDocument().get("localOps"));
                yield caller.has("inprog") || !(allUsers || (mongos && !localOps));
            }
            case "killAllSessions", "killAllSessionsByPattern" -> caller.has("killAnySession");
            default -> CommandPrivileges.allows(caller, operation.database(), commandName, command);
        };
        if (allowed) {
            return null;
        }
        return StorageEngine.error(
                UNAUTHORIZED,
                "Unauthorized",
                commandName.equals("currentOp")
                        ? "Unauthorized"
                        : "not authorized on " + operation.database() + " to execute command "
                                + CommandTruncation.toShellString(
                                        new BsonDocument(commandName, command.get(commandName))));
    }
}
