package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.ServerVersion;

/**
 * Who an emulated node says it is in {@code hello}.
 *
 * @param kind    replica-set primary or secondary, mongos, or standalone
 * @param setName the replica set name (replica-set members only)
 * @param version the server version it reports
 */
public record NodeIdentity(Kind kind, String setName, ServerVersion version) {
    public enum Kind { REPLICA_SET_PRIMARY, REPLICA_SET_SECONDARY, MONGOS, STANDALONE }

    public static NodeIdentity primary(String setName, ServerVersion version) {
        return new NodeIdentity(Kind.REPLICA_SET_PRIMARY, setName, version);
    }

    /** A secondary of {@code setName}: it answers {@code hello} with {@code secondary: true} and refuses writes. */
    public static NodeIdentity secondary(String setName, ServerVersion version) {
        return new NodeIdentity(Kind.REPLICA_SET_SECONDARY, setName, version);
    }

    public static NodeIdentity mongos(ServerVersion version) {
        return new NodeIdentity(Kind.MONGOS, null, version);
    }
}
