package io.github.mongowriteguard.benchmarks.jmh;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.server.Storage;
import java.util.List;
import org.bson.Document;

/**
 * One cost-free emulated replica set ({@link Storage#NONE}) and one client on it: the driver's own, or one configured
 * by a {@link WriteGuard} with the collection wrapped. The benchmarks on the cost-free server share it.
 */
public final class CostFreeClients implements AutoCloseable {
    private final EmulatedReplicaSet cluster;
    private final MongoClient client;
    private final WriteGuard guard;
    private final MongoCollection<Document> driver;
    private final GuardedCollection<Document> guarded;

    private CostFreeClients(boolean guarded) {
        this.cluster = EmulatedCluster.replicaSet().storage(Storage.NONE).start();
        MongoClientSettings.Builder settings =
                MongoClientSettings.builder().applyConnectionString(new ConnectionString(cluster.connectionString()));
        this.guard = guarded ? WriteGuard.create() : null;
        this.client = MongoClients.create(guarded ? guard.configure(settings).build() : settings.build());
        MongoCollection<Document> collection = client.getDatabase("jmh").getCollection("c");
        this.driver = guarded ? null : collection;
        this.guarded = guarded ? guard.guardCollection(client, collection) : null;
    }

    /**
     * Starts the server and the client of {@code path}.
     *
     * @param path {@code driver} or {@code guard}
     * @return the running pair; close it
     */
    public static CostFreeClients start(String path) {
        return switch (path) {
            case "driver" -> new CostFreeClients(false);
            case "guard" -> new CostFreeClients(true);
            default -> throw new IllegalArgumentException("path (" + path + ") must be driver or guard");
        };
    }

    /** {@return the guard, or null on the driver's path} */
    public WriteGuard guard() {
        return guard;
    }

    /** {@return the emulated replica set} */
    public EmulatedReplicaSet cluster() {
        return cluster;
    }

    /**
     * {@code bulkWrite} through the driver's collection or the guard's.
     *
     * @param models  the writes
     * @param options ordered or not
     * @return the driver's result
     */
    public BulkWriteResult bulkWrite(List<? extends WriteModel<? extends Document>> models, BulkWriteOptions options) {
        return guarded != null ? guarded.bulkWrite(models, options) : driver.bulkWrite(models, options);
    }

    @Override
    public void close() {
        client.close();
        cluster.close();
    }
}
