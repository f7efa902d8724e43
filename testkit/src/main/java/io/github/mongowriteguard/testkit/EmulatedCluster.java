package io.github.mongowriteguard.testkit;

import io.github.mongowriteguard.testkit.truth.ServerTruth;

/**
 * An embedded, emulated MongoDB deployment that the real Java driver talks to over a real loopback socket.
 * The entry point of the testkit.
 *
 * <pre>{@code
 * try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
 *      MongoClient client = MongoClients.create(cluster.connectionString())) {
 *     client.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", 1));
 *     assertThat(cluster.truth().commands("insert")).hasSize(1);
 * }
 * }</pre>
 *
 * <p>Implemented by the library only (tests start clusters through it; it may gain methods).
 */
public interface EmulatedCluster extends AutoCloseable {

    /**
     * A builder for an emulated replica set (a primary with sessions, retryable writes and fail points).
     *
     * @return a new builder
     */
    static EmulatedReplicaSet.Builder replicaSet() {
        return EmulatedReplicaSet.builder();
    }

    /**
     * A builder for an emulated standalone {@code mongod} (no replica set: sessions, but no {@code txnNumber}, so no
     * retryable writes and no transactions).
     *
     * @return a new builder
     */
    static EmulatedStandalone.Builder standalone() {
        return EmulatedStandalone.builder();
    }

    /**
     * A builder for an emulated sharded cluster (mongos endpoints in front of shards with chunk routing).
     *
     * @return a new builder
     */
    static EmulatedShardedCluster.Builder sharded() {
        return EmulatedShardedCluster.builder();
    }

    /**
     * A connection string the driver can use, e.g. {@code mongodb://127.0.0.1:40123/?replicaSet=rs0}.
     *
     * @return the connection string
     */
    String connectionString();

    /**
     * What the server side saw: commands, copies, documents applied.
     *
     * @return the server-side truth
     */
    ServerTruth truth();

    /** Stops listening and drops all data. Commands still held by stalls are released. */
    @Override
    void close();
}
