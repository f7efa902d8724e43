package io.github.mongowriteguard;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.bson.BsonValue;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

import com.mongodb.MongoNamespace;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.DeleteOptions;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.InsertOneOptions;
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
import io.github.mongowriteguard.copies.CopyStillRunningException;
import io.github.mongowriteguard.deadline.WriteOutcomeUnknownException;
import io.github.mongowriteguard.internal.execution.BulkExecutor;
import io.github.mongowriteguard.outcome.WriteOutcome;

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
    private final MongoCollection<T> collection;
    private final BulkExecutor<T> executor;
    private final boolean idempotentMultiRetries;

    GuardedCollection(MongoCollection<T> collection, BulkExecutor<T> executor, boolean idempotentMultiRetries) {
        this.collection = collection;
        this.executor = executor;
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
        return new GuardedCollection<>(collection, executor, true);
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
     * @throws WriteOutcomeUnknownException   when nothing proves whether some write was applied (the client stopped
     *                                        waiting, or the server interrupted a command part-way)
     * @throws CopyStillRunningException      when a retry was refused because a copy still runs on the server
     * @throws com.mongodb.MongoCommandException when a whole command failed: the driver's own exception, as the
     *                                        driver throws it (later writes were not sent; {@link #execute} gives the
     *                                        complete outcome)
     */
    public BulkWriteResult bulkWrite(List<? extends WriteModel<? extends T>> models, BulkWriteOptions options) {
        WriteOutcome<T> outcome = executor.execute(models, options, "bulkWrite", idempotentMultiRetries);
        DriverExceptions.throwIfNotComplete(outcome, getNamespace(), executor.maxTimeMs());
        return outcome.toBulkWriteResult();
    }

    public InsertOneResult insertOne(T document) {
        return insertOne(document, new InsertOneOptions());
    }

    /** As {@link MongoCollection#insertOne(Object, InsertOneOptions)}: {@code bypassDocumentValidation} and {@code comment} are sent. */
    public InsertOneResult insertOne(T document, InsertOneOptions options) {
        WriteOutcome<T> outcome = single("insertOne", new InsertOneModel<>(document), new BulkWriteOptions()
            .bypassDocumentValidation(options.getBypassDocumentValidation()).comment(options.getComment()));
        BsonValue id = outcome.inserts().isEmpty() ? null : outcome.inserts().get(0).getId();
        return InsertOneResult.acknowledged(id);
    }

    public InsertManyResult insertMany(List<? extends T> documents) {
        return insertMany(documents, new InsertManyOptions());
    }

    /** As the driver's: an ordered or unordered bulk of inserts; write errors throw {@link GuardedBulkWriteException}. */
    public InsertManyResult insertMany(List<? extends T> documents, InsertManyOptions options) {
        if (documents == null) {
            throw new IllegalArgumentException("insertMany: the list of documents is null; nothing was sent");
        }
        List<InsertOneModel<T>> models = new ArrayList<>(documents.size());
        for (T document : documents) {
            models.add(new InsertOneModel<>(document));
        }
        WriteOutcome<T> outcome = executor.execute(models, new BulkWriteOptions().ordered(options.isOrdered())
            .bypassDocumentValidation(options.getBypassDocumentValidation()).comment(options.getComment()),
            "insertMany", idempotentMultiRetries);
        DriverExceptions.throwIfNotComplete(outcome, getNamespace(), executor.maxTimeMs());
        Map<Integer, BsonValue> ids = new HashMap<>();
        outcome.inserts().forEach(insert -> ids.put(insert.getIndex(), insert.getId()));
        return InsertManyResult.acknowledged(ids);
    }

    public UpdateResult replaceOne(Bson filter, T replacement) {
        return replaceOne(filter, replacement, new ReplaceOptions());
    }

    public UpdateResult replaceOne(Bson filter, T replacement, ReplaceOptions options) {
        return updateResult(single("replaceOne", new ReplaceOneModel<>(filter, replacement, options),
            commandOptions(options.getBypassDocumentValidation(), options.getComment(), options.getLet())));
    }

    public UpdateResult updateOne(Bson filter, Bson update) {
        return updateOne(filter, update, new UpdateOptions());
    }

    public UpdateResult updateOne(Bson filter, Bson update, UpdateOptions options) {
        return updateResult(single("updateOne", new UpdateOneModel<>(filter, update, options), commandOptions(options)));
    }

    public UpdateResult updateOne(Bson filter, List<? extends Bson> pipeline) {
        return updateOne(filter, pipeline, new UpdateOptions());
    }

    public UpdateResult updateOne(Bson filter, List<? extends Bson> pipeline, UpdateOptions options) {
        return updateResult(single("updateOne", new UpdateOneModel<>(filter, pipeline, options), commandOptions(options)));
    }

    /** Runs with the deadline and is never resent: after a timeout, an unknown number of documents may have changed. */
    public UpdateResult updateMany(Bson filter, Bson update) {
        return updateMany(filter, update, new UpdateOptions());
    }

    public UpdateResult updateMany(Bson filter, Bson update, UpdateOptions options) {
        return updateResult(single("updateMany", new UpdateManyModel<>(filter, update, options), commandOptions(options)));
    }

    public UpdateResult updateMany(Bson filter, List<? extends Bson> pipeline) {
        return updateMany(filter, pipeline, new UpdateOptions());
    }

    public UpdateResult updateMany(Bson filter, List<? extends Bson> pipeline, UpdateOptions options) {
        return updateResult(single("updateMany", new UpdateManyModel<>(filter, pipeline, options), commandOptions(options)));
    }

    public DeleteResult deleteOne(Bson filter) {
        return deleteOne(filter, new DeleteOptions());
    }

    public DeleteResult deleteOne(Bson filter, DeleteOptions options) {
        return DeleteResult.acknowledged(single("deleteOne", new DeleteOneModel<>(filter, options),
            commandOptions(null, options.getComment(), options.getLet())).deletedCount());
    }

    /** Runs with the deadline and is never resent: after a timeout, an unknown number of documents may be gone. */
    public DeleteResult deleteMany(Bson filter) {
        return deleteMany(filter, new DeleteOptions());
    }

    public DeleteResult deleteMany(Bson filter, DeleteOptions options) {
        return DeleteResult.acknowledged(single("deleteMany", new DeleteManyModel<>(filter, options),
            commandOptions(null, options.getComment(), options.getLet())).deletedCount());
    }

    private static BulkWriteOptions commandOptions(UpdateOptions options) {
        return commandOptions(options.getBypassDocumentValidation(), options.getComment(), options.getLet());
    }

    /** The options the driver's single-write methods send at command level. */
    private static BulkWriteOptions commandOptions(@Nullable Boolean bypassDocumentValidation, @Nullable BsonValue comment,
                                                   @Nullable Bson let) {
        return new BulkWriteOptions().bypassDocumentValidation(bypassDocumentValidation).comment(comment).let(let);
    }

    private static <T> UpdateResult updateResult(WriteOutcome<T> outcome) {
        BsonValue upserted = outcome.upserts().isEmpty() ? null : outcome.upserts().get(0).getId();
        return UpdateResult.acknowledged(outcome.matchedCount(), (long) outcome.modifiedCount(), upserted);
    }

    /** Runs one write and throws what the driver's single-document method would, typed where the guard knows more. */
    private WriteOutcome<T> single(String operation, WriteModel<T> model, BulkWriteOptions options) {
        WriteOutcome<T> outcome = executor.execute(List.of(model), options, operation, idempotentMultiRetries);
        DriverExceptions.throwIfNotApplied(outcome, getNamespace(), executor.maxTimeMs());
        return outcome;
    }

    @Override
    public String toString() {
        return "GuardedCollection{" + getNamespace() + ", maxTimeMS=" + executor.maxTimeMs() + '}';
    }
}
