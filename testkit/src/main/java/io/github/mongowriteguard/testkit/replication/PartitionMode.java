package io.github.mongowriteguard.testkit.replication;

/** How a partitioned node looks from the rest of the world (clients and the other members). */
public enum PartitionMode {
    /**
     * Connections fail fast: a request gets no answer and its connection is closed (the driver sees the connection
     * closed, as with a reset or a refused connection); a command running when the partition starts loses its reply.
     */
    CLOSE_CONNECTIONS,
    /**
     * Packets are lost: requests are never answered, so the client waits until its socket (or connect) timeout; the
     * connection is closed when the partition heals.
     */
    BLACK_HOLE
}
