package io.github.mongowriteguard.internal.execution;

import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.DeleteOptions;
import com.mongodb.client.model.FindOneAndDeleteOptions;
import com.mongodb.client.model.FindOneAndReplaceOptions;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.InsertOneOptions;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.WriteModel;
import com.mongodb.client.result.DeleteResult;
import com.mongodb.client.result.InsertManyResult;
import com.mongodb.client.result.InsertOneResult;
import com.mongodb.client.result.UpdateResult;
import com.mongodb.session.ClientSession;
import io.github.mongowriteguard.copies.StatementIds;
import io.github.mongowriteguard.outcome.WriteOutcome;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDocumentWrapper;
import org.bson.BsonValue;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * The guarded operations of one collection, one method per driver method family, as the driver keeps one factory per
 * method in driver-core {@code Operations}: each reads the driver's options for its method and turns them into the
 * guard's request, so "where is option Y read" has one answer. Every method runs outside a multi-document transaction
 * (the caller's {@code GuardedCollection} sends transactional writes to the driver as they are). Not API.
 *
 * @param <T> the collection's document class
 */
public final class GuardedOperations<T> {
    private final Class<T> documentClass;
    private final org.bson.codecs.configuration.CodecRegistry registry;
    private final BulkExecutor<T> executor;
    private final FindAndModifyExecutor<T> findAndModify;
    private final boolean idempotentMultiRetries;

    /**
     * @param idempotentMultiRetries the caller's opt-in to retry provably idempotent multi-document updates, carried by
     *                               every call
     */
    public GuardedOperations(
            MongoCollection<T> collection,
            BulkExecutor<T> executor,
            FindAndModifyExecutor<T> findAndModify,
            boolean idempotentMultiRetries) {
        this(executor, findAndModify, idempotentMultiRetries);
    }

    /** The operations of {@code executor}'s collection, whatever its driver. */
    public GuardedOperations(
            BulkExecutor<T> executor, FindAndModifyExecutor<T> findAndModify, boolean idempotentMultiRetries) {
        this.documentClass = executor.target().documentClass();
        this.registry = executor.target().registry();
        this.executor = executor;
        this.findAndModify = findAndModify;
        this.idempotentMultiRetries = idempotentMultiRetries;
    }

    // ---- bulkWrite and execute: the caller's BulkWriteOptions as they are ----
    // Each method is its ...Async twin waited for: over the synchronous driver the twin is complete on return; the
    // reactive guard subscribes to the twins, which hold no thread while a command's reply or a backoff is pending.

    /** A bulk whose outcome is returned whole, never thrown for write errors. */
    public WriteOutcome<T> execute(
            @Nullable ClientSession session, List<? extends WriteModel<? extends T>> models, BulkWriteOptions options) {
        return Continuations.now(executeAsync(session, models, options));
    }

    public CompletableFuture<WriteOutcome<T>> executeAsync(
            @Nullable ClientSession session, List<? extends WriteModel<? extends T>> models, BulkWriteOptions options) {
        return executor.executeAsync(call("bulkWrite", session, options, ThrowPolicy.OUTCOME_ONLY), models);
    }

    /** A bulk whose writes carry the caller's chosen server identity, on sessions of the guard's own. */
    public WriteOutcome<T> execute(
            List<? extends WriteModel<? extends T>> models, BulkWriteOptions options, StatementIds statementIds) {
        return executor.execute(
                call("bulkWrite", null, options, ThrowPolicy.OUTCOME_ONLY).statementIds(statementIds), models);
    }

    public BulkWriteResult bulkWrite(
            @Nullable ClientSession session, List<? extends WriteModel<? extends T>> models, BulkWriteOptions options) {
        return Continuations.now(bulkWriteAsync(session, models, options));
    }

    public CompletableFuture<BulkWriteResult> bulkWriteAsync(
            @Nullable ClientSession session, List<? extends WriteModel<? extends T>> models, BulkWriteOptions options) {
        DriverArgumentChecks.requireWrites("bulkWrite", models);
        return executor.executeAsync(call("bulkWrite", session, options, ThrowPolicy.BULK), models)
                .thenApply(WriteOutcome::toBulkWriteResult);
    }

    // ---- insertOne, insertMany ----

    public InsertOneResult insertOne(@Nullable ClientSession session, T document, InsertOneOptions options) {
        return Continuations.now(insertOneAsync(session, document, options));
    }

    public CompletableFuture<InsertOneResult> insertOneAsync(
            @Nullable ClientSession session, T document, InsertOneOptions options) {
        return single(
                        session,
                        "insertOne",
                        new InsertOneModel<>(document),
                        new BulkWriteOptions()
                                .bypassDocumentValidation(options.getBypassDocumentValidation())
                                .comment(options.getComment()))
                .thenApply(outcome -> {
                    BsonValue id = outcome.inserts().isEmpty()
                            ? null
                            : outcome.inserts().get(0).getId();
                    return InsertOneResult.acknowledged(id);
                });
    }

    public InsertManyResult insertMany(
            @Nullable ClientSession session, List<? extends T> documents, InsertManyOptions options) {
        return Continuations.now(insertManyAsync(session, documents, options));
    }

    public CompletableFuture<InsertManyResult> insertManyAsync(
            @Nullable ClientSession session, List<? extends T> documents, InsertManyOptions options) {
        if (documents == null) {
            throw new IllegalArgumentException("insertMany: the list of documents is null; nothing was sent");
        }
        DriverArgumentChecks.requireWrites("insertMany", documents);
        List<InsertOneModel<T>> models = new ArrayList<>(documents.size());
        for (T document : documents) {
            DriverArgumentChecks.requireDocument("insertMany", models.size(), document);
            models.add(new InsertOneModel<>(document));
        }
        BulkWriteOptions bulkOptions = new BulkWriteOptions()
                .ordered(options.isOrdered())
                .bypassDocumentValidation(options.getBypassDocumentValidation())
                .comment(options.getComment());
        return executor.executeAsync(call("insertMany", session, bulkOptions, ThrowPolicy.BULK), models)
                .thenApply(outcome -> {
                    Map<Integer, BsonValue> ids = new HashMap<>();
                    outcome.inserts().forEach(insert -> ids.put(insert.getIndex(), insert.getId()));
                    return InsertManyResult.acknowledged(ids);
                });
    }

    // ---- replaceOne, updateOne, updateMany: the model carries the per-statement options ----

    public UpdateResult replaceOne(
            @Nullable ClientSession session, Bson filter, T replacement, ReplaceOptions options) {
        return Continuations.now(replaceOneAsync(session, filter, replacement, options));
    }

    public CompletableFuture<UpdateResult> replaceOneAsync(
            @Nullable ClientSession session, Bson filter, T replacement, ReplaceOptions options) {
        return single(
                        session,
                        "replaceOne",
                        new ReplaceOneModel<>(filter, replacement, options),
                        commandOptions(options.getBypassDocumentValidation(), options.getComment(), options.getLet()))
                .thenApply(GuardedOperations::updateResult);
    }

    public UpdateResult updateOne(@Nullable ClientSession session, Bson filter, Bson update, UpdateOptions options) {
        return Continuations.now(updateOneAsync(session, filter, update, options));
    }

    public CompletableFuture<UpdateResult> updateOneAsync(
            @Nullable ClientSession session, Bson filter, Bson update, UpdateOptions options) {
        return update(session, "updateOne", new UpdateOneModel<>(filter, update, options), options);
    }

    public UpdateResult updateOne(
            @Nullable ClientSession session, Bson filter, List<? extends Bson> pipeline, UpdateOptions options) {
        return Continuations.now(updateOneAsync(session, filter, pipeline, options));
    }

    public CompletableFuture<UpdateResult> updateOneAsync(
            @Nullable ClientSession session, Bson filter, List<? extends Bson> pipeline, UpdateOptions options) {
        return update(session, "updateOne", new UpdateOneModel<>(filter, pipeline, options), options);
    }

    public UpdateResult updateMany(@Nullable ClientSession session, Bson filter, Bson update, UpdateOptions options) {
        return Continuations.now(updateManyAsync(session, filter, update, options));
    }

    public CompletableFuture<UpdateResult> updateManyAsync(
            @Nullable ClientSession session, Bson filter, Bson update, UpdateOptions options) {
        return update(session, "updateMany", new UpdateManyModel<>(filter, update, options), options);
    }

    public UpdateResult updateMany(
            @Nullable ClientSession session, Bson filter, List<? extends Bson> pipeline, UpdateOptions options) {
        return Continuations.now(updateManyAsync(session, filter, pipeline, options));
    }

    public CompletableFuture<UpdateResult> updateManyAsync(
            @Nullable ClientSession session, Bson filter, List<? extends Bson> pipeline, UpdateOptions options) {
        return update(session, "updateMany", new UpdateManyModel<>(filter, pipeline, options), options);
    }

    private CompletableFuture<UpdateResult> update(
            @Nullable ClientSession session, String operation, WriteModel<T> model, UpdateOptions options) {
        return single(
                        session,
                        operation,
                        model,
                        commandOptions(options.getBypassDocumentValidation(), options.getComment(), options.getLet()))
                .thenApply(GuardedOperations::updateResult);
    }

    private static <T> UpdateResult updateResult(WriteOutcome<T> outcome) {
        BsonValue upserted =
                outcome.upserts().isEmpty() ? null : outcome.upserts().get(0).getId();
        return UpdateResult.acknowledged(outcome.matchedCount(), (long) outcome.modifiedCount(), upserted);
    }

    // ---- deleteOne, deleteMany ----

    public DeleteResult deleteOne(@Nullable ClientSession session, Bson filter, DeleteOptions options) {
        return Continuations.now(deleteOneAsync(session, filter, options));
    }

    public CompletableFuture<DeleteResult> deleteOneAsync(
            @Nullable ClientSession session, Bson filter, DeleteOptions options) {
        return delete(session, "deleteOne", new DeleteOneModel<>(filter, options), options);
    }

    public DeleteResult deleteMany(@Nullable ClientSession session, Bson filter, DeleteOptions options) {
        return Continuations.now(deleteManyAsync(session, filter, options));
    }

    public CompletableFuture<DeleteResult> deleteManyAsync(
            @Nullable ClientSession session, Bson filter, DeleteOptions options) {
        return delete(session, "deleteMany", new DeleteManyModel<>(filter, options), options);
    }

    private CompletableFuture<DeleteResult> delete(
            @Nullable ClientSession session, String operation, WriteModel<T> model, DeleteOptions options) {
        return single(session, operation, model, commandOptions(null, options.getComment(), options.getLet()))
                .thenApply(outcome -> DeleteResult.acknowledged(outcome.deletedCount()));
    }

    // ---- what the single-write methods share ----

    /** The options the driver's single-write methods send at command level. */
    private static BulkWriteOptions commandOptions(
            @Nullable Boolean bypassDocumentValidation, @Nullable BsonValue comment, @Nullable Bson let) {
        return new BulkWriteOptions()
                .bypassDocumentValidation(bypassDocumentValidation)
                .comment(comment)
                .let(let);
    }

    /** Runs one write and throws what the driver's single-document method would, typed where the guard knows more. */
    private CompletableFuture<WriteOutcome<T>> single(
            @Nullable ClientSession session, String operation, WriteModel<T> model, BulkWriteOptions options) {
        return executor.executeAsync(call(operation, session, options, ThrowPolicy.SINGLE_WRITE), List.of(model));
    }

    /** The description of a guarded call on this collection, with its multi-document retry opt-in. */
    private GuardedCall call(
            String operation, @Nullable ClientSession session, BulkWriteOptions options, ThrowPolicy throwPolicy) {
        return new GuardedCall(operation, session, options, idempotentMultiRetries, false, throwPolicy, null);
    }

    // ---- findOneAndDelete, findOneAndReplace, findOneAndUpdate: one findAndModify command ----
    // Each reads its options once: the statement's options as the planner checks them (the model), the command's
    // fields in the driver's order (driver-core BaseFindAndModifyOperation and its subclasses).

    public @Nullable T findOneAndDelete(@Nullable ClientSession session, Bson filter, FindOneAndDeleteOptions options) {
        return Continuations.now(findOneAndDeleteAsync(session, filter, options));
    }

    public CompletableFuture<@Nullable T> findOneAndDeleteAsync(
            @Nullable ClientSession session, Bson filter, FindOneAndDeleteOptions options) {
        DeleteOptions model = new DeleteOptions()
                .collation(options.getCollation())
                .hint(options.getHint())
                .hintString(options.getHintString());
        return findAndModify.executeAsync(
                session,
                new FindAndModifyExecutor.Request<>(
                        "findOneAndDelete",
                        new DeleteOneModel<>(filter, model),
                        options.getProjection(),
                        options.getSort(),
                        options.getMaxTime(TimeUnit.MILLISECONDS),
                        new BsonDocument("remove", BsonBoolean.TRUE),
                        options.getCollation(),
                        options.getHint(),
                        options.getHintString(),
                        options.getComment(),
                        options.getLet()));
    }

    public @Nullable T findOneAndReplace(
            @Nullable ClientSession session, Bson filter, T replacement, FindOneAndReplaceOptions options) {
        return Continuations.now(findOneAndReplaceAsync(session, filter, replacement, options));
    }

    public CompletableFuture<@Nullable T> findOneAndReplaceAsync(
            @Nullable ClientSession session, Bson filter, T replacement, FindOneAndReplaceOptions options) {
        ReplaceOptions model = new ReplaceOptions()
                .upsert(options.isUpsert())
                .collation(options.getCollation())
                .hint(options.getHint())
                .hintString(options.getHintString());
        BsonValue encoded = replacement == null ? null : BsonDocumentWrapper.asBsonDocument(replacement, registry);
        BsonDocument specific = modification(
                options.getReturnDocument(), options.isUpsert(), encoded, options.getBypassDocumentValidation());
        return findAndModify.executeAsync(
                session,
                new FindAndModifyExecutor.Request<>(
                        "findOneAndReplace",
                        new ReplaceOneModel<>(filter, replacement, model),
                        options.getProjection(),
                        options.getSort(),
                        options.getMaxTime(TimeUnit.MILLISECONDS),
                        specific,
                        options.getCollation(),
                        options.getHint(),
                        options.getHintString(),
                        options.getComment(),
                        options.getLet()));
    }

    public @Nullable T findOneAndUpdate(
            @Nullable ClientSession session, Bson filter, Bson update, FindOneAndUpdateOptions options) {
        return Continuations.now(findOneAndUpdateAsync(session, filter, update, options));
    }

    public CompletableFuture<@Nullable T> findOneAndUpdateAsync(
            @Nullable ClientSession session, Bson filter, Bson update, FindOneAndUpdateOptions options) {
        UpdateOneModel<T> model = new UpdateOneModel<>(filter, update, findOneAndUpdateModel(options));
        return findOneAndUpdateAsync(session, model, encode(update), options);
    }

    public @Nullable T findOneAndUpdate(
            @Nullable ClientSession session,
            Bson filter,
            List<? extends Bson> pipeline,
            FindOneAndUpdateOptions options) {
        return Continuations.now(findOneAndUpdateAsync(session, filter, pipeline, options));
    }

    public CompletableFuture<@Nullable T> findOneAndUpdateAsync(
            @Nullable ClientSession session,
            Bson filter,
            List<? extends Bson> pipeline,
            FindOneAndUpdateOptions options) {
        UpdateOneModel<T> model = new UpdateOneModel<>(filter, pipeline, findOneAndUpdateModel(options));
        BsonArray stages = null;
        if (pipeline != null) {
            stages = new BsonArray();
            for (Bson stage : pipeline) {
                stages.add(stage == null ? null : encode(stage));
            }
        }
        return findOneAndUpdateAsync(session, model, stages, options);
    }

    /** What the planner checks of a findOneAndUpdate, as an updateOne model. */
    private static UpdateOptions findOneAndUpdateModel(FindOneAndUpdateOptions options) {
        return new UpdateOptions()
                .upsert(options.isUpsert())
                .collation(options.getCollation())
                .arrayFilters(options.getArrayFilters())
                .hint(options.getHint())
                .hintString(options.getHintString());
    }

    private CompletableFuture<@Nullable T> findOneAndUpdateAsync(
            @Nullable ClientSession session,
            UpdateOneModel<T> model,
            @Nullable BsonValue update,
            FindOneAndUpdateOptions options) {
        BsonDocument specific = modification(
                options.getReturnDocument(), options.isUpsert(), update, options.getBypassDocumentValidation());
        if (options.getArrayFilters() != null) {
            BsonArray filters = new BsonArray();
            options.getArrayFilters().forEach(filter -> filters.add(filter.toBsonDocument()));
            specific.put("arrayFilters", filters);
        }
        return findAndModify.executeAsync(
                session,
                new FindAndModifyExecutor.Request<>(
                        "findOneAndUpdate",
                        model,
                        options.getProjection(),
                        options.getSort(),
                        options.getMaxTime(TimeUnit.MILLISECONDS),
                        specific,
                        options.getCollation(),
                        options.getHint(),
                        options.getHintString(),
                        options.getComment(),
                        options.getLet()));
    }

    /** The fields of a findAndModify that replaces or updates, in the driver's order. */
    private static BsonDocument modification(
            ReturnDocument returnDocument,
            boolean upsert,
            @Nullable BsonValue update,
            @Nullable Boolean bypassDocumentValidation) {
        BsonDocument specific = new BsonDocument("new", BsonBoolean.valueOf(returnDocument == ReturnDocument.AFTER));
        if (upsert) {
            specific.put("upsert", BsonBoolean.TRUE);
        }
        specific.put("update", update);
        if (bypassDocumentValidation != null) {
            specific.put("bypassDocumentValidation", BsonBoolean.valueOf(bypassDocumentValidation));
        }
        return specific;
    }

    private @Nullable BsonDocument encode(@Nullable Bson bson) {
        return bson == null ? null : bson.toBsonDocument(documentClass, registry);
    }
}
