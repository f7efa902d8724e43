package io.github.mongowriteguard.testkit.node;

import org.bson.BsonDocument;

/**
 * Runs a command once the node has applied fail points, deadlines, the session check-out and stalls: the
 * storage engine on a mongod, the router on a mongos.
 *
 * <p>Implemented by the library only (the testkit's nodes and routers implement it).
 */
@FunctionalInterface
public interface CommandExecutor {
    /**
     * @param operation the running operation (deadline, kill flag, the full original command)
     * @param command   the command without session, deadline and routing fields
     * @return the reply, {@code ok: 0} documents included
     */
    BsonDocument execute(OperationContext operation, BsonDocument command);

    /**
     * Before a statement of a multi-document transaction runs (the node runs it in the transaction's own snapshot, not
     * through {@link #execute}): a shard takes the collection lock it keeps to the transaction's end here.
     *
     * @param operation the running statement (its full original command carries {@code lsid} and {@code txnNumber})
     * @param command   the statement without session, deadline and routing fields
     * @return null to run the statement, or the error it fails with
     */
    default BsonDocument beforeTransactionStatement(OperationContext operation, BsonDocument command) {
        return null;
    }
}
