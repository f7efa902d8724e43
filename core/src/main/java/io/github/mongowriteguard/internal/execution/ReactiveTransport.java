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
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * The Reactive Streams driver as a {@link Transport}: the guard's commands, sessions and overlap-gate reads go through
 * the reactive client's publishers. The guard's loop runs on the guard's own threads, never a driver thread: a bulk's
 * send subscribes to the driver's {@code runCommand} publisher and the loop continues on the guard's scheduler when it
 * signals (no thread waits); sessions, catalog reads, the gate's commands and the sends of settle
 * are awaited on the calling guard thread. The driver's thread only completes a future. Everything else is the
 * synchronous guard's code. The only
 * class of the core that names the reactive driver, loaded only by the reactive guard. Not API.
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
     * @return the operations; call them on the guard's thread, never on a driver thread
     */
    public static <T> GuardedOperations<T> operations(
            MongoClient client,
            MongoCollection<T> collection,
            GuardRuntime runtime,
            long maxTimeMs,
            ClientBinding binding,
            boolean idempotentMultiRetries,
            Executor guardThreads) {
        MongoDatabase database = client.getDatabase(collection.getNamespace().getDatabaseName())
                .withCodecRegistry(collection.getCodecRegistry());
        MongoDatabase admin = client.getDatabase("admin");
        Transport transport = new Transport(
                channel(client, database),
                (copy, lastSendNanos, deadlineMs) -> runtime.gate()
                        .beforeRetry(
                                command ->
                                        await(admin.runCommand(command, ReadPreference.primary(), BsonDocument.class)),
                                copy,
                                lastSendNanos,
                                deadlineMs),
                options -> await(client.startSession(options)),
                catalog(client),
                guardThreads);
        BulkExecutor<T> bulk = new BulkExecutor<>(
                new Transport.Target<>(
                        collection.getNamespace(),
                        collection.getDocumentClass(),
                        collection.getCodecRegistry(),
                        collection.getWriteConcern()),
                transport,
                runtime,
                maxTimeMs,
                binding);
        return new GuardedOperations<>(bulk, new FindAndModifyExecutor<>(bulk, runtime), idempotentMultiRetries);
    }

    /** The catalog reads through the reactive client, awaited on the calling (guard) thread; cached by the client. */
    private static CatalogSource catalog(MongoClient client) {
        return new CatalogSource() {
            @Override
            public Object client() {
                return client;
            }

            @Override
            public BsonDocument runCommand(String database, BsonDocument command) {
                BsonDocument reply = await(
                        client.getDatabase(database).runCommand(command, ReadPreference.primary(), BsonDocument.class));
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
                List<BsonDocument> found = awaitAll(client.getDatabase(database)
                        .getCollection(collection, BsonDocument.class)
                        .withReadPreference(ReadPreference.primary())
                        .find(filter)
                        .sort(sort)
                        .projection(projection)
                        .batchSize(1_000)
                        .limit(limit)
                        .maxTime(maxTimeMs, java.util.concurrent.TimeUnit.MILLISECONDS));
                return found;
            }
        };
    }

    /**
     * {@code runCommand} on the reactive driver: awaited on the calling (guard) thread ({@code send}: settle,
     * side-by-side sends), or completed on the guard's scheduler from the driver's signal
     * ({@code sendAsync}: the send loop of bulks and find-and-modify, which holds no thread while the reply is pending). The driver's thread
     * only completes a future.
     */
    private static CommandChannel channel(MongoClient client, MongoDatabase database) {
        return new CommandChannel() {
            @Override
            public Answer send(com.mongodb.session.ClientSession session, BsonDocument command) {
                RawBsonDocument reply;
                try {
                    reply = await(runCommand(session, command));
                } catch (MongoException e) {
                    return answer(client, null, e);
                }
                return answer(client, reply, null);
            }

            @Override
            public CompletableFuture<Answer> sendAsync(
                    com.mongodb.session.ClientSession session, BsonDocument command, Executor then) {
                return first(runCommand(session, command))
                        .handleAsync((reply, error) -> answer(client, reply, error), then);
            }

            private Publisher<RawBsonDocument> runCommand(
                    com.mongodb.session.ClientSession session, BsonDocument command) {
                return database.runCommand(
                        (ClientSession) session, command, ReadPreference.primary(), RawBsonDocument.class);
            }
        };
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

    /** Every element of {@code publisher}, awaited on the calling thread as {@link #await}. */
    static <R> List<R> awaitAll(Publisher<R> publisher) {
        List<R> all = new java.util.ArrayList<>();
        CompletableFuture<List<R>> done = new CompletableFuture<>();
        publisher.subscribe(new Subscriber<R>() {
            @Override
            public void onSubscribe(Subscription subscription) {
                subscription.request(Long.MAX_VALUE);
            }

            @Override
            public void onNext(R item) {
                synchronized (all) {
                    all.add(item);
                }
            }

            @Override
            public void onError(Throwable error) {
                done.completeExceptionally(error);
            }

            @Override
            public void onComplete() {
                synchronized (all) {
                    done.complete(List.copyOf(all));
                }
            }
        });
        return join(done);
    }

    /**
     * Subscribes to {@code publisher} and waits on the calling thread for its first element (or its completion, then
     * null). Throws what the publisher signalled; an interrupt while waiting is the driver's
     * {@link MongoInterruptedException} (the command may have been sent: the sender says UNKNOWN), the flag kept.
     */
    static <R> @Nullable R await(Publisher<R> publisher) {
        return join(first(publisher));
    }

    /**
     * Subscribes to {@code publisher}; the future completes, on the thread the publisher signals on, with its first
     * element (or null at its completion) or what it signalled.
     */
    static <R> CompletableFuture<R> first(Publisher<R> publisher) {
        CompletableFuture<R> done = new CompletableFuture<>();
        publisher.subscribe(new Subscriber<R>() {
            @Override
            public void onSubscribe(Subscription subscription) {
                subscription.request(1);
            }

            @Override
            public void onNext(R item) {
                done.complete(item);
            }

            @Override
            public void onError(Throwable error) {
                done.completeExceptionally(error);
            }

            @Override
            public void onComplete() {
                done.complete(null);
            }
        });
        return done;
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
