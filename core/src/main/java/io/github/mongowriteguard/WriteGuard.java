package io.github.mongowriteguard;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.mongowriteguard.copies.CopyLedger;
import io.github.mongowriteguard.internal.CallObserver;
import io.github.mongowriteguard.internal.GuardCommandListener;
import io.github.mongowriteguard.internal.MicrometerCallObserver;
import io.github.mongowriteguard.internal.GuardRuntime;
import io.github.mongowriteguard.metrics.GuardEventListener;
import io.github.mongowriteguard.metrics.MicrometerGuardMetrics;
import io.github.mongowriteguard.metrics.GuardObservationConvention;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.github.mongowriteguard.internal.execution.BulkExecutor;
import io.github.mongowriteguard.internal.execution.ClientBulkExecutor;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.bson.BsonDocument;
import com.mongodb.MongoNamespace;
import io.github.mongowriteguard.internal.execution.FindAndModifyExecutor;

/**
 * The entry point: configure a client through the driver's own settings builder, then wrap its collections.
 *
 * <pre>{@code
 * WriteGuard guard = WriteGuard.create(WriteGuardSettings.defaults());
 * MongoClientSettings.Builder settings = MongoClientSettings.builder()
 *     .applyConnectionString(new ConnectionString(uri))
 *     .applyToSocketSettings(s -> s.readTimeout(30, TimeUnit.SECONDS));
 * MongoClient client = MongoClients.create(guard.configure(settings).build());
 * GuardedCollection<Document> inventory = guard.wrap(client, client.getDatabase("shop").getCollection("inventory"));
 * }</pre>
 *
 * <p>{@link #configure} registers the guard's command listener and remembers the builder: when a collection is
 * wrapped, the guard reads the socket read timeout from it and sets every write's {@code maxTimeMS} below it
 * (by default two thirds of it: 20 s for 30 s). A client without a socket read timeout (the driver's default)
 * gets {@link WriteGuardSettings#getDefaultServerDeadline()} as the server deadline.
 */
public final class WriteGuard {
    private final WriteGuardSettings settings;
    private final GuardCommandListener listener = new GuardCommandListener();
    private final CopyLedger copies = new CopyLedger();
    private final GuardRuntime runtime;
    private final List<GuardEventListener> runtimeListeners;
    private final CallObserver observer;
    private volatile MongoClientSettings.@Nullable Builder configured;

    private WriteGuard(Builder builder) {
        this.settings = builder.settings;
        List<GuardEventListener> listeners = new ArrayList<>(builder.listeners);
        if (builder.meterRegistry != null) {
            listeners.add(new MicrometerGuardMetrics((MeterRegistry) builder.meterRegistry, copies));
        }
        this.runtimeListeners = List.copyOf(listeners);
        this.observer = builder.observationRegistry == null ? CallObserver.NONE
            : MicrometerCallObserver.create(builder.observationRegistry, builder.observationConvention);
        this.runtime = new GuardRuntime(settings, listener, copies, listeners, observer);
    }

    public static WriteGuard create() {
        return builder().build();
    }

    public static WriteGuard create(WriteGuardSettings settings) {
        return builder().settings(settings).build();
    }

    /** A builder for a guard with settings, a Micrometer registry and event listeners. */
    public static Builder builder() {
        return new Builder();
    }

    public WriteGuardSettings settings() {
        return settings;
    }

    /** The live view of server copies of this guard's writes: which may still be running now. */
    public CopyLedger copies() {
        return copies;
    }

    /**
     * Registers the guard on the client's settings builder; call it after the socket settings are applied and
     * before building the client.
     *
     * @return the same builder
     */
    public MongoClientSettings.Builder configure(MongoClientSettings.Builder builder) {
        Objects.requireNonNull(builder, "builder");
        builder.addCommandListener(listener);
        this.configured = builder;
        return builder;
    }

    /** Wraps a collection of a client built from the builder given to {@link #configure}. */
    public <T> GuardedCollection<T> wrap(MongoClient client, MongoCollection<T> collection) {
        return wrap(MongoAccess.of(client), collection);
    }

    /**
     * Wraps a collection whose sessions and database come from {@code access}.
     *
     * @throws IllegalStateException if {@link #configure} was not called, or the settings do not fit the client's
     *                               socket read timeout (the message says which and how to fix it)
     */
    public <T> GuardedCollection<T> wrap(MongoAccess access, MongoCollection<T> collection) {
        Objects.requireNonNull(access, "access");
        BulkExecutor<T> executor = new BulkExecutor<>(collection, access, runtime, serverDeadlineMs(collection));
        return new GuardedCollection<>(collection, executor, new FindAndModifyExecutor<>(executor, collection, access, runtime),
            new GuardedCollection.Rewrap() {
                @Override
                public <X> GuardedCollection<X> wrap(MongoCollection<X> changed) {
                    return WriteGuard.this.wrap(access, changed);
                }
            }, false);
    }

    /**
     * Wraps a client for its client-level bulk write ({@code MongoClient.bulkWrite}, several namespaces in one call),
     * guarded as the collection-level {@code bulkWrite} of each namespace's writes; see {@link GuardedClient}.
     *
     * @throws IllegalStateException as {@link #wrap(MongoAccess, MongoCollection)}
     */
    public GuardedClient wrap(MongoClient client) {
        Objects.requireNonNull(client, "client");
        MongoAccess access = MongoAccess.of(client);
        GuardRuntime strictRuntime = new GuardRuntime(WriteGuardSettings.builder(settings).strictOrdered(true).build(),
            listener, copies, runtimeListeners, observer);
        Map<MongoNamespace, BulkExecutor<BsonDocument>> executors = new ConcurrentHashMap<>();
        Map<MongoNamespace, BulkExecutor<BsonDocument>> strictExecutors = new ConcurrentHashMap<>();
        long deadlineMs = serverDeadlineMs(client.getDatabase("admin").getCollection("admin", BsonDocument.class));
        ClientBulkExecutor executor = new ClientBulkExecutor(client.getCodecRegistry(), (namespace, strict) ->
            (strict ? strictExecutors : executors).computeIfAbsent(namespace, ns -> new BulkExecutor<>(
                client.getDatabase(ns.getDatabaseName()).getCollection(ns.getCollectionName(), BsonDocument.class),
                access, strict ? strictRuntime : runtime, deadlineMs)), settings.isStrictOrdered(), deadlineMs);
        return new GuardedClient(client, executor);
    }

    /** The server deadline of every write on {@code collection}, after checking that the guard can set it. */
    private long serverDeadlineMs(MongoCollection<?> collection) {
        Objects.requireNonNull(collection, "collection");
        MongoClientSettings.Builder builder = configured;
        if (builder == null) {
            throw new IllegalStateException("WriteGuard.configure(MongoClientSettings.Builder) was not called: the guard reads the"
                + " client's socket read timeout there to choose each write's maxTimeMS; call it before building the client");
        }
        MongoClientSettings clientSettings = builder.build();
        if (clientSettings.getTimeout(TimeUnit.MILLISECONDS) != null) {
            throw new IllegalStateException("the client uses Client-Side Operation Timeout (timeoutMS="
                + clientSettings.getTimeout(TimeUnit.MILLISECONDS) + "): the driver then sets maxTimeMS itself; remove"
                + " timeoutMS from the client settings and let the guard set the server deadline from the socket read timeout");
        }
        Long collectionTimeout = collection.getTimeout(TimeUnit.MILLISECONDS);
        if (collectionTimeout != null) {
            throw new IllegalArgumentException("the collection " + collection.getNamespace() + " has a Client-Side Operation"
                + " Timeout (timeoutMS=" + collectionTimeout + ", from collection.withTimeout or database.withTimeout):"
                + " the guard sets each write's server deadline (maxTimeMS) from the socket read timeout instead, and would"
                + " not honour it; wrap the collection without withTimeout, and set serverDeadline in WriteGuardSettings"
                + " to choose the deadline");
        }
        int readTimeoutMs = clientSettings.getSocketSettings().getReadTimeout(TimeUnit.MILLISECONDS);
        Duration deadline = settings.resolveServerDeadline(readTimeoutMs == 0 ? null : Duration.ofMillis(readTimeoutMs));
        return Math.max(1, deadline.toMillis());
    }

    @Override
    public String toString() {
        return "WriteGuard{" + settings + '}';
    }

    /** Builds a {@link WriteGuard}. */
    public static final class Builder {
        private WriteGuardSettings settings = WriteGuardSettings.defaults();
        private final List<GuardEventListener> listeners = new ArrayList<>();
        private @Nullable Object meterRegistry;
        private @Nullable Object observationRegistry;
        private @Nullable Object observationConvention;

        private Builder() {
        }

        public Builder settings(WriteGuardSettings settings) {
            this.settings = Objects.requireNonNull(settings, "settings");
            return this;
        }

        /**
         * Records the guard's meters ({@code mongodb.guard.*}, see {@link MicrometerGuardMetrics}) in this registry.
         * Without one the guard records nothing and needs no Micrometer on the class path.
         */
        public Builder meterRegistry(MeterRegistry registry) {
            this.meterRegistry = Objects.requireNonNull(registry, "registry");
            return this;
        }

        /**
         * Runs each guarded call inside a Micrometer Observation of this registry: named {@code mongodb.guard.write},
         * contextual name {@code guarded <operation> <namespace>}, low-cardinality key values {@code db.namespace},
         * {@code mongodb.guard.operation} and {@code mongodb.guard.outcome} only (see
         * {@link io.github.mongowriteguard.metrics.DefaultGuardObservationConvention}). The observation is in scope
         * while the call runs, so command observations that take the current observation as parent nest under it.
         * Without a registry the guard observes nothing and needs no Micrometer on the class path.
         *
         * @param registry the application's observation registry
         * @return this builder
         */
        public Builder observationRegistry(ObservationRegistry registry) {
            this.observationRegistry = Objects.requireNonNull(registry, "registry");
            return this;
        }

        /**
         * Replaces the default names and key values of the guard's observations.
         *
         * @param convention the convention to use instead of
         *                   {@link io.github.mongowriteguard.metrics.DefaultGuardObservationConvention}
         * @return this builder
         */
        public Builder observationConvention(GuardObservationConvention convention) {
            this.observationConvention = Objects.requireNonNull(convention, "convention");
            return this;
        }

        /** Adds a listener for the guard's events; one that throws is logged and never breaks a write. */
        public Builder addListener(GuardEventListener listener) {
            listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        public WriteGuard build() {
            return new WriteGuard(this);
        }
    }
}
