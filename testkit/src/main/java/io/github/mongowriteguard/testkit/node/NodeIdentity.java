package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.server.ServerVersion;

/**
 * Who an emulated node says it is in {@code hello}.
 *
 * @param kind    replica-set primary or secondary, mongos, or standalone
 * @param setName the replica set name (replica-set members only)
 * @param version the server version it reports
 */
public record NodeIdentity(Kind kind, String setName, ServerVersion version) {
    /** What a node answers {@code hello} as. */
    public enum Kind {
        /** A replica-set primary: {@code isWritablePrimary: true}, {@code setName}. */
        REPLICA_SET_PRIMARY,
        /** A replica-set secondary: {@code secondary: true}; it refuses writes. */
        REPLICA_SET_SECONDARY,
        /** A mongos endpoint: {@code msg: "isdbgrid"}. */
        MONGOS,
        /** A standalone server. */
        STANDALONE
    }

    /**
     * A primary of {@code setName}.
     *
     * @param setName the replica set name
     * @param version the server version it reports
     * @return the identity
     */
    public static NodeIdentity primary(String setName, ServerVersion version) {
        return new NodeIdentity(Kind.REPLICA_SET_PRIMARY, setName, version);
    }

    /**
     * A secondary of {@code setName}: it answers {@code hello} with {@code secondary: true} and refuses writes.
     *
     * @param setName the replica set name
     * @param version the server version it reports
     * @return the identity
     */
    public static NodeIdentity secondary(String setName, ServerVersion version) {
        return new NodeIdentity(Kind.REPLICA_SET_SECONDARY, setName, version);
    }

    /**
     * A standalone {@code mongod}: {@code isWritablePrimary: true}, no {@code setName}; it keeps logical sessions but
     * refuses a {@code txnNumber}, so it has no retryable writes and no transactions.
     *
     * @param version the server version it reports
     * @return the identity
     */
    public static NodeIdentity standalone(ServerVersion version) {
        return new NodeIdentity(Kind.STANDALONE, null, version);
    }

    /**
     * A mongos endpoint.
     *
     * @param version the server version it reports
     * @return the identity
     */
    public static NodeIdentity mongos(ServerVersion version) {
        return new NodeIdentity(Kind.MONGOS, null, version);
    }
}
