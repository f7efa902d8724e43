package io.github.mongowriteguard;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.conversions.Bson;

import com.mongodb.MongoNamespace;
import com.mongodb.MongoTimeoutException;
import com.mongodb.MongoWriteException;
import com.mongodb.WriteError;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.bulk.WriteConcernError;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.WriteModel;
import com.mongodb.client.result.DeleteResult;
import com.mongodb.client.result.InsertManyResult;
import com.mongodb.client.result.InsertOneResult;
import com.mongodb.client.result.UpdateResult;

import io.github.mongowriteguard.bulk.BulkPlan;
import io.github.mongowriteguard.copies.CopyRecord;
import io.github.mongowriteguard.copies.CopyStillRunningException;
import io.github.mongowriteguard.deadline.ServerDeadlineExceededException;
import io.github.mongowriteguard.deadline.WriteOutcomeUnknownException;
import io.github.mongowriteguard.internal.GuardCommandListener;
import io.github.mongowriteguard.internal.execution.BulkExecutor;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;

/**
 * A {@link MongoCollection}'s write methods, guarded: bulks run as few unordered rounds as the caller's meaning
 * allows, every write carries a server deadline below the socket timeout, inserts get their {@code _id} before the
 * first send, and every outcome is complete. Results and exceptions are the driver's types.
 *
 * <pre>{@code
 * GuardedCollection<Document> inventory = guard.wrap(client, client.getDatabase("shop").getCollection("inventory"));
 * BulkWriteResult result = inventory.bulkWrite(models, new BulkWriteOptions().ordered(true)); // 1 round, not ~800
 * WriteOutcome<Document> outcome = inventory.execute(models, new BulkWriteOptions()); // never throws for write errors
 * }</pre>
 *
 * @param <T> the collection's document class
 */
public final class GuardedCollection<T> {
    private static final int MAX_TIME_MS_EXPIRED = 50;

    private final MongoCollection<T> collection;
    private final BulkExecutor<T> executor;
    private final GuardCommandListener listener;
    private final boolean idempotentMultiRetries;

    GuardedCollection(MongoCollection<T> collection, BulkExecutor<T> executor, GuardCommandListener listener,
                      boolean idempotentMultiRetries) {
        this.collection = collection;
        this.executor = executor;
        this.listener = listener;
        this.idempotentMultiRetries = idempotentMultiRetries;
    }

    /**
     * A view whose multi-document updates are retried like single-document writes, for callers who know their
     * updates are idempotent. The guard checks it before sending: every {@code updateMany} may use only
     * {@code $set}, {@code $unset}, {@code $min}, {@code $max}, {@code $addToSet}, {@code $pull}, {@code $setOnInsert}
     * and {@code $currentDate}; {@code deleteMany} is refused. Each retry of a multi-document write is a new server
     * copy, started only after the overlap gate found the previous one gone.
     */
    public GuardedCollection<T> withIdempotentMultiDocumentRetries() {
        return new GuardedCollection<>(collection, executor, listener, true);
    }

    /** The collection behind the guard, for reads and anything the guard does not wrap. */
    public MongoCollection<T> unwrap() {
        return collection;
    }

    public MongoNamespace getNamespace() {
        return collection.getNamespace();
    }

    /** The {@code maxTimeMS} every write of this collection carries. */
    public long serverDeadlineMillis() {
        return executor.maxTimeMs();
    }

    /**
     * The plan a bulk would run with, without running it: rounds, superseded writes and the reason for each
     * decision. Note that planning assigns missing {@code _id}s to the caller's insert documents.
     */
    public BulkPlan plan(List<? extends WriteModel<? extends T>> models, BulkWriteOptions options) {
        return executor.plan(models, options);
    }

    /**
     * Runs a bulk and returns its complete outcome; write errors, deadlines and unknown outcomes are in the
     * outcome, not thrown.
     *
     * @throws io.github.mongowriteguard.bulk.InvalidBulkException for bad input, before anything is sent
     */
    public WriteOutcome<T> execute(List<? extends WriteModel<? extends T>> models, BulkWriteOptions options) {
        return executor.execute(models, options, "bulkWrite", idempotentMultiRetries);
    }

    /** {@link #bulkWrite(List, BulkWriteOptions)} with the driver's default options (ordered). */
    public BulkWriteResult bulkWrite(List<? extends WriteModel<? extends T>> models) {
        return bulkWrite(models, new BulkWriteOptions());
    }

    /**
     * As {@link MongoCollection#bulkWrite(List, BulkWriteOptions)}, guarded.
     *
     * @throws GuardedBulkWriteException      when writes failed or a write-concern error was reported (indices are the
     *                                        caller's); its {@code outcome()} has everything
     * @throws WriteOutcomeUnknownException   when the client stopped waiting for some write: it may still be applied
     * @throws CopyStillRunningException      when a retry was refused because a copy still runs on the server
     */
    public BulkWriteResult bulkWrite(List<? extends WriteModel<? extends T>> models, BulkWriteOptions options) {
        WriteOutcome<T> outcome = executor.execute(models, options, "bulkWrite", idempotentMultiRetries);
        throwIfNotComplete(outcome);
        return outcome.toBulkWriteResult();
    }

    public InsertOneResult insertOne(T document) {
        WriteOutcome<T> outcome = single("insertOne", new InsertOneModel<>(document));
        BsonValue id = outcome.inserts().isEmpty() ? null : outcome.inserts().get(0).getId();
        return InsertOneResult.acknowledged(id);
    }

    public InsertManyResult insertMany(List<? extends T> documents) {
        return insertMany(documents, new InsertManyOptions());
    }

    public InsertManyResult insertMany(List<? extends T> documents, InsertManyOptions options) {
        if (documents == null) {
            throw new IllegalArgumentException("insertMany: the list of documents is null; nothing was sent");
        }
        List<InsertOneModel<T>> models = new ArrayList<>(documents.size());
        for (T document : documents) {
            models.add(new InsertOneModel<>(document));
        }
        WriteOutcome<T> outcome = executor.execute(models, new BulkWriteOptions().ordered(options.isOrdered())
            .bypassDocumentValidation(options.getBypassDocumentValidation()), "insertMany", idempotentMultiRetries);
        throwIfNotComplete(outcome);
        Map<Integer, BsonValue> ids = new HashMap<>();
        outcome.inserts().forEach(insert -> ids.put(insert.getIndex(), insert.getId()));
        return InsertManyResult.acknowledged(ids);
    }

    public UpdateResult replaceOne(Bson filter, T replacement) {
        return replaceOne(filter, replacement, new ReplaceOptions());
    }

    public UpdateResult replaceOne(Bson filter, T replacement, ReplaceOptions options) {
        return updateResult(single("replaceOne", new ReplaceOneModel<>(filter, replacement, options)));
    }

    public UpdateResult updateOne(Bson filter, Bson update) {
        return updateOne(filter, update, new UpdateOptions());
    }

    public UpdateResult updateOne(Bson filter, Bson update, UpdateOptions options) {
        return updateResult(single("updateOne", new UpdateOneModel<>(filter, update, options)));
    }

    public UpdateResult updateOne(Bson filter, List<? extends Bson> pipeline, UpdateOptions options) {
        return updateResult(single("updateOne", new UpdateOneModel<>(filter, pipeline, options)));
    }

    /** Runs with the deadline and is never resent: after a timeout, an unknown number of documents may have changed. */
    public UpdateResult updateMany(Bson filter, Bson update) {
        return updateMany(filter, update, new UpdateOptions());
    }

    public UpdateResult updateMany(Bson filter, Bson update, UpdateOptions options) {
        return updateResult(single("updateMany", new UpdateManyModel<>(filter, update, options)));
    }

    public DeleteResult deleteOne(Bson filter) {
        return DeleteResult.acknowledged(single("deleteOne", new DeleteOneModel<>(filter)).deletedCount());
    }

    /** Runs with the deadline and is never resent: after a timeout, an unknown number of documents may be gone. */
    public DeleteResult deleteMany(Bson filter) {
        return DeleteResult.acknowledged(single("deleteMany", new DeleteManyModel<>(filter)).deletedCount());
    }

    private static <T> UpdateResult updateResult(WriteOutcome<T> outcome) {
        BsonValue upserted = outcome.upserts().isEmpty() ? null : outcome.upserts().get(0).getId();
        return UpdateResult.acknowledged(outcome.matchedCount(), (long) outcome.modifiedCount(), upserted);
    }

    /** Runs one write and throws what the driver's single-document method would, typed where the guard knows more. */
    private WriteOutcome<T> single(String operation, WriteModel<T> model) {
        WriteOutcome<T> outcome = executor.execute(List.of(model), new BulkWriteOptions(), operation, idempotentMultiRetries);
        throwIfStillRunning(outcome);
        IndexOutcome result = outcome.outcome(0);
        if (result.status() == WriteStatus.UNKNOWN) {
            throw new WriteOutcomeUnknownException("outcome unknown for " + getNamespace() + ": " + result.message(), outcome, null);
        }
        if (result.status() == WriteStatus.FAILED) {
            throwIfNothingSent(outcome);
            if (result.errorCode() == MAX_TIME_MS_EXPIRED) {
                throw new ServerDeadlineExceededException("the server stopped this write on " + getNamespace()
                    + " at its deadline (maxTimeMS=" + executor.maxTimeMs() + "); it was not applied", outcome);
            }
            throw new MongoWriteException(new WriteError(result.errorCode(), result.message(), new BsonDocument()),
                listener.lastServer(), java.util.Set.of());
        }
        if (outcome.writeConcernError() != null) {
            throw new GuardedBulkWriteException(outcome, List.of(), writeConcernError(outcome.writeConcernError()), listener.lastServer());
        }
        return outcome;
    }

    private void throwIfStillRunning(WriteOutcome<T> outcome) {
        if (!outcome.stillRunning().isEmpty()) {
            CopyRecord copy = outcome.stillRunning().get(0);
            throw new CopyStillRunningException("not retried on " + getNamespace() + ": an earlier copy of this write is still"
                + " running on the server and ignores its deadline (" + copy + "); starting another copy could apply it twice."
                + " Dead-letter the write; the running copy may still apply it", copy, outcome);
        }
    }

    /**
     * When no write of the call reached a server, throws what the driver throws then: a {@link MongoTimeoutException}.
     * Nothing was applied, so the caller (Spring Kafka's error handler, for one) may send it all again.
     */
    private void throwIfNothingSent(WriteOutcome<T> outcome) {
        boolean anyNotSent = false;
        for (IndexOutcome result : outcome.outcomes()) {
            if (result.status() == WriteStatus.FAILED && !result.wasSent()) {
                anyNotSent = true;
            } else if (result.status() != WriteStatus.SKIPPED && result.status() != WriteStatus.SUPERSEDED) {
                return; // something was applied, failed on a server, or may still run: the outcome says what
            }
        }
        if (anyNotSent) {
            throw new MongoTimeoutException("none of the " + outcome.outcomes().size() + " writes on " + getNamespace()
                + " was sent: no attempt reached a server (none could be selected, or no connection was free, in time)."
                + " Nothing was applied; sending them again is safe");
        }
    }

    private void throwIfNotComplete(WriteOutcome<T> outcome) {
        throwIfStillRunning(outcome);
        if (outcome.hasUnknown()) {
            long unknown = outcome.counts().get(WriteStatus.UNKNOWN);
            throw new WriteOutcomeUnknownException(unknown + " of " + outcome.outcomes().size() + " writes on " + getNamespace()
                + " have an unknown outcome: the client stopped waiting and the server may still be applying them; see outcome()",
                outcome, null);
        }
        throwIfNothingSent(outcome);
        List<BulkWriteError> errors = new ArrayList<>();
        for (IndexOutcome result : outcome.outcomes()) {
            if (result.status() == WriteStatus.FAILED) {
                errors.add(new BulkWriteError(result.errorCode(), result.message(), new BsonDocument(), result.index()));
            }
        }
        WriteConcernError writeConcernError = outcome.writeConcernError() == null ? null : writeConcernError(outcome.writeConcernError());
        if (!errors.isEmpty() || writeConcernError != null) {
            throw new GuardedBulkWriteException(outcome, errors, writeConcernError, listener.lastServer());
        }
    }

    private static WriteConcernError writeConcernError(BsonDocument error) {
        return new WriteConcernError(error.get("code", new BsonInt32(64)).asNumber().intValue(),
            error.getString("codeName", new BsonString("")).getValue(),
            error.getString("errmsg", new BsonString("")).getValue(),
            error.getDocument("errInfo", new BsonDocument()));
    }

    @Override
    public String toString() {
        return "GuardedCollection{" + getNamespace() + ", maxTimeMS=" + executor.maxTimeMs() + '}';
    }
}
