package io.github.mongowriteguard;

import com.mongodb.MongoNamespace;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.DeleteOptions;
import com.mongodb.client.model.FindOneAndDeleteOptions;
import com.mongodb.client.model.FindOneAndReplaceOptions;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.InsertOneOptions;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.WriteModel;
import com.mongodb.client.result.DeleteResult;
import com.mongodb.client.result.InsertManyResult;
import com.mongodb.client.result.InsertOneResult;
import com.mongodb.client.result.UpdateResult;
import com.mongodb.reactivestreams.client.ClientSession;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoCollection;
import io.github.mongowriteguard.internal.ClientBinding;
import io.github.mongowriteguard.internal.execution.GuardedOperations;
import io.github.mongowriteguard.internal.execution.ReactiveTransport;
import io.github.mongowriteguard.outcome.WriteOutcome;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

/**
 * A collection of the Reactive Streams driver whose writes go through the guard: the synchronous guard's planner,
 * encoder, send loop, outcome rules, copy ledger and settle, with the driver's publishers and result types. Get one
 * from {@link #of(WriteGuard, MongoClient, MongoCollection)}; reads stay the driver's ({@link #asMongoCollection()},
 * {@link #unwrap()}).
 *
 * <pre>{@code
 * WriteGuard guard = WriteGuard.create();
 * MongoClient client = MongoClients.create(guard.configure(MongoClientSettings.builder()
 *         .applyConnectionString(new ConnectionString(uri))).build());
 * GuardedReactiveCollection<Document> orders =
 *         GuardedReactiveCollection.of(guard, client, client.getDatabase("shop").getCollection("orders"));
 * Mono.from(orders.bulkWrite(models, new BulkWriteOptions().ordered(true))).subscribe(...);
 * }</pre>
 *
 * <p><b>Where the work runs.</b> Nothing happens until a subscriber subscribes. A call that cannot wait before its
 * first send (a single-document write; an unordered or one-write bulk without multi-document writes, once the driver
 * knows the cluster supports sessions) then starts on the subscriber's thread, as the driver's own call: it plans,
 * encodes and subscribes to the driver's {@code runCommand} publisher. Any other call starts on the guard's own
 * bounded scheduler ({@code mongo-write-guard-reactive-*}, daemon threads, at most {@code max(10 x} CPU cores, 100) of
 * them), where its planner may read the catalog. No thread is held while a reply or a retry backoff (a timer) is
 * pending. A reply that proves what its command did is finished on the driver's thread it came on (nothing there can
 * block), and the result is signalled there, as the driver signals; any other answer, a backoff's end, the overlap
 * gate and side-by-side key runs continue on the guard's scheduler, where settle and the overlap gate may wait.
 * The subscriber's Reactor {@code Context} goes with the call: every driver publisher the call
 * subscribes to (its commands and resends, sessions, catalog reads) is subscribed with it, so the driver's
 * {@code ReactiveContextProvider} and command events see it as for the driver's own call ({@link #settle}: the
 * settle's subscriber's).
 *
 * <p><b>Cancelling.</b> A cancelled subscription does not stop the call, and cannot unsend a command: the guard's
 * thread finishes the call as if nobody had cancelled (every command it sent may apply; each copy is recorded in the
 * guard's copy ledger, an UNKNOWN one held for {@code settle}, and the listeners and meters see the outcome); only the
 * subscriber is not told. To know what a call did, subscribe to {@link #execute} and do not cancel it.
 *
 * @param <T> the collection's document class
 */
public final class GuardedReactiveCollection<T> {
    private final MongoCollection<T> collection;
    private final ReactiveTransport.Operations<T> operations;
    private final Function<Boolean, GuardedReactiveCollection<T>> withRetries;
    private final Rewrap rewrap;

    /** The driver's write methods to this class's, for {@link #asMongoCollection()}. */
    static final GuardedReactiveCollectionView.Routes VIEW_ROUTES =
            GuardedReactiveCollectionView.Routes.to(GuardedReactiveCollection.class);

    /** Guards another collection (a {@code withX(...)} of this one) the way this one is guarded. */
    interface Rewrap {
        <X> GuardedReactiveCollection<X> wrap(MongoCollection<X> changed);
    }

    /**
     * Not API: {@link #of(WriteGuard, MongoClient, MongoCollection)} builds it.
     *
     * @param collection  the driver's collection
     * @param operations  its guarded operations, by the subscriber context a call carries to the driver
     * @param withRetries this collection with or without the idempotent multi-document retry opt-in
     * @param rewrap      guards a changed copy of the collection the same way
     */
    GuardedReactiveCollection(
            MongoCollection<T> collection,
            ReactiveTransport.Operations<T> operations,
            Function<Boolean, GuardedReactiveCollection<T>> withRetries,
            Rewrap rewrap) {
        this.collection = Objects.requireNonNull(collection, "collection");
        this.operations = Objects.requireNonNull(operations, "operations");
        this.withRetries = withRetries;
        this.rewrap = rewrap;
    }

    /**
     * Guards a collection of the Reactive Streams driver, of a client built from a builder given to
     * {@link WriteGuard#configure}: the same planner, send loop, outcome rules and copy ledger as
     * {@link WriteGuard#guardCollection(com.mongodb.client.MongoClient, com.mongodb.client.MongoCollection)}, with the
     * driver's publishers. It lives here, not on {@code WriteGuard}, so that an application without
     * {@code mongodb-driver-reactivestreams} and Reactor never meets their types on the guard it uses.
     *
     * @param <T>        the collection's document class
     * @param guard      the guard that configured the client's settings builder
     * @param client     the reactive client the collection belongs to
     * @param collection the collection to guard; its codecs and write concern are kept
     * @return the guarded collection
     * @throws IllegalStateException if the client was not built from a builder given to the guard's
     *                               {@link WriteGuard#configure}, or the settings do not fit the client's socket read
     *                               timeout
     */
    public static <T> GuardedReactiveCollection<T> of(
            WriteGuard guard, MongoClient client, MongoCollection<T> collection) {
        Objects.requireNonNull(guard, "guard");
        return of(guard, client, collection, false);
    }

    private static <T> GuardedReactiveCollection<T> of(
            WriteGuard guard, MongoClient client, MongoCollection<T> collection, boolean idempotentMultiRetries) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(collection, "collection");
        ClientBinding binding = guard.bindingOf(client.getClusterDescription());
        long deadlineMs = guard.serverDeadlineMs(
                binding, collection.getNamespace(), collection.getTimeout(TimeUnit.MILLISECONDS));
        return new GuardedReactiveCollection<>(
                collection,
                ReactiveTransport.operations(
                        client,
                        collection,
                        guard.runtime(),
                        deadlineMs,
                        binding,
                        idempotentMultiRetries,
                        ReactiveGuardThreads.EXECUTOR),
                retries -> of(guard, client, collection, retries),
                new Rewrap() {
                    @Override
                    public <X> GuardedReactiveCollection<X> wrap(MongoCollection<X> changed) {
                        return of(guard, client, changed, idempotentMultiRetries);
                    }
                });
    }

    /**
     * This collection, with the caller's opt-in to retry provably idempotent multi-document updates (as the
     * synchronous {@code GuardedCollection.withIdempotentMultiDocumentRetries()}).
     *
     * @return a guarded collection that retries them
     */
    public GuardedReactiveCollection<T> withIdempotentMultiDocumentRetries() {
        return withRetries.apply(true);
    }

    /** {@return the driver's collection, unguarded: its reads, and writes the caller chooses to send unguarded} */
    public MongoCollection<T> unwrap() {
        return collection;
    }

    /**
     * The driver's reactive {@code MongoCollection} interface over this guarded collection, for code that takes a
     * {@code MongoCollection}: its write methods are this collection's (guarded), everything else (reads, indexes,
     * aggregations, change streams) is the driver's; a {@code withX(...)} returns a view guarded the same way.
     *
     * @return the view
     */
    public MongoCollection<T> asMongoCollection() {
        return GuardedReactiveCollectionView.of(
                VIEW_ROUTES, this, collection, changed -> rewrap.wrap(changed).asMongoCollection());
    }

    /** {@return the collection's namespace} */
    public MongoNamespace getNamespace() {
        return collection.getNamespace();
    }

    /**
     * Runs a bulk and publishes its complete outcome: every write's status (APPLIED, FAILED, UNKNOWN with why, ...),
     * the copies sent and the round trips, as the synchronous {@code GuardedCollection.execute}. Write failures are in
     * the outcome, never signalled as errors; bad input is signalled before anything is sent.
     *
     * @param models  the caller's writes
     * @param options the bulk's options
     * @return a publisher of the outcome
     */
    public Publisher<WriteOutcome<T>> execute(
            List<? extends WriteModel<? extends T>> models, BulkWriteOptions options) {
        return onGuardThreadAsync(ops -> ops.executeAsync(null, models, options));
    }

    /**
     * As {@link #execute(List, BulkWriteOptions)}, on the caller's session (outside a transaction).
     *
     * @param session the caller's session
     * @param models  the caller's writes
     * @param options the bulk's options
     * @return a publisher of the outcome; an {@link IllegalStateException} inside a multi-document transaction
     */
    public Publisher<WriteOutcome<T>> execute(
            ClientSession session, List<? extends WriteModel<? extends T>> models, BulkWriteOptions options) {
        if (session.hasActiveTransaction()) {
            return Mono.error(new IllegalStateException(
                    "execute() is not available inside a multi-document transaction: its writes belong to the"
                            + " transaction, which the server commits or aborts whole; use bulkWrite(session, ...)"));
        }
        return onGuardThreadAsync(ops -> ops.executeAsync(session, models, options));
    }

    /**
     * Settles the UNKNOWN writes of an outcome: the same server copies sent again (never a new copy), as
     * {@code WriteGuard.settle} does. Any outcome the guard gave is accepted, whatever its document class, so an
     * exception's {@code outcome()} (a {@code WriteOutcome<?>}) is settled without a cast:
     * {@code Mono.from(collection.settle(e.outcome()))}.
     *
     * @param outcome an outcome {@link #execute} gave (or an error's, or an earlier settle's)
     * @param <X>     the outcome's document class
     * @return a publisher of the outcome with each settleable UNKNOWN write APPLIED or FAILED, or still UNKNOWN
     */
    public <X> Publisher<WriteOutcome<X>> settle(WriteOutcome<X> outcome) {
        Objects.requireNonNull(outcome, "outcome");
        return Mono.deferContextual(context -> Mono.fromFuture(
                CompletableFuture.supplyAsync(
                        () -> ReactiveTransport.settle(outcome, context), ReactiveGuardThreads.EXECUTOR),
                true));
    }

    /**
     * As the driver's {@link MongoCollection#bulkWrite(List)}, guarded.
     *
     * @param models the caller's writes
     * @return a publisher of one {@link BulkWriteResult}, or the error the synchronous guard throws (a {@code GuardedBulkWriteException} with the outcome, a {@code WriteOutcomeUnknownException}, ...)
     */
    public Publisher<BulkWriteResult> bulkWrite(List<? extends WriteModel<? extends T>> models) {
        return bulkWrite(models, new BulkWriteOptions());
    }

    /**
     * As the driver's {@link MongoCollection#bulkWrite(List, BulkWriteOptions)}, guarded.
     *
     * @param models the caller's writes
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of one {@link BulkWriteResult}, or the error the synchronous guard throws (a {@code GuardedBulkWriteException} with the outcome, a {@code WriteOutcomeUnknownException}, ...)
     */
    public Publisher<BulkWriteResult> bulkWrite(
            List<? extends WriteModel<? extends T>> models, BulkWriteOptions options) {
        return guardedAsync(
                ReactiveTransport.plansWithoutCatalog(models, options),
                null,
                () -> collection.bulkWrite(models, options),
                ops -> ops.bulkWriteAsync(null, models, options));
    }

    /**
     * As the driver's {@link MongoCollection#bulkWrite(com.mongodb.reactivestreams.client.ClientSession, List)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param models the caller's writes
     * @return a publisher of one {@link BulkWriteResult}, or the error the synchronous guard throws (a {@code GuardedBulkWriteException} with the outcome, a {@code WriteOutcomeUnknownException}, ...)
     */
    public Publisher<BulkWriteResult> bulkWrite(ClientSession session, List<? extends WriteModel<? extends T>> models) {
        return bulkWrite(session, models, new BulkWriteOptions());
    }

    /**
     * As the driver's {@link MongoCollection#bulkWrite(com.mongodb.reactivestreams.client.ClientSession, List, BulkWriteOptions)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param models the caller's writes
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of one {@link BulkWriteResult}, or the error the synchronous guard throws (a {@code GuardedBulkWriteException} with the outcome, a {@code WriteOutcomeUnknownException}, ...)
     */
    public Publisher<BulkWriteResult> bulkWrite(
            ClientSession session, List<? extends WriteModel<? extends T>> models, BulkWriteOptions options) {
        return guardedAsync(
                ReactiveTransport.plansWithoutCatalog(models, options),
                session,
                () -> collection.bulkWrite(session, models, options),
                ops -> ops.bulkWriteAsync(session, models, options));
    }

    /**
     * As the driver's {@link MongoCollection#insertOne(Object)}, guarded.
     *
     * @param document the document; it gets an {@code _id} before the first send when it has none
     * @return a publisher of one {@link InsertOneResult}, or the error the synchronous guard throws
     */
    public Publisher<InsertOneResult> insertOne(T document) {
        return insertOne(document, new InsertOneOptions());
    }

    /**
     * As the driver's {@link MongoCollection#insertOne(Object, InsertOneOptions)}, guarded.
     *
     * @param document the document; it gets an {@code _id} before the first send when it has none
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of one {@link InsertOneResult}, or the error the synchronous guard throws
     */
    public Publisher<InsertOneResult> insertOne(T document, InsertOneOptions options) {
        return guardedAsync(
                true,
                null,
                () -> collection.insertOne(document, options),
                ops -> ops.insertOneAsync(null, document, options));
    }

    /**
     * As the driver's {@link MongoCollection#insertOne(com.mongodb.reactivestreams.client.ClientSession, Object)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param document the document; it gets an {@code _id} before the first send when it has none
     * @return a publisher of one {@link InsertOneResult}, or the error the synchronous guard throws
     */
    public Publisher<InsertOneResult> insertOne(ClientSession session, T document) {
        return insertOne(session, document, new InsertOneOptions());
    }

    /**
     * As the driver's {@link MongoCollection#insertOne(com.mongodb.reactivestreams.client.ClientSession, Object, InsertOneOptions)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param document the document; it gets an {@code _id} before the first send when it has none
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of one {@link InsertOneResult}, or the error the synchronous guard throws
     */
    public Publisher<InsertOneResult> insertOne(ClientSession session, T document, InsertOneOptions options) {
        return guardedAsync(
                true,
                session,
                () -> collection.insertOne(session, document, options),
                ops -> ops.insertOneAsync(session, document, options));
    }

    /**
     * As the driver's {@link MongoCollection#insertMany(List)}, guarded.
     *
     * @param documents the documents; each gets an {@code _id} before the first send when it has none
     * @return a publisher of one {@link InsertManyResult}, or the error the synchronous guard throws
     */
    public Publisher<InsertManyResult> insertMany(List<? extends T> documents) {
        return insertMany(documents, new InsertManyOptions());
    }

    /**
     * As the driver's {@link MongoCollection#insertMany(List, InsertManyOptions)}, guarded.
     *
     * @param documents the documents; each gets an {@code _id} before the first send when it has none
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of one {@link InsertManyResult}, or the error the synchronous guard throws
     */
    public Publisher<InsertManyResult> insertMany(List<? extends T> documents, InsertManyOptions options) {
        return guardedAsync(
                ReactiveTransport.plansWithoutCatalog(documents, options),
                null,
                () -> collection.insertMany(documents, options),
                ops -> ops.insertManyAsync(null, documents, options));
    }

    /**
     * As the driver's {@link MongoCollection#insertMany(com.mongodb.reactivestreams.client.ClientSession, List)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param documents the documents; each gets an {@code _id} before the first send when it has none
     * @return a publisher of one {@link InsertManyResult}, or the error the synchronous guard throws
     */
    public Publisher<InsertManyResult> insertMany(ClientSession session, List<? extends T> documents) {
        return insertMany(session, documents, new InsertManyOptions());
    }

    /**
     * As the driver's {@link MongoCollection#insertMany(com.mongodb.reactivestreams.client.ClientSession, List, InsertManyOptions)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param documents the documents; each gets an {@code _id} before the first send when it has none
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of one {@link InsertManyResult}, or the error the synchronous guard throws
     */
    public Publisher<InsertManyResult> insertMany(
            ClientSession session, List<? extends T> documents, InsertManyOptions options) {
        return guardedAsync(
                ReactiveTransport.plansWithoutCatalog(documents, options),
                session,
                () -> collection.insertMany(session, documents, options),
                ops -> ops.insertManyAsync(session, documents, options));
    }

    /**
     * As the driver's {@link MongoCollection#deleteOne(Bson)}, guarded.
     *
     * @param filter the query filter
     * @return a publisher of one {@link DeleteResult}, or the error the synchronous guard throws
     */
    public Publisher<DeleteResult> deleteOne(Bson filter) {
        return deleteOne(filter, new DeleteOptions());
    }

    /**
     * As the driver's {@link MongoCollection#deleteOne(Bson, DeleteOptions)}, guarded.
     *
     * @param filter the query filter
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of one {@link DeleteResult}, or the error the synchronous guard throws
     */
    public Publisher<DeleteResult> deleteOne(Bson filter, DeleteOptions options) {
        return guardedAsync(
                true,
                null,
                () -> collection.deleteOne(filter, options),
                ops -> ops.deleteOneAsync(null, filter, options));
    }

    /**
     * As the driver's {@link MongoCollection#deleteOne(com.mongodb.reactivestreams.client.ClientSession, Bson)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param filter the query filter
     * @return a publisher of one {@link DeleteResult}, or the error the synchronous guard throws
     */
    public Publisher<DeleteResult> deleteOne(ClientSession session, Bson filter) {
        return deleteOne(session, filter, new DeleteOptions());
    }

    /**
     * As the driver's {@link MongoCollection#deleteOne(com.mongodb.reactivestreams.client.ClientSession, Bson, DeleteOptions)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param filter the query filter
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of one {@link DeleteResult}, or the error the synchronous guard throws
     */
    public Publisher<DeleteResult> deleteOne(ClientSession session, Bson filter, DeleteOptions options) {
        return guardedAsync(
                true,
                session,
                () -> collection.deleteOne(session, filter, options),
                ops -> ops.deleteOneAsync(session, filter, options));
    }

    /**
     * As the driver's {@link MongoCollection#deleteMany(Bson)}, guarded.
     *
     * @param filter the query filter
     * @return a publisher of one {@link DeleteResult}, or the error the synchronous guard throws
     */
    public Publisher<DeleteResult> deleteMany(Bson filter) {
        return deleteMany(filter, new DeleteOptions());
    }

    /**
     * As the driver's {@link MongoCollection#deleteMany(Bson, DeleteOptions)}, guarded.
     *
     * @param filter the query filter
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of one {@link DeleteResult}, or the error the synchronous guard throws
     */
    public Publisher<DeleteResult> deleteMany(Bson filter, DeleteOptions options) {
        return guardedAsync(
                false,
                null,
                () -> collection.deleteMany(filter, options),
                ops -> ops.deleteManyAsync(null, filter, options));
    }

    /**
     * As the driver's {@link MongoCollection#deleteMany(com.mongodb.reactivestreams.client.ClientSession, Bson)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param filter the query filter
     * @return a publisher of one {@link DeleteResult}, or the error the synchronous guard throws
     */
    public Publisher<DeleteResult> deleteMany(ClientSession session, Bson filter) {
        return deleteMany(session, filter, new DeleteOptions());
    }

    /**
     * As the driver's {@link MongoCollection#deleteMany(com.mongodb.reactivestreams.client.ClientSession, Bson, DeleteOptions)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param filter the query filter
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of one {@link DeleteResult}, or the error the synchronous guard throws
     */
    public Publisher<DeleteResult> deleteMany(ClientSession session, Bson filter, DeleteOptions options) {
        return guardedAsync(
                false,
                session,
                () -> collection.deleteMany(session, filter, options),
                ops -> ops.deleteManyAsync(session, filter, options));
    }

    /**
     * As the driver's {@link MongoCollection#replaceOne(Bson, Object)}, guarded.
     *
     * @param filter the query filter
     * @param replacement the replacement document
     * @return a publisher of one {@link UpdateResult}, or the error the synchronous guard throws
     */
    public Publisher<UpdateResult> replaceOne(Bson filter, T replacement) {
        return replaceOne(filter, replacement, new ReplaceOptions());
    }

    /**
     * As the driver's {@link MongoCollection#replaceOne(Bson, Object, ReplaceOptions)}, guarded.
     *
     * @param filter the query filter
     * @param replacement the replacement document
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of one {@link UpdateResult}, or the error the synchronous guard throws
     */
    public Publisher<UpdateResult> replaceOne(Bson filter, T replacement, ReplaceOptions options) {
        return guardedAsync(
                true,
                null,
                () -> collection.replaceOne(filter, replacement, options),
                ops -> ops.replaceOneAsync(null, filter, replacement, options));
    }

    /**
     * As the driver's {@link MongoCollection#replaceOne(com.mongodb.reactivestreams.client.ClientSession, Bson, Object)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param filter the query filter
     * @param replacement the replacement document
     * @return a publisher of one {@link UpdateResult}, or the error the synchronous guard throws
     */
    public Publisher<UpdateResult> replaceOne(ClientSession session, Bson filter, T replacement) {
        return replaceOne(session, filter, replacement, new ReplaceOptions());
    }

    /**
     * As the driver's {@link MongoCollection#replaceOne(com.mongodb.reactivestreams.client.ClientSession, Bson, Object, ReplaceOptions)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param filter the query filter
     * @param replacement the replacement document
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of one {@link UpdateResult}, or the error the synchronous guard throws
     */
    public Publisher<UpdateResult> replaceOne(
            ClientSession session, Bson filter, T replacement, ReplaceOptions options) {
        return guardedAsync(
                true,
                session,
                () -> collection.replaceOne(session, filter, replacement, options),
                ops -> ops.replaceOneAsync(session, filter, replacement, options));
    }

    /**
     * As the driver's {@link MongoCollection#updateOne(Bson, Bson)}, guarded.
     *
     * @param filter the query filter
     * @param update the update operators
     * @return a publisher of one {@link UpdateResult}, or the error the synchronous guard throws
     */
    public Publisher<UpdateResult> updateOne(Bson filter, Bson update) {
        return updateOne(filter, update, new UpdateOptions());
    }

    /**
     * As the driver's {@link MongoCollection#updateOne(Bson, Bson, UpdateOptions)}, guarded.
     *
     * @param filter the query filter
     * @param update the update operators
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of one {@link UpdateResult}, or the error the synchronous guard throws
     */
    public Publisher<UpdateResult> updateOne(Bson filter, Bson update, UpdateOptions options) {
        return guardedAsync(
                true,
                null,
                () -> collection.updateOne(filter, update, options),
                ops -> ops.updateOneAsync(null, filter, update, options));
    }

    /**
     * As the driver's {@link MongoCollection#updateOne(com.mongodb.reactivestreams.client.ClientSession, Bson, Bson)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param filter the query filter
     * @param update the update operators
     * @return a publisher of one {@link UpdateResult}, or the error the synchronous guard throws
     */
    public Publisher<UpdateResult> updateOne(ClientSession session, Bson filter, Bson update) {
        return updateOne(session, filter, update, new UpdateOptions());
    }

    /**
     * As the driver's {@link MongoCollection#updateOne(com.mongodb.reactivestreams.client.ClientSession, Bson, Bson, UpdateOptions)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param filter the query filter
     * @param update the update operators
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of one {@link UpdateResult}, or the error the synchronous guard throws
     */
    public Publisher<UpdateResult> updateOne(ClientSession session, Bson filter, Bson update, UpdateOptions options) {
        return guardedAsync(
                true,
                session,
                () -> collection.updateOne(session, filter, update, options),
                ops -> ops.updateOneAsync(session, filter, update, options));
    }

    /**
     * As the driver's {@link MongoCollection#updateOne(Bson, List)}, guarded.
     *
     * @param filter the query filter
     * @param pipeline the update pipeline
     * @return a publisher of one {@link UpdateResult}, or the error the synchronous guard throws
     */
    public Publisher<UpdateResult> updateOne(Bson filter, List<? extends Bson> pipeline) {
        return updateOne(filter, pipeline, new UpdateOptions());
    }

    /**
     * As the driver's {@link MongoCollection#updateOne(Bson, List, UpdateOptions)}, guarded.
     *
     * @param filter the query filter
     * @param pipeline the update pipeline
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of one {@link UpdateResult}, or the error the synchronous guard throws
     */
    public Publisher<UpdateResult> updateOne(Bson filter, List<? extends Bson> pipeline, UpdateOptions options) {
        return guardedAsync(
                true,
                null,
                () -> collection.updateOne(filter, pipeline, options),
                ops -> ops.updateOneAsync(null, filter, pipeline, options));
    }

    /**
     * As the driver's {@link MongoCollection#updateOne(com.mongodb.reactivestreams.client.ClientSession, Bson, List)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param filter the query filter
     * @param pipeline the update pipeline
     * @return a publisher of one {@link UpdateResult}, or the error the synchronous guard throws
     */
    public Publisher<UpdateResult> updateOne(ClientSession session, Bson filter, List<? extends Bson> pipeline) {
        return updateOne(session, filter, pipeline, new UpdateOptions());
    }

    /**
     * As the driver's {@link MongoCollection#updateOne(com.mongodb.reactivestreams.client.ClientSession, Bson, List, UpdateOptions)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param filter the query filter
     * @param pipeline the update pipeline
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of one {@link UpdateResult}, or the error the synchronous guard throws
     */
    public Publisher<UpdateResult> updateOne(
            ClientSession session, Bson filter, List<? extends Bson> pipeline, UpdateOptions options) {
        return guardedAsync(
                true,
                session,
                () -> collection.updateOne(session, filter, pipeline, options),
                ops -> ops.updateOneAsync(session, filter, pipeline, options));
    }

    /**
     * As the driver's {@link MongoCollection#updateMany(Bson, Bson)}, guarded.
     *
     * @param filter the query filter
     * @param update the update operators
     * @return a publisher of one {@link UpdateResult}, or the error the synchronous guard throws
     */
    public Publisher<UpdateResult> updateMany(Bson filter, Bson update) {
        return updateMany(filter, update, new UpdateOptions());
    }

    /**
     * As the driver's {@link MongoCollection#updateMany(Bson, Bson, UpdateOptions)}, guarded.
     *
     * @param filter the query filter
     * @param update the update operators
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of one {@link UpdateResult}, or the error the synchronous guard throws
     */
    public Publisher<UpdateResult> updateMany(Bson filter, Bson update, UpdateOptions options) {
        return guardedAsync(
                false,
                null,
                () -> collection.updateMany(filter, update, options),
                ops -> ops.updateManyAsync(null, filter, update, options));
    }

    /**
     * As the driver's {@link MongoCollection#updateMany(com.mongodb.reactivestreams.client.ClientSession, Bson, Bson)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param filter the query filter
     * @param update the update operators
     * @return a publisher of one {@link UpdateResult}, or the error the synchronous guard throws
     */
    public Publisher<UpdateResult> updateMany(ClientSession session, Bson filter, Bson update) {
        return updateMany(session, filter, update, new UpdateOptions());
    }

    /**
     * As the driver's {@link MongoCollection#updateMany(com.mongodb.reactivestreams.client.ClientSession, Bson, Bson, UpdateOptions)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param filter the query filter
     * @param update the update operators
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of one {@link UpdateResult}, or the error the synchronous guard throws
     */
    public Publisher<UpdateResult> updateMany(ClientSession session, Bson filter, Bson update, UpdateOptions options) {
        return guardedAsync(
                false,
                session,
                () -> collection.updateMany(session, filter, update, options),
                ops -> ops.updateManyAsync(session, filter, update, options));
    }

    /**
     * As the driver's {@link MongoCollection#updateMany(Bson, List)}, guarded.
     *
     * @param filter the query filter
     * @param pipeline the update pipeline
     * @return a publisher of one {@link UpdateResult}, or the error the synchronous guard throws
     */
    public Publisher<UpdateResult> updateMany(Bson filter, List<? extends Bson> pipeline) {
        return updateMany(filter, pipeline, new UpdateOptions());
    }

    /**
     * As the driver's {@link MongoCollection#updateMany(Bson, List, UpdateOptions)}, guarded.
     *
     * @param filter the query filter
     * @param pipeline the update pipeline
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of one {@link UpdateResult}, or the error the synchronous guard throws
     */
    public Publisher<UpdateResult> updateMany(Bson filter, List<? extends Bson> pipeline, UpdateOptions options) {
        return guardedAsync(
                false,
                null,
                () -> collection.updateMany(filter, pipeline, options),
                ops -> ops.updateManyAsync(null, filter, pipeline, options));
    }

    /**
     * As the driver's {@link MongoCollection#updateMany(com.mongodb.reactivestreams.client.ClientSession, Bson, List)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param filter the query filter
     * @param pipeline the update pipeline
     * @return a publisher of one {@link UpdateResult}, or the error the synchronous guard throws
     */
    public Publisher<UpdateResult> updateMany(ClientSession session, Bson filter, List<? extends Bson> pipeline) {
        return updateMany(session, filter, pipeline, new UpdateOptions());
    }

    /**
     * As the driver's {@link MongoCollection#updateMany(com.mongodb.reactivestreams.client.ClientSession, Bson, List, UpdateOptions)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param filter the query filter
     * @param pipeline the update pipeline
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of one {@link UpdateResult}, or the error the synchronous guard throws
     */
    public Publisher<UpdateResult> updateMany(
            ClientSession session, Bson filter, List<? extends Bson> pipeline, UpdateOptions options) {
        return guardedAsync(
                false,
                session,
                () -> collection.updateMany(session, filter, pipeline, options),
                ops -> ops.updateManyAsync(session, filter, pipeline, options));
    }

    /**
     * As the driver's {@link MongoCollection#findOneAndDelete(Bson)}, guarded.
     *
     * @param filter the query filter
     * @return a publisher of the document the server returned, or nothing
     */
    public Publisher<T> findOneAndDelete(Bson filter) {
        return findOneAndDelete(filter, new FindOneAndDeleteOptions());
    }

    /**
     * As the driver's {@link MongoCollection#findOneAndDelete(Bson, FindOneAndDeleteOptions)}, guarded.
     *
     * @param filter the query filter
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of the document the server returned, or nothing
     */
    public Publisher<T> findOneAndDelete(Bson filter, FindOneAndDeleteOptions options) {
        return guardedAsync(
                true,
                null,
                () -> collection.findOneAndDelete(filter, options),
                ops -> ops.findOneAndDeleteAsync(null, filter, options));
    }

    /**
     * As the driver's {@link MongoCollection#findOneAndDelete(com.mongodb.reactivestreams.client.ClientSession, Bson)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param filter the query filter
     * @return a publisher of the document the server returned, or nothing
     */
    public Publisher<T> findOneAndDelete(ClientSession session, Bson filter) {
        return findOneAndDelete(session, filter, new FindOneAndDeleteOptions());
    }

    /**
     * As the driver's {@link MongoCollection#findOneAndDelete(com.mongodb.reactivestreams.client.ClientSession, Bson, FindOneAndDeleteOptions)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param filter the query filter
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of the document the server returned, or nothing
     */
    public Publisher<T> findOneAndDelete(ClientSession session, Bson filter, FindOneAndDeleteOptions options) {
        return guardedAsync(
                true,
                session,
                () -> collection.findOneAndDelete(session, filter, options),
                ops -> ops.findOneAndDeleteAsync(session, filter, options));
    }

    /**
     * As the driver's {@link MongoCollection#findOneAndReplace(Bson, Object)}, guarded.
     *
     * @param filter the query filter
     * @param replacement the replacement document
     * @return a publisher of the document the server returned, or nothing
     */
    public Publisher<T> findOneAndReplace(Bson filter, T replacement) {
        return findOneAndReplace(filter, replacement, new FindOneAndReplaceOptions());
    }

    /**
     * As the driver's {@link MongoCollection#findOneAndReplace(Bson, Object, FindOneAndReplaceOptions)}, guarded.
     *
     * @param filter the query filter
     * @param replacement the replacement document
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of the document the server returned, or nothing
     */
    public Publisher<T> findOneAndReplace(Bson filter, T replacement, FindOneAndReplaceOptions options) {
        return guardedAsync(
                true,
                null,
                () -> collection.findOneAndReplace(filter, replacement, options),
                ops -> ops.findOneAndReplaceAsync(null, filter, replacement, options));
    }

    /**
     * As the driver's {@link MongoCollection#findOneAndReplace(com.mongodb.reactivestreams.client.ClientSession, Bson, Object)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param filter the query filter
     * @param replacement the replacement document
     * @return a publisher of the document the server returned, or nothing
     */
    public Publisher<T> findOneAndReplace(ClientSession session, Bson filter, T replacement) {
        return findOneAndReplace(session, filter, replacement, new FindOneAndReplaceOptions());
    }

    /**
     * As the driver's {@link MongoCollection#findOneAndReplace(com.mongodb.reactivestreams.client.ClientSession, Bson, Object, FindOneAndReplaceOptions)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param filter the query filter
     * @param replacement the replacement document
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of the document the server returned, or nothing
     */
    public Publisher<T> findOneAndReplace(
            ClientSession session, Bson filter, T replacement, FindOneAndReplaceOptions options) {
        return guardedAsync(
                true,
                session,
                () -> collection.findOneAndReplace(session, filter, replacement, options),
                ops -> ops.findOneAndReplaceAsync(session, filter, replacement, options));
    }

    /**
     * As the driver's {@link MongoCollection#findOneAndUpdate(Bson, Bson)}, guarded.
     *
     * @param filter the query filter
     * @param update the update operators
     * @return a publisher of the document the server returned, or nothing
     */
    public Publisher<T> findOneAndUpdate(Bson filter, Bson update) {
        return findOneAndUpdate(filter, update, new FindOneAndUpdateOptions());
    }

    /**
     * As the driver's {@link MongoCollection#findOneAndUpdate(Bson, Bson, FindOneAndUpdateOptions)}, guarded.
     *
     * @param filter the query filter
     * @param update the update operators
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of the document the server returned, or nothing
     */
    public Publisher<T> findOneAndUpdate(Bson filter, Bson update, FindOneAndUpdateOptions options) {
        return guardedAsync(
                true,
                null,
                () -> collection.findOneAndUpdate(filter, update, options),
                ops -> ops.findOneAndUpdateAsync(null, filter, update, options));
    }

    /**
     * As the driver's {@link MongoCollection#findOneAndUpdate(com.mongodb.reactivestreams.client.ClientSession, Bson, Bson)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param filter the query filter
     * @param update the update operators
     * @return a publisher of the document the server returned, or nothing
     */
    public Publisher<T> findOneAndUpdate(ClientSession session, Bson filter, Bson update) {
        return findOneAndUpdate(session, filter, update, new FindOneAndUpdateOptions());
    }

    /**
     * As the driver's {@link MongoCollection#findOneAndUpdate(com.mongodb.reactivestreams.client.ClientSession, Bson, Bson, FindOneAndUpdateOptions)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param filter the query filter
     * @param update the update operators
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of the document the server returned, or nothing
     */
    public Publisher<T> findOneAndUpdate(
            ClientSession session, Bson filter, Bson update, FindOneAndUpdateOptions options) {
        return guardedAsync(
                true,
                session,
                () -> collection.findOneAndUpdate(session, filter, update, options),
                ops -> ops.findOneAndUpdateAsync(session, filter, update, options));
    }

    /**
     * As the driver's {@link MongoCollection#findOneAndUpdate(Bson, List)}, guarded.
     *
     * @param filter the query filter
     * @param pipeline the update pipeline
     * @return a publisher of the document the server returned, or nothing
     */
    public Publisher<T> findOneAndUpdate(Bson filter, List<? extends Bson> pipeline) {
        return findOneAndUpdate(filter, pipeline, new FindOneAndUpdateOptions());
    }

    /**
     * As the driver's {@link MongoCollection#findOneAndUpdate(Bson, List, FindOneAndUpdateOptions)}, guarded.
     *
     * @param filter the query filter
     * @param pipeline the update pipeline
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of the document the server returned, or nothing
     */
    public Publisher<T> findOneAndUpdate(Bson filter, List<? extends Bson> pipeline, FindOneAndUpdateOptions options) {
        return guardedAsync(
                true,
                null,
                () -> collection.findOneAndUpdate(filter, pipeline, options),
                ops -> ops.findOneAndUpdateAsync(null, filter, pipeline, options));
    }

    /**
     * As the driver's {@link MongoCollection#findOneAndUpdate(com.mongodb.reactivestreams.client.ClientSession, Bson, List)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param filter the query filter
     * @param pipeline the update pipeline
     * @return a publisher of the document the server returned, or nothing
     */
    public Publisher<T> findOneAndUpdate(ClientSession session, Bson filter, List<? extends Bson> pipeline) {
        return findOneAndUpdate(session, filter, pipeline, new FindOneAndUpdateOptions());
    }

    /**
     * As the driver's {@link MongoCollection#findOneAndUpdate(com.mongodb.reactivestreams.client.ClientSession, Bson, List, FindOneAndUpdateOptions)}, guarded.
     *
     * @param session the caller's session; inside a multi-document transaction the driver's own call
     * @param filter the query filter
     * @param pipeline the update pipeline
     * @param options the driver's options, read as the driver reads them
     * @return a publisher of the document the server returned, or nothing
     */
    public Publisher<T> findOneAndUpdate(
            ClientSession session, Bson filter, List<? extends Bson> pipeline, FindOneAndUpdateOptions options) {
        return guardedAsync(
                true,
                session,
                () -> collection.findOneAndUpdate(session, filter, pipeline, options),
                ops -> ops.findOneAndUpdateAsync(session, filter, pipeline, options));
    }

    /**
     * The driver's own call inside a multi-document transaction (the guard neither retries nor times a transaction's
     * statements, as the synchronous guard); otherwise the guarded call ({@link #startAsync}).
     *
     * @param startsHere whether the call can plan without reading the catalog (a single-document write, a bulk that
     *                   is unordered or of one write, without multi-document writes)
     */
    private <R> Publisher<R> guardedAsync(
            boolean startsHere,
            @Nullable ClientSession session,
            Supplier<Publisher<R>> driver,
            Function<GuardedOperations<T>, CompletableFuture<R>> call) {
        if (session != null && session.hasActiveTransaction()) {
            return driver.get();
        }
        return startAsync(startsHere, session, call);
    }

    private <R> Publisher<R> onGuardThreadAsync(Function<GuardedOperations<T>, CompletableFuture<R>> call) {
        return startAsync(false, null, call);
    }

    /**
     * Starts {@code call} when subscribed, on the operations whose driver publishers carry the subscriber's context (as
     * the driver's own publisher hands its subscriber to its {@code ReactiveContextProvider}), and signals what it
     * completes with; a cancelled subscription leaves it running to its end (see the class comment). It starts on the
     * subscriber's thread, as the driver's call does, when nothing before its first send can wait: {@code startsHere}
     * and a session the driver hands out at once ({@link ReactiveTransport.Operations#sessionsWithoutWaiting});
     * otherwise on the guard's scheduler, where a catalog read or a session's server selection may wait.
     */
    private <R> Publisher<R> startAsync(
            boolean startsHere,
            @Nullable ClientSession session,
            Function<GuardedOperations<T>, CompletableFuture<R>> call) {
        return Mono.deferContextual(context -> {
            GuardedOperations<T> ops = operations.in(context);
            CompletableFuture<R> started;
            if (startsHere && operations.sessionsWithoutWaiting(session)) {
                try {
                    started = call.apply(ops);
                } catch (RuntimeException | Error e) {
                    started = CompletableFuture.failedFuture(e);
                }
            } else {
                started = CompletableFuture.supplyAsync(() -> call.apply(ops), ReactiveGuardThreads.EXECUTOR)
                        .thenCompose(Function.identity());
            }
            return Mono.fromFuture(started, true);
        });
    }

    @Override
    public String toString() {
        return "GuardedReactiveCollection{" + collection.getNamespace() + "}";
    }
}
