package io.github.mongowriteguard;

import com.mongodb.MongoNamespace;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCollection;
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
import io.github.mongowriteguard.bulk.BulkPlan;
import io.github.mongowriteguard.copies.StatementIds;
import io.github.mongowriteguard.exception.CopyStillRunningException;
import io.github.mongowriteguard.exception.GuardedBulkWriteException;
import io.github.mongowriteguard.exception.WriteOutcomeUnknownException;
import io.github.mongowriteguard.internal.execution.BulkExecutor;
import io.github.mongowriteguard.internal.execution.FindAndModifyExecutor;
import io.github.mongowriteguard.internal.execution.GuardedOperations;
import io.github.mongowriteguard.internal.execution.Settle;
import io.github.mongowriteguard.outcome.WriteOutcome;
import java.util.List;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * A {@link MongoCollection}'s write methods, guarded: bulks run as few unordered rounds as the caller's meaning
 * allows, every write carries a server deadline below the socket timeout, inserts get their {@code _id} before the
 * first send, and every outcome is complete. Results and exceptions are the driver's types.
 *
 * <pre>{@code
 * GuardedCollection<Document> inventory = guard.guardCollection(client, client.getDatabase("shop").getCollection("inventory"));
 * BulkWriteResult result = inventory.bulkWrite(models, new BulkWriteOptions().ordered(true)); // 1 round, not ~800
 * WriteOutcome<Document> outcome = inventory.execute(models, new BulkWriteOptions()); // never throws for write errors
 * }</pre>
 *
 * @param <T> the collection's document class
 */
public final class GuardedCollection<T> {
    private final MongoCollection<T> collection;
    private final BulkExecutor<T> executor;
    private final FindAndModifyExecutor<T> findAndModify;
    private final GuardedOperations<T> operations;
    private final Rewrap rewrap;
    private final boolean idempotentMultiRetries;

    /** Guards another collection the way this one is guarded (same guard, same client): for the {@code withX} views. */
    interface Rewrap {
        <X> GuardedCollection<X> wrap(MongoCollection<X> collection);

        /** {@return {@code guarded} as the driver's interface over {@code collection}, its writes guarded} */
        <X> MongoCollection<X> view(MongoCollection<X> collection, GuardedCollection<X> guarded);
    }

    GuardedCollection(
            MongoCollection<T> collection,
            BulkExecutor<T> executor,
            FindAndModifyExecutor<T> findAndModify,
            Rewrap rewrap,
            boolean idempotentMultiRetries) {
        this.collection = collection;
        this.executor = executor;
        this.findAndModify = findAndModify;
        this.operations = new GuardedOperations<>(collection, executor, findAndModify, idempotentMultiRetries);
        this.rewrap = rewrap;
        this.idempotentMultiRetries = idempotentMultiRetries;
    }

    /**
     * A view whose multi-document updates are retried like single-document writes, for callers who know their updates
     * are idempotent. The guard checks it before sending: every {@code updateMany} may use only {@code $set},
     * {@code $unset}, {@code $min}, {@code $max}, {@code $addToSet}, {@code $pull}, {@code $setOnInsert} and
     * {@code $currentDate}; {@code deleteMany} is refused. Each retry of a multi-document write is a new server copy,
     * started only after the overlap gate found the previous one gone.
     *
     * @return a view of the same collection, guard and settings, with that retry policy
     */
    public GuardedCollection<T> withIdempotentMultiDocumentRetries() {
        return new GuardedCollection<>(collection, executor, findAndModify, rewrap, true);
    }

    /**
     * This guarded collection as the driver's {@link MongoCollection} interface: its writes go through the guard, every
     * other method to the collection as it is. For code that takes a {@code MongoCollection}.
     *
     * @return a {@code MongoCollection} view of this guarded collection
     */
    public MongoCollection<T> asMongoCollection() {
        return rewrap.view(collection, this);
    }

    /**
     * The collection behind the guard, for reads and anything the guard does not wrap.
     *
     * @return the driver's collection, unguarded
     */
    public MongoCollection<T> unwrap() {
        return collection;
    }

    /**
     * The collection's namespace.
     *
     * @return the database and collection name
     */
    public MongoNamespace getNamespace() {
        return collection.getNamespace();
    }

    /**
     * The {@code maxTimeMS} every write of this collection carries.
     *
     * @return the server deadline in milliseconds
     */
    public long serverDeadlineMillis() {
        return executor.maxTimeMs();
    }

    /**
     * The plan a bulk would run with, without running it: rounds, superseded writes and the reason for each decision.
     * Note that planning assigns missing {@code _id}s to the caller's insert documents.
     *
     * @param models  the caller's writes
     * @param options the bulk's options (ordered or not, ...)
     * @return the plan, with its reasons
     * @throws io.github.mongowriteguard.exception.InvalidBulkException for input the guard would refuse
     */
    public BulkPlan plan(List<? extends WriteModel<? extends T>> models, BulkWriteOptions options) {
        return executor.plan(models, options);
    }

    /**
     * Runs a bulk and returns its complete outcome; write errors, deadlines and unknown outcomes are in the outcome,
     * not thrown.
     *
     * @param models  the caller's writes
     * @param options the bulk's options
     * @return the outcome of every write
     * @throws io.github.mongowriteguard.exception.InvalidBulkException for bad input, before anything is sent
     */
    public WriteOutcome<T> execute(List<? extends WriteModel<? extends T>> models, BulkWriteOptions options) {
        return operations.execute(null, models, options);
    }

    /**
     * As {@link #execute(List, BulkWriteOptions)}, each write sent with the server identity the caller chose: the
     * logical session id, the transaction number and its statement id ({@link StatementIds}). A later call (in this
     * process or another, with another client) that sends a write again with the same identity is answered from the
     * server's statement record when that write already applied, and runs it once when it did not; a write the server
     * can no longer tell about ({@code TransactionTooOld}, {@code IncompleteTransactionHistory}) is UNKNOWN. Every
     * write must be one single-document statement, and the client must send {@code txnNumber}s (a replica set or a
     * sharded cluster, {@code retryWrites} on).
     *
     * @param models       the caller's writes
     * @param options      the bulk's options
     * @param statementIds one statement id per write, in the bulk's order, with the session id and transaction number
     * @return the outcome of every write
     * @throws io.github.mongowriteguard.exception.InvalidBulkException for bad input (another number of ids than
     *                                                                  writes, a multi-document write, a client without
     *                                                                  retryable writes), before anything is sent
     */
    public WriteOutcome<T> execute(
            List<? extends WriteModel<? extends T>> models, BulkWriteOptions options, StatementIds statementIds) {
        return operations.execute(models, options, java.util.Objects.requireNonNull(statementIds, "statementIds"));
    }

    /**
     * Settles the UNKNOWN writes of an outcome: the same server copies sent again, as
     * {@link WriteGuard#settle(WriteOutcome)} does. Any outcome the guard gave is accepted, whatever its document
     * class, so an exception's {@code outcome()} (a {@code WriteOutcome<?>}) is settled without a cast.
     *
     * @param outcome an outcome {@link #execute} (or a driver-style method's exception, or an earlier settle) gave
     * @param <X>     the outcome's document class
     * @return the outcome with each settleable UNKNOWN write APPLIED or FAILED, or still UNKNOWN with the reason
     * @throws IllegalArgumentException for an outcome the guard did not build
     */
    public <X> WriteOutcome<X> settle(WriteOutcome<X> outcome) {
        return Settle.settle(java.util.Objects.requireNonNull(outcome, "outcome"));
    }

    /**
     * As {@link #execute(List, BulkWriteOptions)}, on the caller's session (outside a transaction: the guard's
     * transaction numbers advance the session's own, so the caller's later driver calls on it go on).
     *
     * @param session the caller's session
     * @param models  the caller's writes
     * @param options the bulk's options
     * @return the outcome of every write
     * @throws IllegalStateException inside a multi-document transaction, whose statements the server does not let the
     *                               guard retry or time alone: use {@link #bulkWrite(ClientSession, List,
     * BulkWriteOptions)}
     */
    public WriteOutcome<T> execute(
            ClientSession session, List<? extends WriteModel<? extends T>> models, BulkWriteOptions options) {
        if (inTransaction(session)) {
            throw new IllegalStateException(
                    "execute() is not available inside a multi-document transaction: its writes"
                            + " belong to the transaction, which the server commits or aborts whole; use bulkWrite(session, ...)");
        }
        return operations.execute(session, models, options);
    }

    /**
     * {@link #bulkWrite(List, BulkWriteOptions)} with the driver's default options (ordered).
     *
     * @param models the caller's writes
     * @return the counts of what the server applied, as the driver's result
     * @throws GuardedBulkWriteException when writes failed; the other exceptions as {@link #bulkWrite(List,
     *   BulkWriteOptions)}
     */
    public BulkWriteResult bulkWrite(List<? extends WriteModel<? extends T>> models) {
        return bulkWrite(models, new BulkWriteOptions());
    }

    /**
     * As {@link MongoCollection#bulkWrite(List, BulkWriteOptions)}, guarded.
     *
     * @param models  the caller's writes
     * @param options the bulk's options (ordered, {@code bypassDocumentValidation}, {@code comment}, {@code let})
     * @return the counts of what the server applied, as the driver's result
     * @throws GuardedBulkWriteException      when writes failed or a write-concern error was reported (indices are the
     *                                        caller's); its {@code outcome()} has everything
     * @throws WriteOutcomeUnknownException   when nothing proves whether some write was applied (the client stopped
     *                                        waiting, or the server interrupted a command part-way)
     * @throws CopyStillRunningException      when a retry was refused because a copy still runs on the server
     * @throws com.mongodb.MongoCommandException when a whole command failed: the driver's own exception, as the
     *                                        driver throws it (later writes were not sent; {@link #execute} gives the
     *                                        complete outcome)
     */
    public BulkWriteResult bulkWrite(List<? extends WriteModel<? extends T>> models, BulkWriteOptions options) {
        return operations.bulkWrite(null, models, options);
    }

    /**
     * As {@link MongoCollection#bulkWrite(ClientSession, List)}: guarded on the caller's session; inside a
     * multi-document transaction, the driver's own call.
     *
     * @param session the caller's session
     * @param models  the caller's writes
     * @return the counts of what the server applied
     * @throws GuardedBulkWriteException when writes failed; the other exceptions as {@link #bulkWrite(List,
     *   BulkWriteOptions)}
     */
    public BulkWriteResult bulkWrite(ClientSession session, List<? extends WriteModel<? extends T>> models) {
        return bulkWrite(session, models, new BulkWriteOptions());
    }

    /**
     * As {@link MongoCollection#bulkWrite(ClientSession, List, BulkWriteOptions)}: guarded on the caller's session;
     * inside a multi-document transaction, the driver's own call.
     *
     * @param session the caller's session
     * @param models  the caller's writes
     * @param options the bulk's options
     * @return the counts of what the server applied
     * @throws GuardedBulkWriteException when writes failed; the other exceptions as {@link #bulkWrite(List,
     *   BulkWriteOptions)}
     */
    public BulkWriteResult bulkWrite(
            ClientSession session, List<? extends WriteModel<? extends T>> models, BulkWriteOptions options) {
        if (inTransaction(session)) {
            return collection.bulkWrite(session, models, options);
        }
        return operations.bulkWrite(session, models, options);
    }

    /**
     * As {@link MongoCollection#insertOne(Object)}, guarded; see {@link #insertOne(Object, InsertOneOptions)}.
     *
     * @param document the document; it gets an {@code _id} before the first send when it has none
     * @return the inserted {@code _id}
     */
    public InsertOneResult insertOne(T document) {
        return insertOne(document, new InsertOneOptions());
    }

    /**
     * As {@link MongoCollection#insertOne(Object, InsertOneOptions)}, guarded: the document gets its {@code _id} before
     * the first send, the insert carries the server deadline and a lost answer is resent as the same server copy, which
     * the server applies at most once. {@code bypassDocumentValidation} and {@code comment} are sent.
     *
     * @param document the document; it gets an {@code _id} before the first send when it has none
     * @param options  the driver's options
     * @return the inserted {@code _id}
     * @throws com.mongodb.MongoWriteException when the server refused the write: the driver's own exception
     * @throws com.mongodb.MongoWriteConcernException when the write applied but its write concern failed
     * @throws io.github.mongowriteguard.exception.ServerDeadlineExceededException when the server stopped the write at
     *                                        the guard's deadline (it was not applied)
     * @throws WriteOutcomeUnknownException   when nothing proves whether the write was applied
     * @throws CopyStillRunningException      when a retry was refused because a copy still runs on the server
     * @throws com.mongodb.MongoTimeoutException when no attempt reached a server (nothing was applied)
     */
    public InsertOneResult insertOne(T document, InsertOneOptions options) {
        return operations.insertOne(null, document, options);
    }

    /**
     * As {@link MongoCollection#insertOne(ClientSession, Object)}: guarded on the caller's session; inside a
     * multi-document transaction, the driver's own call.
     *
     * @param session  the caller's session
     * @param document the document
     * @return the inserted {@code _id}
     */
    public InsertOneResult insertOne(ClientSession session, T document) {
        return insertOne(session, document, new InsertOneOptions());
    }

    /**
     * As {@link MongoCollection#insertOne(ClientSession, Object, InsertOneOptions)}: guarded on the caller's session;
     * inside a multi-document transaction, the driver's own call.
     *
     * @param session  the caller's session
     * @param document the document
     * @param options  the driver's options
     * @return the inserted {@code _id}
     */
    public InsertOneResult insertOne(ClientSession session, T document, InsertOneOptions options) {
        if (inTransaction(session)) {
            return collection.insertOne(session, document, options);
        }
        return operations.insertOne(session, document, options);
    }

    /**
     * As {@link MongoCollection#insertMany(List)}, guarded: an ordered bulk of inserts; see
     * {@link #insertMany(List, InsertManyOptions)}.
     *
     * @param documents the documents; each gets an {@code _id} before the first send when it has none
     * @return the inserted {@code _id}s by index
     */
    public InsertManyResult insertMany(List<? extends T> documents) {
        return insertMany(documents, new InsertManyOptions());
    }

    /**
     * As {@link MongoCollection#insertMany(List, InsertManyOptions)}, guarded: an ordered or unordered bulk of inserts,
     * run as {@link #bulkWrite(List, BulkWriteOptions)} runs it; write errors throw {@link GuardedBulkWriteException}.
     *
     * @param documents the documents; each gets an {@code _id} before the first send when it has none
     * @param options   the driver's options (ordered, {@code bypassDocumentValidation}, {@code comment})
     * @return the inserted {@code _id}s by index
     * @throws IllegalArgumentException when {@code documents} is null, before anything is sent
     */
    public InsertManyResult insertMany(List<? extends T> documents, InsertManyOptions options) {
        return operations.insertMany(null, documents, options);
    }

    /**
     * As {@link MongoCollection#insertMany(ClientSession, List)}: guarded on the caller's session; inside a
     * multi-document transaction, the driver's own call.
     *
     * @param session   the caller's session
     * @param documents the documents
     * @return the inserted {@code _id}s by index
     */
    public InsertManyResult insertMany(ClientSession session, List<? extends T> documents) {
        return insertMany(session, documents, new InsertManyOptions());
    }

    /**
     * As {@link MongoCollection#insertMany(ClientSession, List, InsertManyOptions)}: guarded on the caller's session;
     * inside a multi-document transaction, the driver's own call.
     *
     * @param session   the caller's session
     * @param documents the documents
     * @param options   the driver's options
     * @return the inserted {@code _id}s by index
     */
    public InsertManyResult insertMany(ClientSession session, List<? extends T> documents, InsertManyOptions options) {
        if (inTransaction(session)) {
            return collection.insertMany(session, documents, options);
        }
        return operations.insertMany(session, documents, options);
    }

    /**
     * As {@link MongoCollection#replaceOne(Bson, Object)}, guarded; see
     * {@link #replaceOne(Bson, Object, ReplaceOptions)}.
     *
     * @param filter the query filter
     * @param replacement the new document
     * @return the matched and modified counts
     */
    public UpdateResult replaceOne(Bson filter, T replacement) {
        return replaceOne(filter, replacement, new ReplaceOptions());
    }

    /**
     * As {@link MongoCollection#replaceOne(Bson, Object, ReplaceOptions)}, guarded: it carries the server deadline, and
     * a lost answer is resent as the same server copy, which the server applies at most once.
     *
     * @param filter      the query filter
     * @param replacement the new document
     * @param options     the driver's options
     * @return the matched and modified counts, and the upserted {@code _id}
     * @throws com.mongodb.MongoWriteException when the server refused the write: the driver's own exception
     * @throws com.mongodb.MongoWriteConcernException when the write applied but its write concern failed
     * @throws io.github.mongowriteguard.exception.ServerDeadlineExceededException when the server stopped the write at
     *                                        the guard's deadline (it was not applied)
     * @throws WriteOutcomeUnknownException   when nothing proves whether the write was applied
     * @throws CopyStillRunningException      when a retry was refused because a copy still runs on the server
     * @throws com.mongodb.MongoTimeoutException when no attempt reached a server (nothing was applied)
     */
    public UpdateResult replaceOne(Bson filter, T replacement, ReplaceOptions options) {
        return operations.replaceOne(null, filter, replacement, options);
    }

    /**
     * As {@link MongoCollection#replaceOne(ClientSession, Bson, Object)}: guarded on the caller's session; inside a
     * multi-document transaction, the driver's own call.
     *
     * @param session the caller's session
     * @param filter the query filter
     * @param replacement the new document
     * @return the matched and modified counts
     */
    public UpdateResult replaceOne(ClientSession session, Bson filter, T replacement) {
        return replaceOne(session, filter, replacement, new ReplaceOptions());
    }

    /**
     * As {@link MongoCollection#replaceOne(ClientSession, Bson, Object, ReplaceOptions)}: guarded on the caller's
     * session; inside a multi-document transaction, the driver's own call.
     *
     * @param session the caller's session
     * @param filter the query filter
     * @param replacement the new document
     * @param options the driver's options
     * @return the matched and modified counts
     */
    public UpdateResult replaceOne(ClientSession session, Bson filter, T replacement, ReplaceOptions options) {
        if (inTransaction(session)) {
            return collection.replaceOne(session, filter, replacement, options);
        }
        return operations.replaceOne(session, filter, replacement, options);
    }

    /**
     * As {@link MongoCollection#updateOne(Bson, Bson)}, guarded; see {@link #updateOne(Bson, Bson, UpdateOptions)}.
     *
     * @param filter the query filter
     * @param update the update operators
     * @return the matched and modified counts, and the upserted {@code _id}
     */
    public UpdateResult updateOne(Bson filter, Bson update) {
        return updateOne(filter, update, new UpdateOptions());
    }

    /**
     * As {@link MongoCollection#updateOne(Bson, Bson, UpdateOptions)}, guarded: it carries the server deadline, and a
     * lost answer is resent as the same server copy, which the server applies at most once.
     *
     * @param filter the query filter
     * @param update the update operators
     * @param options the driver's options
     * @return the matched and modified counts, and the upserted {@code _id}
     * @throws com.mongodb.MongoWriteException when the server refused the write: the driver's own exception
     * @throws com.mongodb.MongoWriteConcernException when the write applied but its write concern failed
     * @throws io.github.mongowriteguard.exception.ServerDeadlineExceededException when the server stopped the write at
     *                                        the guard's deadline (it was not applied)
     * @throws WriteOutcomeUnknownException   when nothing proves whether the write was applied
     * @throws CopyStillRunningException      when a retry was refused because a copy still runs on the server
     * @throws com.mongodb.MongoTimeoutException when no attempt reached a server (nothing was applied)
     */
    public UpdateResult updateOne(Bson filter, Bson update, UpdateOptions options) {
        return operations.updateOne(null, filter, update, options);
    }

    /**
     * As {@link MongoCollection#updateOne(Bson, List)}, guarded; see {@link #updateOne(Bson, List, UpdateOptions)}.
     *
     * @param filter the query filter
     * @param pipeline the update pipeline
     * @return the matched and modified counts, and the upserted {@code _id}
     */
    public UpdateResult updateOne(Bson filter, List<? extends Bson> pipeline) {
        return updateOne(filter, pipeline, new UpdateOptions());
    }

    /**
     * As {@link MongoCollection#updateOne(Bson, List, UpdateOptions)}, guarded: it carries the server deadline, and a
     * lost answer is resent as the same server copy, which the server applies at most once.
     *
     * @param filter the query filter
     * @param pipeline the update pipeline
     * @param options the driver's options
     * @return the matched and modified counts, and the upserted {@code _id}
     * @throws com.mongodb.MongoWriteException when the server refused the write: the driver's own exception
     * @throws com.mongodb.MongoWriteConcernException when the write applied but its write concern failed
     * @throws io.github.mongowriteguard.exception.ServerDeadlineExceededException when the server stopped the write at
     *                                        the guard's deadline (it was not applied)
     * @throws WriteOutcomeUnknownException   when nothing proves whether the write was applied
     * @throws CopyStillRunningException      when a retry was refused because a copy still runs on the server
     * @throws com.mongodb.MongoTimeoutException when no attempt reached a server (nothing was applied)
     */
    public UpdateResult updateOne(Bson filter, List<? extends Bson> pipeline, UpdateOptions options) {
        return operations.updateOne(null, filter, pipeline, options);
    }

    /**
     * As {@link MongoCollection#updateOne(ClientSession, Bson, Bson)}: guarded on the caller's session; inside a
     * multi-document transaction, the driver's own call.
     *
     * @param session the caller's session
     * @param filter the query filter
     * @param update the update operators
     * @return the matched and modified counts, and the upserted {@code _id}
     */
    public UpdateResult updateOne(ClientSession session, Bson filter, Bson update) {
        return updateOne(session, filter, update, new UpdateOptions());
    }

    /**
     * As {@link MongoCollection#updateOne(ClientSession, Bson, Bson, UpdateOptions)}: guarded on the caller's session;
     * inside a multi-document transaction, the driver's own call.
     *
     * @param session the caller's session
     * @param filter the query filter
     * @param update the update operators
     * @param options the driver's options
     * @return the matched and modified counts, and the upserted {@code _id}
     */
    public UpdateResult updateOne(ClientSession session, Bson filter, Bson update, UpdateOptions options) {
        if (inTransaction(session)) {
            return collection.updateOne(session, filter, update, options);
        }
        return operations.updateOne(session, filter, update, options);
    }

    /**
     * As {@link MongoCollection#updateOne(ClientSession, Bson, List)}: guarded on the caller's session; inside a
     * multi-document transaction, the driver's own call.
     *
     * @param session the caller's session
     * @param filter the query filter
     * @param pipeline the update pipeline
     * @return the matched and modified counts, and the upserted {@code _id}
     */
    public UpdateResult updateOne(ClientSession session, Bson filter, List<? extends Bson> pipeline) {
        return updateOne(session, filter, pipeline, new UpdateOptions());
    }

    /**
     * As {@link MongoCollection#updateOne(ClientSession, Bson, List, UpdateOptions)}: guarded on the caller's session;
     * inside a multi-document transaction, the driver's own call.
     *
     * @param session the caller's session
     * @param filter the query filter
     * @param pipeline the update pipeline
     * @param options the driver's options
     * @return the matched and modified counts, and the upserted {@code _id}
     */
    public UpdateResult updateOne(
            ClientSession session, Bson filter, List<? extends Bson> pipeline, UpdateOptions options) {
        if (inTransaction(session)) {
            return collection.updateOne(session, filter, pipeline, options);
        }
        return operations.updateOne(session, filter, pipeline, options);
    }

    /**
     * As {@link MongoCollection#updateMany(Bson, Bson)}, guarded; see {@link #updateMany(Bson, Bson, UpdateOptions)}.
     *
     * @param filter the query filter
     * @param update the update operators
     * @return the matched and modified counts, and the upserted {@code _id}
     */
    public UpdateResult updateMany(Bson filter, Bson update) {
        return updateMany(filter, update, new UpdateOptions());
    }

    /**
     * As {@link MongoCollection#updateMany(Bson, Bson, UpdateOptions)}, guarded: it carries the server deadline and is
     * never resent (after a timeout, an unknown number of documents may have changed), unless this is a view from
     * {@link #withIdempotentMultiDocumentRetries()}. A filter that pins {@code _id} by equality matches at most one
     * document: such an update is sent as a single-document update and retried as the same copy (README, differences
     * table).
     *
     * @param filter the query filter
     * @param update the update operators
     * @param options the driver's options
     * @return the matched and modified counts, and the upserted {@code _id}
     * @throws com.mongodb.MongoWriteException when the server refused the write: the driver's own exception
     * @throws com.mongodb.MongoWriteConcernException when the write applied but its write concern failed
     * @throws io.github.mongowriteguard.exception.ServerDeadlineExceededException when the server stopped the write at
     *                                        the guard's deadline (it was not applied)
     * @throws WriteOutcomeUnknownException   when nothing proves whether the write was applied
     * @throws CopyStillRunningException      when a retry was refused because a copy still runs on the server
     * @throws com.mongodb.MongoTimeoutException when no attempt reached a server (nothing was applied)
     */
    public UpdateResult updateMany(Bson filter, Bson update, UpdateOptions options) {
        return operations.updateMany(null, filter, update, options);
    }

    /**
     * As {@link MongoCollection#updateMany(Bson, List)}, guarded; see {@link #updateMany(Bson, List, UpdateOptions)}.
     *
     * @param filter the query filter
     * @param pipeline the update pipeline
     * @return the matched and modified counts, and the upserted {@code _id}
     */
    public UpdateResult updateMany(Bson filter, List<? extends Bson> pipeline) {
        return updateMany(filter, pipeline, new UpdateOptions());
    }

    /**
     * As {@link MongoCollection#updateMany(Bson, List, UpdateOptions)}, guarded: it carries the server deadline and is
     * never resent (after a timeout, an unknown number of documents may have changed), unless this is a view from
     * {@link #withIdempotentMultiDocumentRetries()}.
     *
     * @param filter the query filter
     * @param pipeline the update pipeline
     * @param options the driver's options
     * @return the matched and modified counts, and the upserted {@code _id}
     * @throws com.mongodb.MongoWriteException when the server refused the write: the driver's own exception
     * @throws com.mongodb.MongoWriteConcernException when the write applied but its write concern failed
     * @throws io.github.mongowriteguard.exception.ServerDeadlineExceededException when the server stopped the write at
     *                                        the guard's deadline (it was not applied)
     * @throws WriteOutcomeUnknownException   when nothing proves whether the write was applied
     * @throws CopyStillRunningException      when a retry was refused because a copy still runs on the server
     * @throws com.mongodb.MongoTimeoutException when no attempt reached a server (nothing was applied)
     */
    public UpdateResult updateMany(Bson filter, List<? extends Bson> pipeline, UpdateOptions options) {
        return operations.updateMany(null, filter, pipeline, options);
    }

    /**
     * As {@link MongoCollection#updateMany(ClientSession, Bson, Bson)}: guarded on the caller's session; inside a
     * multi-document transaction, the driver's own call.
     *
     * @param session the caller's session
     * @param filter the query filter
     * @param update the update operators
     * @return the matched and modified counts, and the upserted {@code _id}
     */
    public UpdateResult updateMany(ClientSession session, Bson filter, Bson update) {
        return updateMany(session, filter, update, new UpdateOptions());
    }

    /**
     * As {@link MongoCollection#updateMany(ClientSession, Bson, Bson, UpdateOptions)}: guarded on the caller's session;
     * inside a multi-document transaction, the driver's own call.
     *
     * @param session the caller's session
     * @param filter the query filter
     * @param update the update operators
     * @param options the driver's options
     * @return the matched and modified counts, and the upserted {@code _id}
     */
    public UpdateResult updateMany(ClientSession session, Bson filter, Bson update, UpdateOptions options) {
        if (inTransaction(session)) {
            return collection.updateMany(session, filter, update, options);
        }
        return operations.updateMany(session, filter, update, options);
    }

    /**
     * As {@link MongoCollection#updateMany(ClientSession, Bson, List)}: guarded on the caller's session; inside a
     * multi-document transaction, the driver's own call.
     *
     * @param session the caller's session
     * @param filter the query filter
     * @param pipeline the update pipeline
     * @return the matched and modified counts, and the upserted {@code _id}
     */
    public UpdateResult updateMany(ClientSession session, Bson filter, List<? extends Bson> pipeline) {
        return updateMany(session, filter, pipeline, new UpdateOptions());
    }

    /**
     * As {@link MongoCollection#updateMany(ClientSession, Bson, List, UpdateOptions)}: guarded on the caller's session;
     * inside a multi-document transaction, the driver's own call.
     *
     * @param session the caller's session
     * @param filter the query filter
     * @param pipeline the update pipeline
     * @param options the driver's options
     * @return the matched and modified counts, and the upserted {@code _id}
     */
    public UpdateResult updateMany(
            ClientSession session, Bson filter, List<? extends Bson> pipeline, UpdateOptions options) {
        if (inTransaction(session)) {
            return collection.updateMany(session, filter, pipeline, options);
        }
        return operations.updateMany(session, filter, pipeline, options);
    }

    /**
     * As {@link MongoCollection#deleteOne(Bson)}, guarded; see {@link #deleteOne(Bson, DeleteOptions)}.
     *
     * @param filter the query filter
     * @return the deleted count
     */
    public DeleteResult deleteOne(Bson filter) {
        return deleteOne(filter, new DeleteOptions());
    }

    /**
     * As {@link MongoCollection#deleteOne(Bson, DeleteOptions)}, guarded: it carries the server deadline, and a lost
     * answer is resent as the same server copy, which the server applies at most once.
     *
     * @param filter the query filter
     * @param options the driver's options
     * @return the deleted count
     * @throws com.mongodb.MongoWriteException when the server refused the write: the driver's own exception
     * @throws com.mongodb.MongoWriteConcernException when the write applied but its write concern failed
     * @throws io.github.mongowriteguard.exception.ServerDeadlineExceededException when the server stopped the write at
     *                                        the guard's deadline (it was not applied)
     * @throws WriteOutcomeUnknownException   when nothing proves whether the write was applied
     * @throws CopyStillRunningException      when a retry was refused because a copy still runs on the server
     * @throws com.mongodb.MongoTimeoutException when no attempt reached a server (nothing was applied)
     */
    public DeleteResult deleteOne(Bson filter, DeleteOptions options) {
        return operations.deleteOne(null, filter, options);
    }

    /**
     * As {@link MongoCollection#deleteOne(ClientSession, Bson)}: guarded on the caller's session; inside a
     * multi-document transaction, the driver's own call.
     *
     * @param session the caller's session
     * @param filter the query filter
     * @return the deleted count
     */
    public DeleteResult deleteOne(ClientSession session, Bson filter) {
        return deleteOne(session, filter, new DeleteOptions());
    }

    /**
     * As {@link MongoCollection#deleteOne(ClientSession, Bson, DeleteOptions)}: guarded on the caller's session; inside
     * a multi-document transaction, the driver's own call.
     *
     * @param session the caller's session
     * @param filter the query filter
     * @param options the driver's options
     * @return the deleted count
     */
    public DeleteResult deleteOne(ClientSession session, Bson filter, DeleteOptions options) {
        if (inTransaction(session)) {
            return collection.deleteOne(session, filter, options);
        }
        return operations.deleteOne(session, filter, options);
    }

    /**
     * As {@link MongoCollection#deleteMany(Bson)}, guarded; see {@link #deleteMany(Bson, DeleteOptions)}.
     *
     * @param filter the query filter
     * @return the deleted count
     */
    public DeleteResult deleteMany(Bson filter) {
        return deleteMany(filter, new DeleteOptions());
    }

    /**
     * As {@link MongoCollection#deleteMany(Bson, DeleteOptions)}, guarded: it carries the server deadline and is never
     * resent (after a timeout, an unknown number of documents may be gone). A filter that pins {@code _id} by equality
     * matches at most one document: such a delete is sent with {@code limit: 1} and retried as the same copy (README,
     * differences table).
     *
     * @param filter the query filter
     * @param options the driver's options
     * @return the deleted count
     * @throws com.mongodb.MongoWriteException when the server refused the write: the driver's own exception
     * @throws com.mongodb.MongoWriteConcernException when the write applied but its write concern failed
     * @throws io.github.mongowriteguard.exception.ServerDeadlineExceededException when the server stopped the write at
     *                                        the guard's deadline (it was not applied)
     * @throws WriteOutcomeUnknownException   when nothing proves whether the write was applied
     * @throws CopyStillRunningException      when a retry was refused because a copy still runs on the server
     * @throws com.mongodb.MongoTimeoutException when no attempt reached a server (nothing was applied)
     */
    public DeleteResult deleteMany(Bson filter, DeleteOptions options) {
        return operations.deleteMany(null, filter, options);
    }

    /**
     * As {@link MongoCollection#deleteMany(ClientSession, Bson)}: guarded on the caller's session; inside a
     * multi-document transaction, the driver's own call.
     *
     * @param session the caller's session
     * @param filter the query filter
     * @return the deleted count
     */
    public DeleteResult deleteMany(ClientSession session, Bson filter) {
        return deleteMany(session, filter, new DeleteOptions());
    }

    /**
     * As {@link MongoCollection#deleteMany(ClientSession, Bson, DeleteOptions)}: guarded on the caller's session;
     * inside a multi-document transaction, the driver's own call.
     *
     * @param session the caller's session
     * @param filter the query filter
     * @param options the driver's options
     * @return the deleted count
     */
    public DeleteResult deleteMany(ClientSession session, Bson filter, DeleteOptions options) {
        if (inTransaction(session)) {
            return collection.deleteMany(session, filter, options);
        }
        return operations.deleteMany(session, filter, options);
    }

    /**
     * As {@link MongoCollection#findOneAndDelete(Bson)}, guarded: one {@code findAndModify} with the server deadline,
     * resent as the same server copy after a lost answer.
     *
     * @param filter the query filter
     * @return the deleted document, or null when none matched
     * @throws com.mongodb.MongoCommandException when the server refused it: the driver's own exception
     * @throws com.mongodb.MongoWriteConcernException when it applied but its write concern failed
     * @throws io.github.mongowriteguard.exception.ServerDeadlineExceededException when the server stopped it at the
     *                                        guard's deadline
     * @throws WriteOutcomeUnknownException   when nothing proves whether it was applied
     * @throws CopyStillRunningException      when a retry was refused because a copy still runs on the server
     * @throws com.mongodb.MongoTimeoutException when no attempt reached a server (nothing was applied)
     */
    public @Nullable T findOneAndDelete(Bson filter) {
        return findOneAndDelete(filter, new FindOneAndDeleteOptions());
    }

    /**
     * As {@link MongoCollection#findOneAndDelete(Bson, FindOneAndDeleteOptions)}, guarded. A {@code maxTime} above the
     * guard's server deadline is lowered to it.
     *
     * @param filter  the query filter
     * @param options the driver's options
     * @return the deleted document, or null when none matched
     */
    public @Nullable T findOneAndDelete(Bson filter, FindOneAndDeleteOptions options) {
        return operations.findOneAndDelete(null, filter, options);
    }

    /**
     * As {@link MongoCollection#findOneAndDelete(ClientSession, Bson)}: guarded on the caller's session; inside a
     * multi-document transaction, the driver's own call.
     *
     * @param session the caller's session
     * @param filter the query filter
     * @return the deleted document, or null when none matched
     */
    public @Nullable T findOneAndDelete(ClientSession session, Bson filter) {
        return findOneAndDelete(session, filter, new FindOneAndDeleteOptions());
    }

    /**
     * As {@link MongoCollection#findOneAndDelete(ClientSession, Bson, FindOneAndDeleteOptions)}: guarded on the
     * caller's session; inside a multi-document transaction, the driver's own call.
     *
     * @param session the caller's session
     * @param filter the query filter
     * @param options the driver's options
     * @return the deleted document, or null when none matched
     */
    public @Nullable T findOneAndDelete(ClientSession session, Bson filter, FindOneAndDeleteOptions options) {
        if (inTransaction(session)) {
            return collection.findOneAndDelete(session, filter, options);
        }
        return operations.findOneAndDelete(session, filter, options);
    }

    /**
     * As {@link MongoCollection#findOneAndReplace(Bson, Object)}, guarded; see
     * {@link #findOneAndReplace(Bson, Object, FindOneAndReplaceOptions)}.
     *
     * @param filter the query filter
     * @param replacement the new document
     * @return the document before the replacement, or null when none matched
     */
    public @Nullable T findOneAndReplace(Bson filter, T replacement) {
        return findOneAndReplace(filter, replacement, new FindOneAndReplaceOptions());
    }

    /**
     * As {@link MongoCollection#findOneAndReplace(Bson, Object, FindOneAndReplaceOptions)}, guarded as
     * {@link #findOneAndDelete(Bson)} is, and throws as it does.
     *
     * @param filter      the query filter
     * @param replacement the new document
     * @param options     the driver's options
     * @return the document before or after the replacement, as {@code returnDocument} asks, or null
     */
    public @Nullable T findOneAndReplace(Bson filter, T replacement, FindOneAndReplaceOptions options) {
        return operations.findOneAndReplace(null, filter, replacement, options);
    }

    /**
     * As {@link MongoCollection#findOneAndReplace(ClientSession, Bson, Object)}: guarded on the caller's session;
     * inside a multi-document transaction, the driver's own call.
     *
     * @param session the caller's session
     * @param filter the query filter
     * @param replacement the new document
     * @return the document before the replacement, or null when none matched
     */
    public @Nullable T findOneAndReplace(ClientSession session, Bson filter, T replacement) {
        return findOneAndReplace(session, filter, replacement, new FindOneAndReplaceOptions());
    }

    /**
     * As {@link MongoCollection#findOneAndReplace(ClientSession, Bson, Object, FindOneAndReplaceOptions)}: guarded on
     * the caller's session; inside a multi-document transaction, the driver's own call.
     *
     * @param session the caller's session
     * @param filter the query filter
     * @param replacement the new document
     * @param options the driver's options
     * @return the document before or after the replacement, as {@code returnDocument} asks, or null
     */
    public @Nullable T findOneAndReplace(
            ClientSession session, Bson filter, T replacement, FindOneAndReplaceOptions options) {
        if (inTransaction(session)) {
            return collection.findOneAndReplace(session, filter, replacement, options);
        }
        return operations.findOneAndReplace(session, filter, replacement, options);
    }

    /**
     * As {@link MongoCollection#findOneAndUpdate(Bson, Bson)}, guarded; see
     * {@link #findOneAndUpdate(Bson, Bson, FindOneAndUpdateOptions)}.
     *
     * @param filter the query filter
     * @param update the update operators
     * @return the document before the update, or null when none matched
     */
    public @Nullable T findOneAndUpdate(Bson filter, Bson update) {
        return findOneAndUpdate(filter, update, new FindOneAndUpdateOptions());
    }

    /**
     * As {@link MongoCollection#findOneAndUpdate(Bson, Bson, FindOneAndUpdateOptions)}, guarded as
     * {@link #findOneAndDelete(Bson)} is, and throws as it does.
     *
     * @param filter the query filter
     * @param update the update operators
     * @param options the driver's options
     * @return the document before or after the update, as {@code returnDocument} asks, or null
     */
    public @Nullable T findOneAndUpdate(Bson filter, Bson update, FindOneAndUpdateOptions options) {
        return operations.findOneAndUpdate(null, filter, update, options);
    }

    /**
     * As {@link MongoCollection#findOneAndUpdate(Bson, List)}, guarded; see
     * {@link #findOneAndUpdate(Bson, List, FindOneAndUpdateOptions)}.
     *
     * @param filter the query filter
     * @param pipeline the update pipeline
     * @return the document before the update, or null when none matched
     */
    public @Nullable T findOneAndUpdate(Bson filter, List<? extends Bson> pipeline) {
        return findOneAndUpdate(filter, pipeline, new FindOneAndUpdateOptions());
    }

    /**
     * As {@link MongoCollection#findOneAndUpdate(Bson, List, FindOneAndUpdateOptions)}, guarded as
     * {@link #findOneAndDelete(Bson)} is, and throws as it does.
     *
     * @param filter the query filter
     * @param pipeline the update pipeline
     * @param options the driver's options
     * @return the document before or after the update, as {@code returnDocument} asks, or null
     */
    public @Nullable T findOneAndUpdate(Bson filter, List<? extends Bson> pipeline, FindOneAndUpdateOptions options) {
        return operations.findOneAndUpdate(null, filter, pipeline, options);
    }

    /**
     * As {@link MongoCollection#findOneAndUpdate(ClientSession, Bson, Bson)}: guarded on the caller's session; inside a
     * multi-document transaction, the driver's own call.
     *
     * @param session the caller's session
     * @param filter the query filter
     * @param update the update operators
     * @return the document before the update, or null when none matched
     */
    public @Nullable T findOneAndUpdate(ClientSession session, Bson filter, Bson update) {
        return findOneAndUpdate(session, filter, update, new FindOneAndUpdateOptions());
    }

    /**
     * As {@link MongoCollection#findOneAndUpdate(ClientSession, Bson, Bson, FindOneAndUpdateOptions)}: guarded on the
     * caller's session; inside a multi-document transaction, the driver's own call.
     *
     * @param session the caller's session
     * @param filter the query filter
     * @param update the update operators
     * @param options the driver's options
     * @return the document before or after the update, as {@code returnDocument} asks, or null
     */
    public @Nullable T findOneAndUpdate(
            ClientSession session, Bson filter, Bson update, FindOneAndUpdateOptions options) {
        if (inTransaction(session)) {
            return collection.findOneAndUpdate(session, filter, update, options);
        }
        return operations.findOneAndUpdate(session, filter, update, options);
    }

    /**
     * As {@link MongoCollection#findOneAndUpdate(ClientSession, Bson, List)}: guarded on the caller's session; inside a
     * multi-document transaction, the driver's own call.
     *
     * @param session the caller's session
     * @param filter the query filter
     * @param pipeline the update pipeline
     * @return the document before the update, or null when none matched
     */
    public @Nullable T findOneAndUpdate(ClientSession session, Bson filter, List<? extends Bson> pipeline) {
        return findOneAndUpdate(session, filter, pipeline, new FindOneAndUpdateOptions());
    }

    /**
     * As {@link MongoCollection#findOneAndUpdate(ClientSession, Bson, List, FindOneAndUpdateOptions)}: guarded on the
     * caller's session; inside a multi-document transaction, the driver's own call.
     *
     * @param session the caller's session
     * @param filter the query filter
     * @param pipeline the update pipeline
     * @param options the driver's options
     * @return the document before or after the update, as {@code returnDocument} asks, or null
     */
    public @Nullable T findOneAndUpdate(
            ClientSession session, Bson filter, List<? extends Bson> pipeline, FindOneAndUpdateOptions options) {
        if (inTransaction(session)) {
            return collection.findOneAndUpdate(session, filter, pipeline, options);
        }
        return operations.findOneAndUpdate(session, filter, pipeline, options);
    }

    /**
     * Whether the caller's session is in a multi-document transaction: its writes then go to the driver as they are.
     * The server commits or aborts a transaction whole, allows no per-statement retry or write concern inside it, and
     * labels its own retries ({@code TransientTransactionError}, {@code UnknownTransactionCommitResult}).
     */
    private static boolean inTransaction(ClientSession session) {
        if (session == null) {
            throw new IllegalArgumentException("clientSession can not be null");
        }
        return session.hasActiveTransaction();
    }

    @Override
    public String toString() {
        return "GuardedCollection{" + getNamespace() + ", maxTimeMS=" + executor.maxTimeMs() + '}';
    }
}
