package io.github.mongowriteguard.internal;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.connection.ClusterSettings;
import com.mongodb.selector.ServerSelector;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The clients one guard configured: what {@code WriteGuard.configure} read from each builder ({@link ClientBinding}),
 * and how a client built from one is recognised again, so that {@code guardCollection} and {@code guardClient} refuse
 * a client the guard never saw. Not API.
 */
public final class ClientBindings {
    /** One per builder given to {@code configure}, in that order. */
    private final List<ClientBinding> bindings = new CopyOnWriteArrayList<>();

    /**
     * Reads from {@code builder} what the guard needs (Client-Side Operation Timeout, the socket read timeout) and
     * leaves its marker on it.
     *
     * @param builder the builder of the client to guard
     * @param read    what {@code builder} builds now
     */
    public void register(MongoClientSettings.Builder builder, MongoClientSettings read) {
        ServerSelector selector = read.getClusterSettings().getServerSelector();
        if (selector instanceof ClientBinding earlier) {
            selector = earlier.delegate(); // configured again: keep the application's own selector only
        }
        ClientBinding binding = new ClientBinding(
                read.getTimeout(TimeUnit.MILLISECONDS),
                read.getSocketSettings().getReadTimeout(TimeUnit.MILLISECONDS),
                selector,
                read.getRetryWrites());
        // The driver keeps the cluster's server selector in the public ClusterDescription.getClusterSettings() of the
        // client (its listeners it replaces): the binding rides there, so guardClient(client) and
        // guardCollection(client, ...) find what was read here.
        ServerSelector marker = binding;
        builder.applyToClusterSettings(cluster -> cluster.serverSelector(marker));
        bindings.add(binding);
    }

    /**
     * What was read from each builder, in the order {@code configure} saw them.
     *
     * @return a snapshot
     */
    public List<ClientBinding> all() {
        return List.copyOf(bindings);
    }

    /**
     * What {@code configure} read from the builder {@code client} was built from.
     *
     * @param client a client
     * @return its binding
     * @throws IllegalStateException if the client was not built from a builder this guard configured
     */
    public ClientBinding of(MongoClient client) {
        return of(client.getClusterDescription());
    }

    /**
     * What {@code configure} read from the builder of the client whose cluster is {@code cluster} (a synchronous or a
     * reactive client).
     *
     * @param cluster the client's cluster description
     * @return its binding
     * @throws IllegalStateException if the client was not built from a builder this guard configured
     */
    public ClientBinding of(com.mongodb.connection.ClusterDescription cluster) {
        ClusterSettings clusterSettings = cluster.getClusterSettings();
        if (clusterSettings != null
                && clusterSettings.getServerSelector() instanceof ClientBinding binding
                && bindings.contains(binding)) {
            return binding;
        }
        if (bindings.isEmpty()) {
            throw notConfigured();
        }
        throw new IllegalStateException(
                "this client was not built from a MongoClientSettings.Builder given to this guard's"
                        + " configure(...): the guard would not see its commands nor know its socket read timeout; build the client"
                        + " with MongoClients.create(guard.configure(builder).build()) (and set no serverSelector on the builder after"
                        + " configure), or wrap it with the guard that configured it");
    }

    /**
     * The one binding, for an access that does not say which client it belongs to.
     *
     * @return the only binding
     * @throws IllegalStateException if the guard configured no builder, or several
     */
    public ClientBinding only() {
        List<ClientBinding> configured = all();
        if (configured.isEmpty()) {
            throw notConfigured();
        }
        if (configured.size() > 1) {
            throw new IllegalStateException("this guard was configured on " + configured.size() + " client settings"
                    + " builders and this MongoAccess does not say which client it belongs to; use one WriteGuard per client,"
                    + " or guard through MongoAccess.of(client), guardCollection(MongoClient, MongoCollection) or a"
                    + " MongoAccess whose client() names it");
        }
        return configured.get(0);
    }

    private static IllegalStateException notConfigured() {
        return new IllegalStateException(
                "WriteGuard.configure(MongoClientSettings.Builder) was not called: the guard reads the"
                        + " client's socket read timeout there to choose each write's maxTimeMS; call it before building the client");
    }
}
