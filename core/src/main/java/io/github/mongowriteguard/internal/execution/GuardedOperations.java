package io.github.mongowriteguard.internal.execution;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.DeleteOptions;
import com.mongodb.client.model.FindOneAndDeleteOptions;
import com.mongodb.client.model.FindOneAndReplaceOptions;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.WriteModel;
import java.util.List;
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
    private final MongoCollection<T> collection;
    private final FindAndModifyExecutor<T> findAndModify;

    public GuardedOperations(MongoCollection<T> collection, FindAndModifyExecutor<T> findAndModify) {
        this.collection = collection;
        this.findAndModify = findAndModify;
    }

    // ---- findOneAndDelete, findOneAndReplace, findOneAndUpdate: one findAndModify command ----

    public @Nullable T findOneAndDelete(@Nullable ClientSession session, Bson filter, FindOneAndDeleteOptions options) {
        DeleteOptions model = new DeleteOptions()
                .collation(options.getCollation())
                .hint(options.getHint())
                .hintString(options.getHintString());
        return findAndModify.execute(session, delete(new DeleteOneModel<>(filter, model), options));
    }

    public @Nullable T findOneAndReplace(
            @Nullable ClientSession session, Bson filter, T replacement, FindOneAndReplaceOptions options) {
        ReplaceOptions model = new ReplaceOptions()
                .upsert(options.isUpsert())
                .collation(options.getCollation())
                .hint(options.getHint())
                .hintString(options.getHintString());
        BsonValue encoded = replacement == null
                ? null
                : BsonDocumentWrapper.asBsonDocument(replacement, collection.getCodecRegistry());
        return findAndModify.execute(
                session, replace(new ReplaceOneModel<>(filter, replacement, model), encoded, options));
    }

    public @Nullable T findOneAndUpdate(
            @Nullable ClientSession session, Bson filter, Bson update, FindOneAndUpdateOptions options) {
        return findOneAndUpdate(session, new UpdateOneModel<>(filter, update, updateOptions(options)), options);
    }

    public @Nullable T findOneAndUpdate(
            @Nullable ClientSession session,
            Bson filter,
            List<? extends Bson> pipeline,
            FindOneAndUpdateOptions options) {
        return findOneAndUpdate(session, new UpdateOneModel<>(filter, pipeline, updateOptions(options)), options);
    }

    private @Nullable T findOneAndUpdate(
            @Nullable ClientSession session, UpdateOneModel<T> model, FindOneAndUpdateOptions options) {
        BsonValue encoded = null;
        if (model.getUpdate() != null) {
            encoded = model.getUpdate().toBsonDocument(collection.getDocumentClass(), collection.getCodecRegistry());
        } else if (model.getUpdatePipeline() != null) {
            BsonArray stages = new BsonArray();
            for (Bson stage : model.getUpdatePipeline()) {
                stages.add(
                        stage == null
                                ? null
                                : stage.toBsonDocument(collection.getDocumentClass(), collection.getCodecRegistry()));
            }
            encoded = stages;
        }
        return findAndModify.execute(session, update(model, encoded, options));
    }

    /** What the planner checks of a findOneAndUpdate, as an updateOne model. */
    private static UpdateOptions updateOptions(FindOneAndUpdateOptions options) {
        return new UpdateOptions()
                .upsert(options.isUpsert())
                .collation(options.getCollation())
                .arrayFilters(options.getArrayFilters())
                .hint(options.getHint())
                .hintString(options.getHintString());
    }

    static <T> FindAndModifyExecutor.Request<T> update(
            WriteModel<T> model, @Nullable BsonValue update, FindOneAndUpdateOptions options) {
        BsonDocument specific =
                new BsonDocument("new", BsonBoolean.valueOf(options.getReturnDocument() == ReturnDocument.AFTER));
        if (options.isUpsert()) {
            specific.put("upsert", BsonBoolean.TRUE);
        }
        specific.put("update", update);
        if (options.getBypassDocumentValidation() != null) {
            specific.put("bypassDocumentValidation", BsonBoolean.valueOf(options.getBypassDocumentValidation()));
        }
        if (options.getArrayFilters() != null) {
            BsonArray filters = new BsonArray();
            options.getArrayFilters().forEach(filter -> filters.add(filter.toBsonDocument()));
            specific.put("arrayFilters", filters);
        }
        return new FindAndModifyExecutor.Request<>(
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
                options.getLet());
    }

    static <T> FindAndModifyExecutor.Request<T> replace(
            WriteModel<T> model, BsonValue replacement, FindOneAndReplaceOptions options) {
        BsonDocument specific =
                new BsonDocument("new", BsonBoolean.valueOf(options.getReturnDocument() == ReturnDocument.AFTER));
        if (options.isUpsert()) {
            specific.put("upsert", BsonBoolean.TRUE);
        }
        specific.put("update", replacement);
        if (options.getBypassDocumentValidation() != null) {
            specific.put("bypassDocumentValidation", BsonBoolean.valueOf(options.getBypassDocumentValidation()));
        }
        return new FindAndModifyExecutor.Request<>(
                "findOneAndReplace",
                model,
                options.getProjection(),
                options.getSort(),
                options.getMaxTime(TimeUnit.MILLISECONDS),
                specific,
                options.getCollation(),
                options.getHint(),
                options.getHintString(),
                options.getComment(),
                options.getLet());
    }

    static <T> FindAndModifyExecutor.Request<T> delete(WriteModel<T> model, FindOneAndDeleteOptions options) {
        return new FindAndModifyExecutor.Request<>(
                "findOneAndDelete",
                model,
                options.getProjection(),
                options.getSort(),
                options.getMaxTime(TimeUnit.MILLISECONDS),
                new BsonDocument("remove", BsonBoolean.TRUE),
                options.getCollation(),
                options.getHint(),
                options.getHintString(),
                options.getComment(),
                options.getLet());
    }
}
