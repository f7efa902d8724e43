package io.github.mongowriteguard.testkit;

import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.node.NodeIdentity;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import io.github.mongowriteguard.testkit.truth.ServerTruth;
import java.util.Objects;

/**
 * An emulated standalone {@code mongod} (no replica set), the most common local setup: the driver discovers a
 * standalone server, keeps logical sessions ({@code lsid}) and sends no {@code txnNumber}. The server refuses a command
 * that carries one with {@code IllegalOperation} (20), "Transaction numbers are only allowed on a replica set member or
 * mongos", before it runs (mongodb/mongo {@code src/mongo/db/initialize_operation_session_info.cpp}): no retryable
 * writes, no transactions.
 *
 * <pre>{@code
 * try (EmulatedStandalone server = EmulatedCluster.standalone().start();
 *      MongoClient client = MongoClients.create(server.connectionString())) {
 *     client.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", 1));
 * }
 * }</pre>
 */
public final class EmulatedStandalone implements EmulatedCluster {
    private final EmulatedNode node;

    private EmulatedStandalone(Builder builder) {
        this.node = new EmulatedNode("standalone", NodeIdentity.standalone(builder.version), builder.port);
    }

    /** {@return a builder with every default (same as {@link EmulatedCluster#standalone()})} */
    public static Builder builder() {
        return new Builder();
    }

    /** {@code mongodb://host:port}: one host and no {@code replicaSet}, as for a standalone. */
    @Override
    public String connectionString() {
        return "mongodb://" + node.address();
    }

    /**
     * The server: fail points, stalls, lost replies, kills and its own truth.
     *
     * @return the node
     */
    public EmulatedNode node() {
        return node;
    }

    @Override
    public ServerTruth truth() {
        return node.truth();
    }

    @Override
    public void close() {
        node.close();
    }

    @Override
    public String toString() {
        return "EmulatedStandalone{" + connectionString() + "}";
    }

    /** Builds and starts an {@link EmulatedStandalone}. */
    public static final class Builder {
        private ServerVersion version = ServerVersion.V4_4;
        private int port;

        private Builder() {}

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
         * Starts the server on a loopback port.
         *
         * @return the running server; close it to stop it
         */
        public EmulatedStandalone start() {
            return new EmulatedStandalone(this);
        }
    }
}
