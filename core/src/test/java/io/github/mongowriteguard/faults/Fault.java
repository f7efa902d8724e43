package io.github.mongowriteguard.faults;

/**
 * What the nemesis can do to a deployment, each for a while, then heal it. Which ones a deployment supports depends on
 * it: failover, restarts and partitions need a replicating replica set.
 */
public enum Fault {
    /** {@code failCommand} with a retryable code (not primary, shutdown, stepped down) on the next 1-5 writes. */
    RETRYABLE_ERROR,
    /** {@code failCommand} with a code no retry fixes (BadValue, UnknownError, OperationFailed) on the next 1-3 writes. */
    NON_RETRYABLE_ERROR,
    /** {@code failCommand} {@code closeConnection}: the next 1-4 writes lose their connection before they run. */
    CLOSED_CONNECTION,
    /** {@code failCommand} {@code writeConcernError}: the next 1-5 writes run, then report a write-concern error. */
    WRITE_CONCERN_ERROR,
    /**
     * {@code failCommand} {@code blockConnection} past the client's socket timeout (1-3 writes): each runs after its
     * client left (on 4.4 and 5.0, the suite's server version; from 6.0 the block counts against {@code maxTimeMS}
     * and such a write expires instead).
     */
    BLOCK_PAST_SOCKET_TIMEOUT,
    /** Writes wait past the deadline at an interrupt point ({@code maxTimeMS} and kills end them). */
    INTERRUPTIBLE_STALL,
    /** Writes wait past every timeout and then apply, whatever deadlines and kills say. */
    UNINTERRUPTIBLE_STALL,
    /** The next 1-4 writes (or statements of retryable writes) run to their end and lose their reply (the connection closes). */
    APPLIED_THEN_CLOSED,
    /**
     * The primary steps down (sometimes forced) or crashes; a secondary is elected. Half the time the secondaries stop
     * replicating for 100-400 ms first, so that what the primary alone has is rolled back.
     */
    FAILOVER,
    /** A member (sometimes the primary) stops for a while and starts again. */
    RESTART,
    /**
     * A member (often the primary) is cut off: connections closed or a black hole. On the sharded cluster, a member of a
     * shard, or (one time in 4) a mongos cut off from the application.
     */
    PARTITION,
    /** {@code currentOp} is refused ({@code Unauthorized}) while writes stall: the overlap gate is blind. */
    CURRENT_OP_REFUSED,
    /** The gate's own {@code currentOp} loses its connection or outlasts the socket timeout while writes stall. */
    GATE_CURRENT_OP_FAILS
}
