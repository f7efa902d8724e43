package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.auth.Principal;
import io.github.mongowriteguard.testkit.engine.StorageEngine;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Killing operations and sessions: {@code killOp} (mongodb/mongo {@code src/mongo/db/commands/kill_op.cpp},
 * {@code kill_op_cmd_base.cpp}), {@code killSessions} and {@code killAllSessions}
 * ({@code src/mongo/db/commands/kill_sessions_command.cpp}, {@code kill_all_sessions_command.cpp}), which also abort
 * the unprepared transactions of the sessions they name ({@code src/mongo/db/session/kill_sessions_local.cpp}); a
 * killed operation ends at its next interrupt point.
 */
final class KillCommands {
    private final EmulatedNode node;
    private final Map<Long, OperationContext> active;
    private final SessionCatalog sessionCatalog;
    private final Transactions transactions;
    private final CommandExecutor executor;

    KillCommands(
            EmulatedNode node,
            Map<Long, OperationContext> active,
            SessionCatalog sessionCatalog,
            Transactions transactions,
            CommandExecutor executor) {
        this.node = node;
        this.active = active;
        this.sessionCatalog = sessionCatalog;
        this.transactions = transactions;
        this.executor = executor;
    }

    /**
     * Marks an operation killed; it ends at its next interrupt point.
     *
     * @param opid the operation id
     * @return whether such an operation was running
     */
    boolean killOp(long opid) {
        OperationContext operation = active.get(opid);
        if (operation == null) {
            return false;
        }
        operation.kill();
        return true;
    }

    /**
     * Kills every running operation of the given sessions, whoever owns them.
     *
     * @param sessionIds the sessions' ids; all sessions when empty
     * @return how many operations were killed
     */
    int killSessions(Set<String> sessionIds) {
        if (sessionIds.isEmpty()) {
            return killSessions(List.of(SessionMatch.ALL));
        }
        return killSessions(
                sessionIds.stream().map(id -> new SessionMatch(id, null)).toList());
    }

    /**
     * Kills every running operation whose session matches one of {@code patterns}.
     *
     * @param patterns the session patterns
     * @return how many operations were killed
     */
    int killSessions(List<SessionMatch> patterns) {
        int killed = 0;
        for (OperationContext operation : active.values()) {
            String id = SessionCatalog.sessionId(operation.command().get("lsid"));
            if (id == null) {
                continue;
            }
            byte[] uid = SessionCatalog.sessionUid(operation);
            if (patterns.stream().anyMatch(p -> p.matches(id, uid))) {
                operation.kill();
                killed++;
            }
        }
        // Then each matching session is checked out and its unprepared transaction aborted, running or idle
        // (kill_sessions_local.cpp killSessionsAbortUnpreparedTransactions).
        for (SessionState session : sessionCatalog.all()) {
            if (session.lsid != null && patterns.stream().anyMatch(p -> p.matches(session.id, session.uid))) {
                transactions.abortInProgress(session.id);
            }
        }
        return killed;
    }

    /**
     * {@code killSessions}: any user may kill its own sessions; an id names the caller's session unless the caller
     * has {@code killAnySession} and gives the {@code uid}; an empty list kills all of the caller's sessions (every
     * session when authorization is off). mongos kills its own operations, then every shard host's
     * ({@code killSessionsRemote}). From mongodb/mongo {@code src/mongo/db/commands/kill_sessions_command.cpp}.
     */
    BsonDocument killSessionsCommand(OperationContext operation, BsonDocument command) {
        Principal caller = operation.connection().principal();
        boolean authorizationOn =
                node.users().enabled() && !operation.connection().isInternal();
        List<SessionMatch> patterns = new ArrayList<>();
        BsonValue list = command.get("killSessions");
        if (list == null || !list.isArray() || list.asArray().isEmpty()) {
            patterns.add(authorizationOn ? new SessionMatch(null, Principal.digestOf(caller)) : SessionMatch.ALL);
        } else {
            for (BsonValue lsid : list.asArray()) {
                String id = SessionCatalog.sessionId(lsid);
                if (id == null) {
                    return StorageEngine.error(
                            40414,
                            "Location40414",
                            "BSON field 'KillSessionsCmdFromClient.killSessions.id' is missing but a required field");
                }
                boolean namedUid = lsid.asDocument().isBinary("uid")
                        && (!authorizationOn || (caller != null && caller.has("killAnySession")));
                patterns.add(new SessionMatch(
                        id, namedUid ? lsid.asDocument().getBinary("uid").getData() : Principal.digestOf(caller)));
            }
        }
        killSessions(patterns);
        if (executor instanceof ShardOperations shards) {
            return killedOnShards(shards.killSessionsOnShards(operation, patterns));
        }
        return EmulatedNode.ok();
    }

    /**
     * mongos' answer once its kill fanned out: the hosts it did not reach fail the command with
     * {@code HostUnreachable} and {@code failedHosts} (mongodb/mongo {@code src/mongo/db/session/kill_sessions_common.cpp}
     * {@code killSessionsCmdHelper}: "Failed to kill on some hosts").
     */
    static BsonDocument killedOnShards(List<String> failedHosts) {
        if (failedHosts.isEmpty()) {
            return EmulatedNode.ok();
        }
        BsonArray hosts = new BsonArray();
        failedHosts.forEach(host -> hosts.add(new BsonString(host)));
        return StorageEngine.error(6, "HostUnreachable", "Failed to kill on some hosts")
                .append("failedHosts", hosts);
    }

    /** {@code killOp}: a user without the {@code killop} action may kill its own operations only. */
    BsonDocument killOpCommand(OperationContext operation, BsonDocument command) {
        BsonValue op = command.get("op");
        long opid = op == null || !op.isNumber() ? -1 : op.asNumber().longValue();
        Principal caller = operation.connection().principal();
        if (node.users().enabled()
                && !operation.connection().isInternal()
                && (caller == null || !caller.has("killop"))) {
            OperationContext target = active.get(opid);
            Principal owner = target == null ? null : target.connection().principal();
            if (owner == null || caller == null || !owner.fullName().equals(caller.fullName())) {
                return StorageEngine.error(AuthorizationSession.UNAUTHORIZED, "Unauthorized", "Unauthorized");
            }
        }
        killOp(opid);
        return EmulatedNode.ok().append("info", new BsonString("attempting to kill op"));
    }
}
