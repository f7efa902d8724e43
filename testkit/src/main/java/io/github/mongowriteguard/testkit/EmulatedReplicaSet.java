package io.github.mongowriteguard.testkit;

import java.util.Objects;

import io.github.mongowriteguard.testkit.auth.Users;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.node.NodeIdentity;
import io.github.mongowriteguard.testkit.truth.ServerTruth;

/**
 * An emulated replica set: a primary that announces itself with {@code setName}, so the driver discovers a
 * replica set, attaches {@code lsid} to commands and {@code txnNumber} to retryable writes.
 */
public final class EmulatedReplicaSet implements EmulatedCluster {
    private final EmulatedNode primary;
    private final String setName;

    private EmulatedReplicaSet(Builder builder) {
        this.setName = builder.setName;
        this.primary = new EmulatedNode(builder.setName, NodeIdentity.primary(builder.setName, builder.version), builder.port);
        primary.users(builder.users);
    }

    /** {@return a builder with every default (same as {@link EmulatedCluster#replicaSet()})} */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public String connectionString() {
        return "mongodb://" + primary.address() + "/?replicaSet=" + setName;
    }

    /**
     * The primary: fail points, stalls, kills and its own truth.
     *
     * @return the primary node
     */
    public EmulatedNode primary() {
        return primary;
    }

    @Override
    public ServerTruth truth() {
        return primary.truth();
    }

    /** The users the set authenticates (authorization is on once one exists); users may be added while it runs. */
    public Users users() {
        return primary.users();
    }

    @Override
    public void close() {
        primary.close();
    }

    @Override
    public String toString() {
        return "EmulatedReplicaSet{" + connectionString() + "}";
    }

    /** Builds and starts an {@link EmulatedReplicaSet}. */
    public static final class Builder {
        private String setName = "rs0";
        private ServerVersion version = ServerVersion.V4_4;
        private int port;
        private final Users users = new Users();

        private Builder() {
        }

        /**
         * Adds a user in {@code admin} (SCRAM-SHA-256) with built-in roles (see {@link Users}); with one user,
         * authorization is on and every client must authenticate ({@code mongodb://user:password@host/?authSource=admin}).
         */
        public Builder user(String name, String password, String... roles) {
            users.add(name, password, roles);
            return this;
        }

        /** The replica set name, default {@code rs0}. */
        public Builder setName(String name) {
            this.setName = Objects.requireNonNull(name, "setName");
            return this;
        }

        /**
         * The server version to report and follow, default 4.4 (wire version 9).
         *
         * @param version the version
         * @return this builder
         */
        public Builder serverVersion(ServerVersion version) {
            this.version = Objects.requireNonNull(version, "serverVersion");
            return this;
        }

        /**
         * The loopback port, default 0 (any free port).
         *
         * @param port 0 or 1 to 65535
         * @return this builder
         */
        public Builder port(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port (" + port + ") must be 0 (any free port) or 1-65535");
            }
            this.port = port;
            return this;
        }

        /**
         * Starts the primary on a loopback port.
         *
         * @return the running replica set; close it to stop it
         */
        public EmulatedReplicaSet start() {
            return new EmulatedReplicaSet(this);
        }
    }
}
