package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.auth.Principal;
import io.github.mongowriteguard.testkit.auth.Users;
import io.github.mongowriteguard.testkit.engine.StorageEngine;
import java.util.List;
import org.bson.BsonDocument;

/**
 * What the testkit's own cluster layers do to a node: the replica-set coordinator (its role, its data rebuilt from
 * the oplog, its retry records, a restart), the sharded cluster (a migration's retry history, mongos' view of a
 * shard's sessions and operations) and the cluster builders (users, hosts). Not for tests: a test starts, connects,
 * sets fail points and reads counters and truth through {@link EmulatedNode} and the cluster classes;
 * {@code TestkitArchitectureTest} keeps this class to the testkit's own packages.
 *
 * <pre>{@code
 * NodeInternals.of(node).applyRetryRecord(sessionId, lsid, txnNumber, stmtId, outcome);
 * }</pre>
 */
public final class NodeInternals {
    private final EmulatedNode node;

    private NodeInternals(EmulatedNode node) {
        this.node = node;
    }

    /**
     * The internals of {@code node}.
     *
     * @param node the node
     * @return its internals
     */
    public static NodeInternals of(EmulatedNode node) {
        return new NodeInternals(java.util.Objects.requireNonNull(node, "node"));
    }

    /**
     * The members a replica-set member announces in {@code hello} (itself by default).
     *
     * @param members the members' addresses
     */
    public void hosts(List<String> members) {
        node.replicationInfo.hosts(members);
    }

    /**
     * The address a secondary names as its primary in {@code hello}.
     *
     * @param address the primary's address
     */
    public void primaryAddress(String address) {
        node.replicationInfo.primaryAddress(address);
    }

    /**
     * The users this node authenticates (SCRAM-SHA-256); authorization is on once one exists. Shards of an emulated
     * cluster keep none: they trust mongos, which authenticates clients.
     *
     * @param nodeUsers the users; none for a shard
     */
    public void users(Users nodeUsers) {
        node.users = java.util.Objects.requireNonNull(nodeUsers, "users");
    }

    /** {@return the users this node authenticates} */
    public Users users() {
        return node.users;
    }

    /**
     * Whether the transaction {@code txnNumber} of session {@code lsid} is open here (neither committed nor aborted):
     * the emulated mongos' stand-in for a participant's vote in the prepare phase of two-phase commit.
     *
     * @param lsid      the session's {@code lsid} document
     * @param txnNumber the transaction number
     * @return whether it is in progress
     */
    public boolean transactionInProgress(BsonDocument lsid, long txnNumber) {
        String id = SessionCatalog.sessionId(lsid);
        return id != null && node.transactions.inProgress(id, txnNumber);
    }

    /**
     * Makes this node a member of a replicating set; its role then comes from {@code member}, not its identity.
     *
     * @param member the node's role in the set
     */
    public void membership(Membership member) {
        node.membership = member;
    }

    /**
     * The node's replica-set role, or null when it has a fixed identity.
     *
     * @return the role, or null
     */
    public Membership membership() {
        return node.membership;
    }

    /**
     * Replaces the node's data (the replication layer rebuilds it from the oplog after a rollback or a restart).
     *
     * @param rebuilt the rebuilt engine
     */
    public void replaceEngine(StorageEngine rebuilt) {
        java.util.Objects.requireNonNull(rebuilt, "rebuilt")
                .serverVersion(node.identity().version());
        node.engine = rebuilt;
    }

    /**
     * Kills the running operations {@code which} selects: each ends at its next interrupt point with the error of
     * {@code reason} (an uninterruptible one runs to its end).
     *
     * @return how many were killed
     * @param reason why they are killed, which decides their error
     * @param which  selects the operations to kill
     */
    public int killOperations(
            OperationInterruptedException.KillReason reason, java.util.function.Predicate<OperationContext> which) {
        int killed = 0;
        for (OperationContext operation : node.active.values()) {
            if (which.test(operation)) {
                operation.kill(reason);
                killed++;
            }
        }
        return killed;
    }

    /**
     * What a restarted mongod no longer has in memory: its sessions (the retryable-write records come back from the
     * oplog through {@link #applyRetryRecord}), its fail points, its running operations (killed at shutdown).
     */
    public void restarted() {
        killOperations(OperationInterruptedException.KillReason.SHUTDOWN, operation -> true);
        node.sessionCatalog.clear();
        node.failCommand().off();
        node.onPrimaryTransactionalWrite().off();
        node.lostReplies.set(null);
    }

    /** Forgets every retryable-write record (before they are rebuilt from the oplog); sessions stay known. */
    public void clearRetryRecords() {
        node.sessionCatalog.clearRetryRecords();
    }

    /**
     * Applies a retryable-write record from the oplog ({@link SessionCatalog#applyRetryRecord}).
     *
     * @param sessionId the session's id, as this node keys its sessions
     * @param lsid      the session's {@code lsid}
     * @param txnNumber the write's transaction number
     * @param stmtId    the statement's id
     * @param outcome   the statement's result, as a retry gets it
     */
    public void applyRetryRecord(
            String sessionId, BsonDocument lsid, long txnNumber, int stmtId, BsonDocument outcome) {
        node.sessionCatalog.applyRetryRecord(sessionId, lsid, txnNumber, stmtId, outcome);
    }

    /**
     * A chunk migration's retryable-write history: the statements of this donor's sessions that wrote documents
     * {@code inChunk} accepts ({@link SessionCatalog#retryHistory}), or, when the donor can no longer send them whole,
     * the dead-end sentinel of each such session ({@link RetryHistory#deadEnd}), received by every recipient node
     * ({@link SessionCatalog#receiveRetryHistory}).
     *
     * @param inChunk    accepts the statement targets ({@code {ns, op, item}}) that lie in the migrated chunk
     * @param incomplete whether the donor's oplog no longer holds the history (the dead-end sentinel is sent)
     * @param recipients the nodes that receive it (every member of a replicating recipient shard)
     */
    public void carryRetryHistory(
            java.util.function.Predicate<BsonDocument> inChunk, boolean incomplete, List<EmulatedNode> recipients) {
        List<RetryHistory> history = node.sessionCatalog.retryHistory(inChunk);
        if (incomplete) {
            history = history.stream().map(RetryHistory::deadEnd).toList();
        }
        for (EmulatedNode recipient : recipients) {
            recipient.sessionCatalog.receiveRetryHistory(history);
        }
    }

    /**
     * Kills every running operation whose session matches one of {@code patterns} ({@link KillCommands}).
     *
     * @param patterns the session patterns
     * @return how many operations were killed
     */
    public int killSessions(List<SessionMatch> patterns) {
        return node.killCommands.killSessions(patterns);
    }

    /**
     * The running operations as {@code currentOp} documents ({@link CurrentOpCommand#currentOps(boolean, Principal)}).
     *
     * @param truncate  {@code truncateOps}
     * @param ownOpsOf  only the operations of this user, or null for all
     * @return one {@code currentOp} document per selected running operation
     */
    public List<BsonDocument> currentOps(boolean truncate, Principal ownOpsOf) {
        return node.currentOpCommand.currentOps(truncate, ownOpsOf);
    }
}
