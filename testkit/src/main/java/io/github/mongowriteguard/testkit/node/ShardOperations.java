package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.auth.Principal;
import java.util.List;
import org.bson.BsonDocument;

/**
 * What a mongos' introspection reaches on the shards: {@code currentOp} and {@code $currentOp} list the shards'
 * operations (not mongos' own, unless {@code localOps: true}), and {@code killSessions} kills on every shard host.
 * Implemented by the router behind a mongos {@link EmulatedNode}.
 *
 * <p>Implemented by the library only (the testkit's cluster layers implement it).
 */
public interface ShardOperations {
    /**
     * Every shard's operations as mongos receives them from {@code $currentOp} run with {@code fromMongos}: a
     * {@code shard} field first, {@code opid} as {@code "<shard>:<opid>"}, {@code client} renamed {@code client_s}
     * (mongodb/mongo {@code src/mongo/db/pipeline/document_source_current_op.cpp}, {@code doGetNext}).
     *
     * @param operation the mongos operation asking (its deadline bounds the wait for an unreachable host)
     * @param truncate  {@code truncateOps}
     * @param ownOpsOf  only this user's operations, or null for every user's
     * @return the shards' operations as {@code currentOp} documents
     * @throws Unreachable when a shard's primary cannot be found or reached: the command fails with its error
     */
    List<BsonDocument> shardCurrentOps(OperationContext operation, boolean truncate, Principal ownOpsOf);

    /**
     * Kills the matching sessions' operations on every host of every shard, as mongos' {@code killSessionsRemote}
     * fans {@code killAllSessionsByPattern} out after killing its own ({@code src/mongo/s/kill_sessions_remote.cpp}).
     *
     * @param operation the mongos operation asking (its deadline bounds the wait for an unreachable host)
     * @param patterns  the sessions to kill
     * @return the hosts the kill did not reach ({@code host:port}), empty when every host was reached
     */
    List<String> killSessionsOnShards(OperationContext operation, List<SessionMatch> patterns);

    /** A shard mongos cannot ask: the command fails with {@link #reply()}. */
    final class Unreachable extends RuntimeException {
        private final transient BsonDocument reply;

        /**
         * A shard that cannot be asked.
         *
         * @param reply the error reply the command fails with
         */
        public Unreachable(BsonDocument reply) {
            super(reply.toJson(), null, false, false);
            this.reply = reply;
        }

        /** {@return the error reply} */
        public BsonDocument reply() {
            return reply;
        }
    }
}
