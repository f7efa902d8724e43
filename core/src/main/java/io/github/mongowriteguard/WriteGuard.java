package io.github.mongowriteguard;

import com.mongodb.MongoClientSettings;
import com.mongodb.MongoNamespace;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.github.mongowriteguard.copies.CopyLedger;
import io.github.mongowriteguard.internal.CallObserver;
import io.github.mongowriteguard.internal.ClientBinding;
import io.github.mongowriteguard.internal.ClientBindings;
import io.github.mongowriteguard.internal.ClientPort;
import io.github.mongowriteguard.internal.MicrometerCallObserver;
import io.github.mongowriteguard.internal.MicrometerGuardMetrics;
import io.github.mongowriteguard.internal.ServerTracker;
import io.github.mongowriteguard.internal.catalog.ClusterCatalog;
import io.github.mongowriteguard.internal.copies.LiveCopyLedger;
import io.github.mongowriteguard.internal.copies.SettleHold;
import io.github.mongowriteguard.internal.execution.BulkExecutor;
import io.github.mongowriteguard.internal.execution.ClientBulkExecutor;
import io.github.mongowriteguard.internal.execution.ExecutorCache;
import io.github.mongowriteguard.internal.execution.FindAndModifyExecutor;
import io.github.mongowriteguard.internal.execution.GuardRuntime;
import io.github.mongowriteguard.internal.execution.PlanWarnings;
import io.github.mongowriteguard.internal.execution.Settle;
import io.github.mongowriteguard.metrics.GuardEventListener;
import io.github.mongowriteguard.metrics.GuardObservationConvention;
import io.github.mongowriteguard.metrics.HeldStructure;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.retry.RetryPolicy;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.jspecify.annotations.Nullable;

/**
 * The entry point: configure a client through the driver's own settings builder, then guard its collections
 * ({@link #guardCollection}) or its client-level bulk write ({@link #guardClient}).
 *
 * <pre>{@code
 * WriteGuard guard = WriteGuard.create(WriteGuardSettings.defaults());
 * MongoClientSettings.Builder settings = MongoClientSettings.builder()
 *     .applyConnectionString(new ConnectionString(uri))
 *     .applyToSocketSettings(s -> s.readTimeout(30, TimeUnit.SECONDS));
 * MongoClient client = MongoClients.create(guard.configure(settings).build());
 * GuardedCollection<Document> inventory = guard.guardCollection(client, client.getDatabase("shop").getCollection("inventory"));
 * }</pre>
 *
 * <p>{@link #configure} registers the guard's connection-pool and server listeners and reads, once, what the guard needs from the
 * builder: the socket read timeout, below which every write's {@code maxTimeMS} is set (by default two thirds of
 * it: 20 s for 30 s), and whether the client uses Client-Side Operation Timeout. A client without a socket read
 * timeout (the driver's default) gets {@link WriteGuardSettings#getDefaultServerDeadline()} as the server deadline.
 * One guard may be configured on several builders; each client keeps what was read from its own builder, and a
 * client built without {@code configure} is refused by {@code guardCollection} and {@code guardClient}. Guarded
 * collections of one client, namespace, document class, codec registry and read/write concerns share one planner and
 * encoder.
 */
public final class WriteGuard {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(WriteGuard.class);

    private final WriteGuardSettings settings;
    private final ServerTracker servers = new ServerTracker();
    private final LiveCopyLedger copies;
    private final GuardRuntime runtime;
    private final List<GuardEventListener> runtimeListeners;
    private final CallObserver observer;
    /** What {@link #configure} read from each builder, one per client this guard may wrap. */
    private final ClientBindings bindings = new ClientBindings();
    /** Executors by collection identity, so that wrapping the same collection again costs no planner or encoder. */
    private final ExecutorCache executors = new ExecutorCache();

    private WriteGuard(Builder builder) {
        this.settings = builder.settings;
        this.copies =
                new LiveCopyLedger(new SettleHold(settings.getSettleHoldMaxCopies(), settings.getSettleHoldMaxAge()));
        List<GuardEventListener> listeners = new ArrayList<>(builder.listeners);
        if (builder.meterRegistry != null) {
            listeners.add(new MicrometerGuardMetrics(
                    (MeterRegistry) builder.meterRegistry,
                    copies,
                    settings.getCommonTags(),
                    builder.roundTripEstimateShards,
                    this::getHeldStructures));
        }
        this.runtimeListeners = List.copyOf(listeners);
        this.observer = builder.observationRegistry == null
                ? CallObserver.NONE
                : MicrometerCallObserver.create(builder.observationRegistry, builder.observationConvention);
        this.runtime = new GuardRuntime(runtimeSettings(settings), servers, copies, listeners, observer);
    }

    /**
     * A guard with {@link WriteGuardSettings#defaults()}, no meters, no observations and no listeners.
     *
     * @return a new guard; give it to {@link #configure} before building the client
     */
    public static WriteGuard create() {
        return builder().build();
    }

    /**
     * A guard with these settings, no meters, no observations and no listeners.
     *
     * @param settings the guard's settings
     * @return a new guard; give it to {@link #configure} before building the client
     */
    public static WriteGuard create(WriteGuardSettings settings) {
        return builder().settings(settings).build();
    }

    /**
     * A builder for a guard with settings, a Micrometer registry and event listeners.
     *
     * @return a builder starting from {@link WriteGuardSettings#defaults()}
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The settings this guard was built with.
     *
     * @return the guard's settings (immutable)
     */
    public WriteGuardSettings getSettings() {
        return settings;
    }

    /**
     * The live view of server copies of this guard's writes: which may still be running now.
     *
     * @return the ledger shared by every collection and client this guard wraps
     */
    public CopyLedger getCopies() {
        return copies;
    }

    /**
     * Settles the UNKNOWN writes of a guarded call's outcome: sends each command the guard holds for it again, the
     * same server copy (same session, {@code txnNumber}, statements and {@code _id}s), which the server answers from
     * its record of what that copy did, or runs once if it did not. Each {@link
     * io.github.mongowriteguard.outcome.IndexOutcome#settleable() settleable} write becomes APPLIED or FAILED, exactly
     * ({@code $inc} included); a write whose first copy still runs stays UNKNOWN and settleable (settle again later,
     * before {@link WriteOutcome#settleableUntil()}); one that cannot be settled says why in its message. A settle
     * never starts a new copy, so it cannot apply a write twice. Every other write keeps its outcome. It sends on the
     * held sessions, like any driver call on a {@code ClientSession}: settle one outcome from one thread at a time.
     *
     * <pre>{@code
     * WriteOutcome<Order> outcome = orders.execute(models, options);
     * if (outcome.hasUnknown()) outcome = guard.settle(outcome);
     * }</pre>
     *
     * @param outcome an outcome a guarded call (or an earlier settle) returned
     * @param <T>     the collection's document class
     * @return the outcome with what the settle proved; {@code outcome} itself when nothing is held for it
     * @throws IllegalArgumentException for an outcome the guard did not build
     */
    public <T> WriteOutcome<T> settle(WriteOutcome<T> outcome) {
        return Settle.settle(Objects.requireNonNull(outcome, "outcome"));
    }

    /**
     * What this guard holds in memory between calls, each structure with its size now and its bound (the gauges
     * {@code mongodb.guard.held} and {@code mongodb.guard.held.bound}): the copies it tracks, its executors per
     * collection, its rate-limited warnings per namespace, and the catalog facts and chunks that every guard of the JVM
     * shares ({@code catalog.*}). The worst case of each is in the README's "What the guard holds" section.
     *
     * @return a snapshot, one entry per structure, always the same structures in the same order
     */
    public List<HeldStructure> getHeldStructures() {
        List<HeldStructure> held = new ArrayList<>();
        held.add(new HeldStructure("copies.tracked", "copies", copies.trackedCount(), copies.maxTracked()));
        held.add(new HeldStructure("copies.held", "copies", copies.heldCount(), settings.getSettleHoldMaxCopies()));
        held.add(new HeldStructure("executors", "collections", executors.size(), ExecutorCache.MAX_CACHED_EXECUTORS));
        held.add(new HeldStructure(
                "warnings",
                "slots",
                runtime == null ? 0 : runtime.planWarnings().size(),
                PlanWarnings.MAX_SLOTS));
        held.addAll(ClusterCatalog.shared().held());
        return List.copyOf(held);
    }

    /**
     * The server deadline in effect for each client this guard configured, in the order {@link #configure} saw them:
     * the socket read timeout read there and the {@code maxTimeMS} its writes carry (or why the guard refuses them).
     *
     * @return one entry per configured client; empty before the first {@link #configure}
     */
    public List<ClientDeadline> getClientDeadlines() {
        List<ClientDeadline> deadlines = new ArrayList<>();
        for (ClientBinding binding : bindings.all()) {
            deadlines.add(ClientDeadline.resolve(
                    deadlines.size() + 1, binding.timeoutMs(), binding.readTimeoutMs(), settings));
        }
        return List.copyOf(deadlines);
    }

    /**
     * Registers the guard on the client's settings builder and reads from it, once, the socket read timeout and the
     * Client-Side Operation Timeout; call it after the socket settings are applied and before building the client
     * (later changes to the builder are not seen by the guard).
     *
     * @param builder the settings builder of the client to guard
     * @return the same builder
     */
    public MongoClientSettings.Builder configure(MongoClientSettings.Builder builder) {
        Objects.requireNonNull(builder, "builder");
        MongoClientSettings read = builder.build();
        // Pool and server listeners, added to the application's own: a command listener would make the driver build
        // an event and copy every reply of every command.
        if (!read.getConnectionPoolSettings().getConnectionPoolListeners().contains(servers)) {
            builder.applyToConnectionPoolSettings(pool -> pool.addConnectionPoolListener(servers));
        }
        if (!read.getServerSettings().getServerListeners().contains(servers)) {
            builder.applyToServerSettings(server -> server.addServerListener(servers));
        }
        bindings.register(builder, read);
        if (!read.getRetryWrites()) {
            // Once per builder configured: the guard is the driver, and the driver with retryWrites=false sends no
            // txnNumber and does not retry a write. Never the connection string (it may hold credentials).
            log.warn(
                    "mongo-write-guard: retryWrites=false in the client settings: writes carry no txnNumber and are not"
                            + " retried, as with the driver; a write whose reply is lost (network error, socket timeout)"
                            + " ends UNKNOWN, with no same-copy resend to learn its outcome. Remove retryWrites=false to"
                            + " let the guard resend the same copy, which the server runs at most once");
        }
        return builder;
    }

    /**
     * Guards a collection of a client built from a builder given to {@link #configure}.
     *
     * @param <T>        the collection's document class
     * @param client     the client the collection belongs to
     * @param collection the collection to guard; its codecs, read and write concerns are kept
     * @return the guarded collection
     * @throws IllegalStateException if the client was not built from a builder given to this guard's
     *                               {@link #configure}, or the settings do not fit the client's socket read timeout
     */
    public <T> GuardedCollection<T> guardCollection(MongoClient client, MongoCollection<T> collection) {
        return guardCollection(MongoAccess.of(client), collection);
    }

    /** What {@link #configure} read of the client whose cluster description this is (the reactive guard's entry). */
    ClientBinding bindingOf(com.mongodb.connection.ClusterDescription cluster) {
        return bindings.of(cluster);
    }

    /** The guard's runtime, shared by every collection it guards (the reactive guard's entry). */
    GuardRuntime runtime() {
        return runtime;
    }

    /**
     * Guards a collection whose sessions and database come from {@code access}. An {@code access} whose
     * {@link MongoAccess#client()} is null does not say its client: the guard must then have been configured on
     * exactly one client.
     *
     * @param <T>        the collection's document class
     * @param access     the explicit sessions and the database the guard sends the write commands through
     * @param collection the collection to guard; its codecs, read and write concerns are kept
     * @return the guarded collection
     * @throws IllegalStateException if {@link #configure} was not called (or, for an {@code access} that does not name
     *                               its client, was called on several builders), or the settings do not fit the
     *                               client's socket read timeout (the message says which and how to fix it)
     */
    public <T> GuardedCollection<T> guardCollection(MongoAccess access, MongoCollection<T> collection) {
        Objects.requireNonNull(access, "access");
        Objects.requireNonNull(collection, "collection");
        MongoClient named = access.client();
        ClientBinding binding = named != null ? bindings.of(named) : bindings.only();
        long deadlineMs = serverDeadlineMs(binding, collection);
        ExecutorCache.Executors<T> cached = executors.get(
                // an access of(client) (equal to another of the same client) shares its client's executors
                named != null && MongoAccess.of(named).equals(access) ? named : access, collection, deadlineMs, () -> {
                    AccessPort port = new AccessPort(access);
                    BulkExecutor<T> executor = new BulkExecutor<>(collection, port, runtime, deadlineMs, binding);
                    return new ExecutorCache.Executors<>(
                            executor, new FindAndModifyExecutor<>(executor, collection, port, runtime));
                });
        return new GuardedCollection<>(
                collection,
                cached.bulk(),
                cached.findAndModify(),
                new GuardedCollection.Rewrap() {
                    @Override
                    public <X> GuardedCollection<X> wrap(MongoCollection<X> changed) {
                        return WriteGuard.this.guardCollection(access, changed);
                    }

                    @Override
                    public <X> MongoCollection<X> view(MongoCollection<X> viewed, GuardedCollection<X> guarded) {
                        return new GuardedMongoCollection<>(viewed, guarded, this);
                    }
                },
                false);
    }

    /**
     * Guards a client for its client-level bulk write ({@code MongoClient.bulkWrite}, several namespaces in one call),
     * guarded as the collection-level {@code bulkWrite} of each namespace's writes; see {@link GuardedClient}.
     *
     * @param client a client built from a builder given to {@link #configure}
     * @return the guarded client
     * @throws IllegalStateException as {@link #guardCollection(MongoClient, MongoCollection)}
     */
    public GuardedClient guardClient(MongoClient client) {
        Objects.requireNonNull(client, "client");
        ClientPort access = ClientPort.of(client);
        GuardRuntime strictRuntime = new GuardRuntime(
                runtimeSettings(
                        WriteGuardSettings.builder(settings).strictOrdered(true).build()),
                servers,
                copies,
                runtimeListeners,
                observer);
        Map<MongoNamespace, BulkExecutor<BsonDocument>> perNamespace = new ConcurrentHashMap<>();
        Map<MongoNamespace, BulkExecutor<BsonDocument>> strictPerNamespace = new ConcurrentHashMap<>();
        ClientBinding binding = bindings.of(client);
        long deadlineMs =
                serverDeadlineMs(binding, client.getDatabase("admin").getCollection("admin", BsonDocument.class));
        ClientBulkExecutor executor = new ClientBulkExecutor(
                client.getCodecRegistry(),
                (namespace, strict) -> (strict ? strictPerNamespace : perNamespace)
                        .computeIfAbsent(
                                namespace,
                                ns -> new BulkExecutor<>(
                                        client.getDatabase(ns.getDatabaseName())
                                                .getCollection(ns.getCollectionName(), BsonDocument.class),
                                        access,
                                        strict ? strictRuntime : runtime,
                                        deadlineMs,
                                        binding)),
                settings.isStrictOrdered(),
                deadlineMs,
                observer);
        return new GuardedClient(client, executor);
    }

    /** What of {@code settings} the executors read. */
    private static GuardRuntime.Settings runtimeSettings(WriteGuardSettings settings) {
        return new GuardRuntime.Settings(
                settings.getRetryPolicy(),
                settings.getParallelShardCommands(),
                settings.isStrictOrdered(),
                settings.isLastWriteWins());
    }

    /** The server deadline of every write on {@code collection}, after checking that the guard can set it. */
    private long serverDeadlineMs(ClientBinding binding, MongoCollection<?> collection) {
        return serverDeadlineMs(binding, collection.getNamespace(), collection.getTimeout(TimeUnit.MILLISECONDS));
    }

    /** As above, for a collection of {@code namespace} whose Client-Side Operation Timeout is {@code collectionTimeout}. */
    long serverDeadlineMs(ClientBinding binding, MongoNamespace namespace, @Nullable Long collectionTimeout) {
        if (binding.timeoutMs() != null) {
            throw new IllegalStateException(
                    "the client uses Client-Side Operation Timeout (timeoutMS="
                            + binding.timeoutMs() + "): the driver then sets maxTimeMS itself; remove"
                            + " timeoutMS from the client settings and let the guard set the server deadline from the socket read timeout");
        }
        if (collectionTimeout != null) {
            throw new IllegalArgumentException("the collection " + namespace + " has a Client-Side Operation"
                    + " Timeout (timeoutMS=" + collectionTimeout
                    + ", from collection.withTimeout or database.withTimeout):"
                    + " the guard sets each write's server deadline (maxTimeMS) from the socket read timeout instead, and would"
                    + " not honour it; wrap the collection without withTimeout, and set serverDeadline in WriteGuardSettings"
                    + " to choose the deadline");
        }
        int readTimeoutMs = binding.readTimeoutMs();
        Duration deadline =
                settings.resolveServerDeadline(readTimeoutMs == 0 ? null : Duration.ofMillis(readTimeoutMs));
        return Math.max(1, deadline.toMillis());
    }

    @Override
    public String toString() {
        return "WriteGuard{" + settings + '}';
    }

    /**
     * The server deadline in effect for the writes of one client the guard {@link WriteGuard#configure configured}: what
     * the guard read from the client's settings and what it makes of it, for a health page or a startup log.
     *
     * <pre>{@code
     * guard.getClientDeadlines().forEach(d -> log.info("client {}: maxTimeMS {} ms ({})",
     *     d.client(), d.serverDeadline().toMillis(), d.source()));
     * }</pre>
     *
     * @param client            the client's number, in the order the guard configured them (from 1)
     * @param socketReadTimeout the client's socket read timeout, {@link Duration#ZERO} when it has none
     * @param serverDeadline    the {@code maxTimeMS} every write of the client carries; {@link Duration#ZERO} when the
     *                          guard refuses to write through the client ({@link #problem()} says why)
     * @param source            where the deadline comes from, the name of the setting that gave it:
     *                          {@code "serverDeadline"} (explicit), {@code "serverDeadlineFraction"} (that share of the
     *                          socket read timeout) or {@code "defaultServerDeadline"} (no socket read timeout)
     * @param problem           why the guard refuses every write of this client, or empty
     */
    public record ClientDeadline(
            int client, Duration socketReadTimeout, Duration serverDeadline, String source, String problem) {

        /**
         * Checks that no value is null.
         *
         * @param client            the client's number, from 1
         * @param socketReadTimeout the socket read timeout, zero for none
         * @param serverDeadline    the deadline, zero when refused
         * @param source            where the deadline comes from
         * @param problem           why the guard refuses the client's writes, or empty
         */
        public ClientDeadline {
            Objects.requireNonNull(socketReadTimeout, "socketReadTimeout");
            Objects.requireNonNull(serverDeadline, "serverDeadline");
            Objects.requireNonNull(source, "source");
            Objects.requireNonNull(problem, "problem");
        }

        /** The deadline a client with these timeouts gets under {@code settings}, or the guard's refusal. */
        static ClientDeadline resolve(
                int client, @Nullable Long timeoutMs, int readTimeoutMs, WriteGuardSettings settings) {
            Duration socket = Duration.ofMillis(readTimeoutMs);
            String source = settings.getServerDeadline().isPresent()
                    ? "serverDeadline"
                    : readTimeoutMs == 0 ? "defaultServerDeadline" : "serverDeadlineFraction";
            if (timeoutMs != null) {
                return new ClientDeadline(
                        client,
                        socket,
                        Duration.ZERO,
                        source,
                        "the client sets timeoutMS (" + timeoutMs + "); the guard refuses to write through it");
            }
            try {
                Duration deadline = settings.resolveServerDeadline(readTimeoutMs == 0 ? null : socket);
                return new ClientDeadline(client, socket, deadline, source, "");
            } catch (IllegalStateException | IllegalArgumentException refused) {
                return new ClientDeadline(client, socket, Duration.ZERO, source, refused.getMessage());
            }
        }

        /**
         * The longest one guarded call on this client can take before the guard gives up: every attempt until the socket
         * read timeout, every backoff at its longest, and the overlap gate's grace before each retry (server selection
         * while no server answers comes on top).
         *
         * @param policy the guard's retry policy
         * @return the worst case, or empty when the client has no socket read timeout (an attempt may wait forever)
         */
        public Optional<Duration> worstCasePerCall(RetryPolicy policy) {
            if (socketReadTimeout.isZero()) {
                return Optional.empty();
            }
            int attempts = policy.getMaxAttempts();
            return Optional.of(socketReadTimeout
                    .multipliedBy(attempts)
                    .plus(policy.getMaxTotalBackoff())
                    .plus(policy.getGateGrace().multipliedBy(attempts - 1L)));
        }
    }

    /** Builds a {@link WriteGuard}. */
    public static final class Builder {
        private WriteGuardSettings settings = WriteGuardSettings.defaults();
        private final List<GuardEventListener> listeners = new ArrayList<>();
        private @Nullable Object meterRegistry;
        private @Nullable Object observationRegistry;
        private @Nullable Object observationConvention;
        private int roundTripEstimateShards;

        private Builder() {}

        /**
         * Turns on the meter {@code mongodb.guard.roundtrips.avoided} (with {@link #meterRegistry}): an estimate of the
         * mongos-to-shard round trips the guard's plans save against the driver's ORDERED bulks, assuming a hashed
         * shard key over this many shards (the guard does not know how many shards a bulk's writes reach). Default 0:
         * no such meter.
         *
         * @param shards the number of shards the application's sharded collections are spread over; 0 or 1 for none
         * @return this builder
         * @throws IllegalArgumentException if {@code shards} is negative
         */
        public Builder roundTripEstimateShards(int shards) {
            if (shards < 0) {
                throw new IllegalArgumentException(
                        "roundTripEstimateShards (" + shards + ") must not be negative; 0 turns the estimate off");
            }
            this.roundTripEstimateShards = shards;
            return this;
        }

        /**
         * Sets the guard's settings (default {@link WriteGuardSettings#defaults()}).
         *
         * @param settings the settings
         * @return this builder
         */
        public Builder settings(WriteGuardSettings settings) {
            this.settings = Objects.requireNonNull(settings, "settings");
            return this;
        }

        /**
         * Records the guard's meters ({@code mongodb.guard.*}, listed in the project's docs/metrics.md) in this registry.
         * Without one the guard records nothing and needs no Micrometer on the class path.
         *
         * @param registry the application's meter registry
         * @return this builder
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

        /**
         * Adds a listener for the guard's events; one that throws is logged and never breaks a write.
         *
         * @param listener the listener, called in the order added
         * @return this builder
         */
        public Builder addListener(GuardEventListener listener) {
            listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        /**
         * Builds the guard.
         *
         * @return a new guard
         */
        public WriteGuard build() {
            return new WriteGuard(this);
        }
    }
}
