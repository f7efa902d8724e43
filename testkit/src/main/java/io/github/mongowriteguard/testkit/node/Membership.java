package io.github.mongowriteguard.testkit.node;

import java.util.List;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.types.ObjectId;

/**
 * The role of a node in a replicating replica set, as the replication layer
 * ({@code io.github.mongowriteguard.testkit.replication}) plays it; a node without one (a single-member set, a shard,
 * a mongos) keeps its fixed identity. The node asks it, at the steps of mongod's command path where a member's state
 * matters: whether the node can be reached at all, what {@code hello} says, whether a write may run here, the
 * statements a write applies (for the oplog), and the write concern wait after the write.
 *
 * <p>Implemented by the library only (the testkit's replication implements it).
 */
public interface Membership {
    /**
     * The commands that write data or the catalog: refused on a secondary ({@code NotWritablePrimary}), logged in the
     * oplog on a primary, and followed by the write concern wait.
     */
    Set<String> WRITE_COMMANDS = Set.of(
            "insert",
            "update",
            "delete",
            "findAndModify",
            "findandmodify",
            "create",
            "drop",
            "dropDatabase",
            "createIndexes",
            "dropIndexes",
            "renameCollection",
            "collMod");

    /**
     * Reads that a secondary serves only when the client allows it ({@code $readPreference} other than primary);
     * otherwise {@code NotPrimaryNoSecondaryOk} (13435).
     */
    Set<String> SECONDARY_OK_COMMANDS =
            Set.of("find", "count", "distinct", "listCollections", "listIndexes", "getMore", "dbStats", "collStats");

    /** How the network treats the node now. */
    enum Reach {
        /** Reachable. */
        SERVING,
        /** Down, or partitioned so that connections are closed: no request gets an answer and each connection is closed. */
        CLOSED,
        /** Partitioned so that requests and replies are lost: nothing is answered until the partition heals. */
        BLACKHOLED
    }

    /** {@return how the network treats the node now} */
    Reach reach();

    /**
     * Increases with every restart of the node: an operation of an earlier incarnation no longer answers.
     *
     * @return the incarnation number
     */
    long incarnation();

    /**
     * Whether the node is the primary and accepts writes.
     *
     * @return true when the node is a writable primary
     */
    boolean isWritablePrimary();

    /**
     * Whether the node is a secondary (neither primary, nor down, nor in rollback).
     *
     * @return true when the node is a secondary
     */
    boolean isSecondary();

    /**
     * Every member's address, for {@code hello}'s {@code hosts}.
     *
     * @return the members' addresses
     */
    List<String> hosts();

    /**
     * The primary this member knows of (itself when primary), or null.
     *
     * @return the primary's address, or null
     */
    String primaryAddress();

    /**
     * The primary's {@code electionId} (from its term), or null when not primary.
     *
     * @return the election id, or null
     */
    ObjectId electionId();

    /**
     * A write command is about to execute on this node (after the session check-out, before stalls): takes the
     * replication state transition lock in shared mode (a stepdown waits for it, and kills the write first) and
     * checks that the node is still the primary. {@link #endWrite} is always called afterwards.
     *
     * @return null to run the write, or the error reply it fails with
     * @param operation the write command's operation
     */
    BsonDocument beginWrite(OperationContext operation);

    /**
     * Commits what the write applied so far to the oplog (with the retryable-write records of its statements) and lets
     * other writes run; called between the statements of a command and at its end.
     *
     * @param operation the write command's operation
     */
    void flush(OperationContext operation);

    /**
     * Flushes and releases what {@link #beginWrite} took.
     *
     * @param operation the write command's operation
     */
    void endWrite(OperationContext operation);

    /**
     * A statement of a retryable write ran on this primary: its record goes to the oplog with its effects.
     *
     * @param operation the write's operation
     * @param sessionId the session's id
     * @param lsid      the session's {@code lsid}
     * @param txnNumber the write's transaction number
     * @param stmtId    the statement's id
     * @param outcome   the statement's result, as a retry gets it
     */
    void statementRecorded(
            OperationContext operation,
            String sessionId,
            BsonDocument lsid,
            long txnNumber,
            int stmtId,
            BsonDocument outcome);

    /**
     * Waits for the command's write concern after it ran (and after its session was checked in).
     *
     * @return null when satisfied, or the {@code writeConcernError} to attach to the reply
     * @param operation the command's operation
     */
    BsonDocument awaitWriteConcern(OperationContext operation);

    /**
     * Replication commands ({@code replSetStepDown}, {@code replSetGetStatus}).
     *
     * @param operation the command's operation
     * @return the reply, or null for other commands
     */
    BsonDocument command(OperationContext operation);

    /**
     * {@code configureFailPoint} for a replication fail point ({@code stopReplProducer}).
     *
     * @param failPoint the fail point's name
     * @param command   the {@code configureFailPoint} command
     * @return the reply, or null for other fail points
     */
    BsonDocument configureFailPoint(String failPoint, BsonDocument command);
}
