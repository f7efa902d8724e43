package io.github.mongowriteguard.testkit.node;

import org.bson.BsonDocument;

/**
 * Runs a command once the node has applied fail points, deadlines, the session check-out and stalls: the
 * storage engine on a mongod, the router on a mongos.
 */
@FunctionalInterface
public interface CommandExecutor {
    /**
     * @param operation the running operation (deadline, kill flag, the full original command)
     * @param command   the command without session, deadline and routing fields
     * @return the reply, {@code ok: 0} documents included
     */
    BsonDocument execute(OperationContext operation, BsonDocument command);
}
