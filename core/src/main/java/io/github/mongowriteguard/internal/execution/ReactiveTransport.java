package io.github.mongowriteguard.internal.execution;

import com.mongodb.MongoException;
import com.mongodb.MongoInterruptedException;
import com.mongodb.MongoServerException;
import com.mongodb.ReadPreference;
import com.mongodb.ServerAddress;
import com.mongodb.connection.ClusterDescription;
import com.mongodb.connection.ClusterType;
import com.mongodb.connection.ServerDescription;
import com.mongodb.reactivestreams.client.ClientSession;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoCollection;
import com.mongodb.reactivestreams.client.MongoDatabase;
import io.github.mongowriteguard.internal.ClientBinding;
import io.github.mongowriteguard.internal.catalog.CatalogSource;
import io.github.mongowriteguard.outcome.WriteOutcome;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * The Reactive Streams driver as a {@link Transport}: the guard's commands, sessions and overlap-gate reads go through
 * the reactive client's publishers. A bulk's send subscribes to the driver's {@code runCommand} publisher and the loop
 * goes on when it signals (no thread waits): on the driver's thread for a reply that proves its outcome (nothing there
 * blocks), on the guard's scheduler for anything that may wait ({@code CopySender.Driving.mayBlock}); sessions, catalog
 * reads, the gate's commands and the sends of settle are awaited on a guard thread (or, for a call that starts on the
 * subscriber's thread, a session the driver hands out at once). Everything else is the synchronous guard's code.
 *
 * <p>Every driver publisher of a call is subscribed with the Reactor {@code Context} of the subscriber of the guarded
 * publisher that started the call (the write commands, their resends, sessions, catalog reads, the gate's commands,
 * side-by-side sends; for a settle, the settle's subscriber's): the driver hands that subscriber to its
 * {@code ReactiveContextProvider} ({@code OperationExecutorImpl.getContext}) and its request context to the command
 * events, as for a call of its own. The context is transport data: the shared loop carries a transport per call and
 * never names Reactor. The only class of the core that names the reactive driver, loaded only by the reactive guard.
 * Not API.
 */
public final class ReactiveTransport {
    private ReactiveTransport() {}

    /**
     * The guarded operations of a reactive collection, on the same planner, encoder, send loop and outcome rules as
     * the synchronous guard's.
     *
     * @param client                 the reactive client the collection belongs to
     * @param collection             the collection, with its codecs and write concern
     * @param runtime                the guard's runtime (ledger, gate, retry policy, listeners)
     * @param maxTimeMs              the server deadline of every command
     * @param binding                what {@code configure} read from the client's builder
     * @param idempotentMultiRetries the caller's opt-in to retry provably idempotent multi-document updates
     * @param guardThreads           the guard's scheduler: where a call continues after a reply or a backoff
     * @param <T>                    the document class
     * @return the operations, by the subscriber context each call carries to the driver
     */
    public static <T> Operations<T> operations(
            MongoClient client,
            MongoCollection<T> collection,
            GuardRuntime runtime,
            long maxTimeMs,
            ClientBinding binding,
            boolean idempotentMultiRetries,
            Resume guardThreads) {
        Wire wire = new Wire(
                client,
                client.getDatabase(collection.getNamespace().getDatabaseName())
                        .withCodecRegistry(collection.getCodecRegistry()),
                client.getDatabase("admin"),
                runtime,
                guardThreads);
        BulkExecutor<T> bulk = new BulkExecutor<>(
                new Transport.Target<>(
                        collection.getNamespace(),
                        collection.getDocumentClass(),
                        collection.getCodecRegistry(),
                        collection.getWriteConcern()),
                wire.transport(Context.empty()),
                runtime,
                maxTimeMs,
                binding);
        return new Operations<>(wire, bulk, runtime, idempotentMultiRetries);
    }

    /**
     * A reactive collection's guarded operations by subscriber context: the same planner and encoder for every call,
     * a transport per context. Not API.
     *
     * @param <T> the document class
     */
    public static final class Operations<T> {
        private final Wire wire;
        private final BulkExecutor<T> bulk;
        private final GuardRuntime runtime;
        private final boolean idempotentMultiRetries;
        /** The operations of a subscriber without a context (empty), made once. */
        private final GuardedOperations<T> plain;

        private Operations(Wire wire, BulkExecutor<T> bulk, GuardRuntime runtime, boolean idempotentMultiRetries) {
            this.wire = wire;
            this.bulk = bulk;
            this.runtime = runtime;
            this.idempotentMultiRetries = idempotentMultiRetries;
            this.plain = of(bulk);
        }

        /**
         * The operations of one call whose driver publishers are subscribed with {@code context}.
         *
         * @param context the guarded publisher's subscriber's context
         * @return the operations; call them on a guard thread, or where nothing before the first send can wait
         *     ({@link #sessionsWithoutWaiting}, {@link ReactiveTransport#plansWithoutCatalog})
         */
        public GuardedOperations<T> in(ContextView context) {
            return context.isEmpty() ? plain : of(bulk.over(wire.transport(context)));
        }

        /**
         * Whether a call's sessions come from the driver at once, without a server selection: the caller's own, or the
         * guard's when the cluster's description shows session support (the driver's {@code ClientSessionHelper}
         * then starts one synchronously; otherwise it selects a server first).
         *
         * @param callers the caller's session, or null
         */
        public boolean sessionsWithoutWaiting(com.mongodb.reactivestreams.client.@Nullable ClientSession callers) {
            if (callers != null) {
                return true;
            }
            ClusterDescription cluster = wire.client().getClusterDescription();
            return cluster.getLogicalSessionTimeoutMinutes() != null
                    || cluster.getConnectionMode() == com.mongodb.connection.ClusterConnectionMode.LOAD_BALANCED;
        }

        private GuardedOperations<T> of(BulkExecutor<T> executor) {
            return new GuardedOperations<>(
                    executor, new FindAndModifyExecutor<>(executor, runtime), idempotentMultiRetries);
        }
    }

    /**
     * Whether a bulk is planned without reading the catalog: no multi-document write (whose single-document rule reads
     * the collection's options) and not an ordered bulk of several writes (which reads where its keys live when it
     * repeats one). False for what the call refuses (null), which then fails where it would have.
     */
    public static boolean plansWithoutCatalog(
            @Nullable List<? extends com.mongodb.client.model.WriteModel<?>> models,
            com.mongodb.client.model.@Nullable BulkWriteOptions options) {
        return models != null
                && options != null
                && (!options.isOrdered() || models.size() <= 1)
                && !SingleDocumentRules.needed(models);
    }

    /** As {@link #plansWithoutCatalog(List, com.mongodb.client.model.BulkWriteOptions)}, for {@code insertMany}. */
    public static boolean plansWithoutCatalog(
            @Nullable List<?> documents, com.mongodb.client.model.@Nullable InsertManyOptions options) {
        return documents != null && options != null && (!options.isOrdered() || documents.size() <= 1);
    }

    /**
     * Settles an outcome as {@link Settle#settle(WriteOutcome)}, each held copy of a reactive call resent with
     * {@code context} (the settle's subscriber's), as the driver would send a command of the settle's own.
     *
     * @param outcome an outcome a guarded call gave
     * @param context the settle publisher's subscriber's context
     * @param <T>     the document class
     * @return the settled outcome
     */
    public static <T> WriteOutcome<T> settle(WriteOutcome<T> outcome, ContextView context) {
        return Settle.settle(
                outcome,
                sender -> sender.channel() instanceof Channel channel
                        ? sender.over(channel.wire.transport(context))
                        : sender);
    }

    /** What a reactive collection's transport is made of, whatever the subscriber context. */
    private record Wire(
            MongoClient client,
            MongoDatabase database,
            MongoDatabase admin,
            GuardRuntime runtime,
            Resume guardThreads) {

        /** The transport whose every driver publisher is subscribed with {@code context}. */
        Transport transport(ContextView context) {
            return new Transport(
                    new Channel(this, context),
                    (copy, lastSendNanos, deadlineMs) -> runtime.gate()
                            .beforeRetry(
                                    command -> await(
                                            admin.runCommand(command, ReadPreference.primary(), BsonDocument.class),
                                            context),
                                    copy,
                                    lastSendNanos,
                                    deadlineMs),
                    options -> await(client.startSession(options), context),
                    catalog(client, context),
                    guardThreads);
        }
    }

    /** The catalog reads through the reactive client, awaited on the calling (guard) thread; cached by the client. */
    private static CatalogSource catalog(MongoClient client, ContextView context) {
        return new CatalogSource() {
            @Override
            public Object client() {
                return client;
            }

            @Override
            public BsonDocument runCommand(String database, BsonDocument command) {
                BsonDocument reply = await(
                        client.getDatabase(database).runCommand(command, ReadPreference.primary(), BsonDocument.class),
                        context);
                if (reply == null) {
                    throw new MongoException("the driver's runCommand completed without a reply");
                }
                return reply;
            }

            @Override
            public List<BsonDocument> find(
                    String database,
                    String collection,
                    BsonDocument filter,
                    BsonDocument sort,
                    BsonDocument projection,
                    int limit,
                    long maxTimeMs) {
                return awaitAll(
                        client.getDatabase(database)
                                .getCollection(collection, BsonDocument.class)
                                .withReadPreference(ReadPreference.primary())
                                .find(filter)
                                .sort(sort)
                                .projection(projection)
                                .batchSize(1_000)
                                .limit(limit)
                                .maxTime(maxTimeMs, java.util.concurrent.TimeUnit.MILLISECONDS),
                        context);
            }
        };
    }

    /**
     * {@code runCommand} on the reactive driver, subscribed with the call's subscriber context: awaited on the calling
     * (guard) thread ({@code send}: settle, side-by-side sends), or completed on the driver's thread from its signal
     * ({@code sendAsync}: the send loop of bulks and find-and-modify, which holds no thread while the reply is pending
     * and hands anything that may wait to the guard's scheduler).
     */
    private record Channel(Wire wire, ContextView context) implements CommandChannel {
        @Override
        public Answer send(com.mongodb.session.ClientSession session, BsonDocument command) {
            RawBsonDocument reply;
            try {
                reply = await(runCommand(session, command), context);
            } catch (MongoException e) {
                return answer(wire.client, null, e);
            }
            return answer(wire.client, reply, null);
        }

        @Override
        public CompletableFuture<Answer> sendAsync(com.mongodb.session.ClientSession session, BsonDocument command) {
            return first(runCommand(session, command), context)
                    .handle((reply, error) -> answer(wire.client, reply, error));
        }

        private Publisher<RawBsonDocument> runCommand(com.mongodb.session.ClientSession session, BsonDocument command) {
            return wire.database.runCommand(
                    (ClientSession) session, command, ReadPreference.primary(), RawBsonDocument.class);
        }
    }

    /** The driver's reply or exception as an answer; anything but a {@link MongoException} is thrown as it is. */
    private static CommandChannel.Answer answer(
            MongoClient client, @Nullable RawBsonDocument reply, @Nullable Throwable error) {
        if (error != null) {
            if (Continuations.cause(error) instanceof MongoException e) {
                ServerAddress server = e instanceof MongoServerException serverError
                        ? serverError.getServerAddress()
                        : primary(client.getClusterDescription());
                return CommandChannel.Answer.error(e, server);
            }
            throw Continuations.rethrow(error);
        }
        if (reply == null) {
            return CommandChannel.Answer.error(
                    new MongoException("the driver's runCommand completed without a reply"), null);
        }
        return CommandChannel.Answer.reply(reply, primary(client.getClusterDescription()));
    }

    /**
     * The server a write goes to when the cluster has one writable server: the reactive driver does not say which
     * server answered a command on the thread that waits for it (the synchronous one's connection-pool events do).
     */
    private static @Nullable ServerAddress primary(ClusterDescription cluster) {
        List<ServerDescription> writable = cluster.getType() == ClusterType.UNKNOWN
                ? List.of()
                : cluster.getServerDescriptions().stream()
                        .filter(ServerDescription::isPrimary)
                        .toList();
        if (writable.size() == 1) {
            return writable.get(0).getAddress();
        }
        List<ServerDescription> routers = cluster.getServerDescriptions().stream()
                .filter(server -> server.getType() == com.mongodb.connection.ServerType.SHARD_ROUTER
                        || server.getType() == com.mongodb.connection.ServerType.STANDALONE)
                .toList();
        return routers.size() == 1 ? routers.get(0).getAddress() : null;
    }

    /**
     * Every element of {@code publisher}, subscribed with {@code context}, awaited on the calling thread as
     * {@link #await}.
     */
    static <R> List<R> awaitAll(Publisher<R> publisher, ContextView context) {
        return join(Flux.from(publisher).contextWrite(context).collectList().toFuture());
    }

    /**
     * Subscribes to {@code publisher} with {@code context} and waits on the calling thread for its first element (or
     * its completion, then null). Throws what the publisher signalled; an interrupt while waiting is the driver's
     * {@link MongoInterruptedException} (the command may have been sent: the sender says UNKNOWN), the flag kept.
     */
    static <R> @Nullable R await(Publisher<R> publisher, ContextView context) {
        return join(first(publisher, context));
    }

    /**
     * Subscribes to {@code publisher} with {@code context}: the subscriber the driver's publisher gets (and hands to
     * its {@code ReactiveContextProvider}) is a Reactor {@code CoreSubscriber} whose {@code currentContext()} is
     * {@code context}, as the subscriber of a Reactor chain with {@code contextWrite}. The future completes, on the
     * thread the publisher signals on, with its first element (or null at its completion) or what it signalled.
     */
    static <R> CompletableFuture<R> first(Publisher<R> publisher, ContextView context) {
        return Mono.from(publisher).contextWrite(context).toFuture();
    }

    /** Waits for {@code done}; what it failed with is thrown as the driver threw it. */
    private static <R> R join(CompletableFuture<R> done) {
        try {
            return done.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MongoInterruptedException("interrupted while waiting for the server's reply", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException runtime) {
                throw runtime;
            }
            if (cause instanceof Error error) {
                throw error;
            }
            throw new MongoException("the driver signalled " + cause, cause);
        }
    }
}
