package io.github.mongowriteguard.internal.plan;

import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Collation;
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
import io.github.mongowriteguard.bulk.WriteKind;
import java.util.List;
import java.util.Map;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * One write of a bulk as the guard reads it: the driver's {@link WriteModel} read once into its kind, filter,
 * document, update and every option the driver sends for it in a bulk. The planner, the command encoder, the retry
 * opt-in and the Spring adapter read this record; this is the only class that knows the driver's six model classes.
 *
 * <pre>{@code
 * WriteRecord<Document> write = WriteRecord.of(new UpdateOneModel<>(eq("_id", 5), inc("n", 1)));
 * write.kind();      // UPDATE_ONE
 * write.filter();    // {_id: 5}
 * }</pre>
 *
 * <p>What is read, and what the driver's {@code bulkWrite} ignores too, is listed in {@link #READ_BY_THE_GUARD}: a
 * test compares that table with the driver's classes by reflection, so that an option a new driver version adds
 * fails the build until the guard handles it. The option objects are read, never kept: the record holds their values.
 *
 * <p>Not extensible outside the guard: the planner's {@code WriteFacts} is a record with what the plan learnt about
 * the write, one object per write of a bulk.
 *
 * @param <T> the collection's document class
 */
public sealed class WriteRecord<T> permits WriteFacts {

    /**
     * Every getter of the driver's model and option classes, and what the guard does with it. "sent" values are sent
     * as the driver sends them; "ignored in a bulk" ones are ignored by the driver's own {@code bulkWrite} too
     * (driver-core {@code Operations.bulkWrite} reads only the sent ones), so the guard ignores them there as well; the
     * guarded single-write methods send them at command level, as the driver's do.
     */
    public static final Map<Class<?>, Map<String, String>> READ_BY_THE_GUARD = Map.ofEntries(
            Map.entry(InsertOneModel.class, Map.of("getDocument", "sent")),
            Map.entry(
                    ReplaceOneModel.class,
                    Map.of("getFilter", "sent", "getReplacement", "sent", "getReplaceOptions", "read below")),
            Map.entry(
                    UpdateOneModel.class,
                    Map.of(
                            "getFilter",
                            "sent",
                            "getUpdate",
                            "sent",
                            "getUpdatePipeline",
                            "sent",
                            "getOptions",
                            "read below")),
            Map.entry(
                    UpdateManyModel.class,
                    Map.of(
                            "getFilter",
                            "sent",
                            "getUpdate",
                            "sent",
                            "getUpdatePipeline",
                            "sent",
                            "getOptions",
                            "read below (the driver never sends sort for updateMany)")),
            Map.entry(DeleteOneModel.class, Map.of("getFilter", "sent", "getOptions", "read below")),
            Map.entry(DeleteManyModel.class, Map.of("getFilter", "sent", "getOptions", "read below")),
            Map.entry(
                    ReplaceOptions.class,
                    Map.of(
                            "isUpsert",
                            "sent",
                            "getCollation",
                            "sent",
                            "getHint",
                            "sent",
                            "getHintString",
                            "sent",
                            "getSort",
                            "sent",
                            "getBypassDocumentValidation",
                            "ignored in a bulk",
                            "getComment",
                            "ignored in a bulk",
                            "getLet",
                            "ignored in a bulk")),
            Map.entry(
                    UpdateOptions.class,
                    Map.ofEntries(
                            Map.entry("isUpsert", "sent"),
                            Map.entry("getCollation", "sent"),
                            Map.entry("getArrayFilters", "sent"),
                            Map.entry("getHint", "sent"),
                            Map.entry("getHintString", "sent"),
                            Map.entry("getSort", "sent for updateOne"),
                            Map.entry("getBypassDocumentValidation", "ignored in a bulk"),
                            Map.entry("getComment", "ignored in a bulk"),
                            Map.entry("getLet", "ignored in a bulk"))),
            Map.entry(
                    DeleteOptions.class,
                    Map.of(
                            "getCollation",
                            "sent",
                            "getHint",
                            "sent",
                            "getHintString",
                            "sent",
                            "getComment",
                            "ignored in a bulk",
                            "getLet",
                            "ignored in a bulk")),
            Map.entry(
                    BulkWriteOptions.class,
                    Map.of(
                            "isOrdered",
                            "planned",
                            "getBypassDocumentValidation",
                            "sent",
                            "getComment",
                            "sent",
                            "getLet",
                            "sent")),
            Map.entry(
                    InsertManyOptions.class,
                    Map.of("isOrdered", "planned", "getBypassDocumentValidation", "sent", "getComment", "sent")),
            Map.entry(InsertOneOptions.class, Map.of("getBypassDocumentValidation", "sent", "getComment", "sent")));

    private final WriteModel<? extends T> model;
    /** The kind of write; read as a field by the planner's steps (a plan reads it for every write several times). */
    final WriteKind kind;

    private final boolean upsert;
    /** The options most writes do not set, one shared object when none is set: a bulk holds one record per write. */
    private final RarelySet rarelySet;

    /** The collation, hint, array filters and sort of a write; {@link #NONE} when it has none of them. */
    private record RarelySet(
            @Nullable Collation collation,
            @Nullable Bson hint,
            @Nullable String hintString,
            @Nullable List<? extends Bson> arrayFilters,
            @Nullable Bson sort) {

        static final RarelySet NONE = new RarelySet(null, null, null, null, null);

        static RarelySet of(
                @Nullable Collation collation,
                @Nullable Bson hint,
                @Nullable String hintString,
                @Nullable List<? extends Bson> arrayFilters,
                @Nullable Bson sort) {
            return collation == null && hint == null && hintString == null && arrayFilters == null && sort == null
                    ? NONE
                    : new RarelySet(collation, hint, hintString, arrayFilters, sort);
        }
    }

    /**
     * Reads {@code model}'s options now. The document, filter, update and pipeline are not copied: they are final
     * fields of the driver's model classes (and the guard reads a {@code DeleteOneModel}'s filter, the one model class a
     * caller can extend, once, while planning, as the driver does), so the record reads them from the model when asked.
     * A plan holds one record per write: four fields fewer in each.
     */
    WriteRecord(WriteModel<? extends T> model, WriteKind kind) {
        this.model = model;
        this.kind = kind;
        if (model instanceof ReplaceOneModel<? extends T> replace) {
            ReplaceOptions options = replace.getReplaceOptions();
            this.upsert = options.isUpsert();
            this.rarelySet = RarelySet.of(
                    options.getCollation(), options.getHint(), options.getHintString(), null, options.getSort());
        } else if (model instanceof UpdateOneModel<? extends T> update) {
            UpdateOptions options = update.getOptions();
            this.upsert = options.isUpsert();
            this.rarelySet = RarelySet.of(
                    options.getCollation(),
                    options.getHint(),
                    options.getHintString(),
                    options.getArrayFilters(),
                    options.getSort());
        } else if (model instanceof UpdateManyModel<? extends T> update) {
            UpdateOptions options = update.getOptions();
            this.upsert = options.isUpsert();
            this.rarelySet = RarelySet.of(
                    options.getCollation(),
                    options.getHint(),
                    options.getHintString(),
                    options.getArrayFilters(),
                    null);
        } else if (model instanceof DeleteOneModel<? extends T> delete) {
            DeleteOptions options = delete.getOptions();
            this.upsert = false;
            this.rarelySet =
                    RarelySet.of(options.getCollation(), options.getHint(), options.getHintString(), null, null);
        } else if (model instanceof DeleteManyModel<? extends T> delete) {
            DeleteOptions options = delete.getOptions();
            this.upsert = false;
            this.rarelySet =
                    RarelySet.of(options.getCollation(), options.getHint(), options.getHintString(), null, null);
        } else {
            this.upsert = false; // an insert
            this.rarelySet = RarelySet.NONE;
        }
    }

    /**
     * Reads a model.
     *
     * @param <T>   the collection's document class
     * @param model the caller's write model; its option objects are read now and never kept
     * @return the record, or {@code null} for a model class this version of the guard does not know (the planner
     *         refuses it with a message naming the class)
     */
    public static <T> @Nullable WriteRecord<T> of(WriteModel<? extends T> model) {
        WriteKind kind = kindOf(model);
        return kind == null ? null : new WriteRecord<>(model, kind);
    }

    /** The kind of {@code model}, or {@code null} for a model class this version of the guard does not know. */
    static @Nullable WriteKind kindOf(WriteModel<?> model) {
        if (model instanceof InsertOneModel) {
            return WriteKind.INSERT_ONE;
        } else if (model instanceof ReplaceOneModel) {
            return WriteKind.REPLACE_ONE;
        } else if (model instanceof UpdateOneModel) {
            return WriteKind.UPDATE_ONE;
        } else if (model instanceof UpdateManyModel) {
            return WriteKind.UPDATE_MANY;
        } else if (model instanceof DeleteOneModel) {
            return WriteKind.DELETE_ONE;
        } else if (model instanceof DeleteManyModel) {
            return WriteKind.DELETE_MANY;
        }
        return null;
    }

    /**
     * The caller's model, as given.
     *
     * @return the model
     */
    public WriteModel<? extends T> model() {
        return model;
    }

    /**
     * The kind of write: one per driver model class.
     *
     * @return the kind
     */
    public WriteKind kind() {
        return kind;
    }

    /**
     * The document to insert, or the replacement.
     *
     * @return the caller's document; null for updates and deletes (and when the caller passed null)
     */
    @SuppressWarnings("unchecked")
    public @Nullable T document() {
        return switch (kind) {
            case INSERT_ONE -> ((InsertOneModel<? extends T>) model).getDocument();
            case REPLACE_ONE -> ((ReplaceOneModel<? extends T>) model).getReplacement();
            default -> null;
        };
    }

    /**
     * The caller's filter.
     *
     * @return the filter; null for inserts (and when the caller passed null)
     */
    public @Nullable Bson filter() {
        return switch (kind) {
            case INSERT_ONE -> null;
            case REPLACE_ONE -> ((ReplaceOneModel<?>) model).getFilter();
            case UPDATE_ONE -> ((UpdateOneModel<?>) model).getFilter();
            case UPDATE_MANY -> ((UpdateManyModel<?>) model).getFilter();
            case DELETE_ONE -> ((DeleteOneModel<?>) model).getFilter();
            case DELETE_MANY -> ((DeleteManyModel<?>) model).getFilter();
        };
    }

    /**
     * The update document of an update.
     *
     * @return the update document; null for a pipeline update and for other kinds
     */
    public @Nullable Bson update() {
        return switch (kind) {
            case UPDATE_ONE -> ((UpdateOneModel<?>) model).getUpdate();
            case UPDATE_MANY -> ((UpdateManyModel<?>) model).getUpdate();
            default -> null;
        };
    }

    /**
     * The update pipeline of an update.
     *
     * @return the pipeline stages; null for an update document and for other kinds
     */
    public @Nullable List<? extends Bson> pipeline() {
        return switch (kind) {
            case UPDATE_ONE -> ((UpdateOneModel<?>) model).getUpdatePipeline();
            case UPDATE_MANY -> ((UpdateManyModel<?>) model).getUpdatePipeline();
            default -> null;
        };
    }

    /**
     * The {@code upsert} option of a replacement or an update.
     *
     * @return {@code true} when the write inserts a document if its filter matches none; {@code false} for inserts and
     *         deletes
     */
    public boolean upsert() {
        return upsert;
    }

    /**
     * The write's own collation (a write with one is unkeyed: its {@code _id} equality may not be the index's).
     *
     * @return the collation; null when none, and for inserts
     */
    public @Nullable Collation collation() {
        return rarelySet.collation();
    }

    /**
     * The index hint, as a document.
     *
     * @return the hint; null when none (or given as a name, {@link #hintString()}), and for inserts
     */
    public @Nullable Bson hint() {
        return rarelySet.hint();
    }

    /**
     * The index hint, as an index name.
     *
     * @return the index name; null when none (or given as a document, {@link #hint()}), and for inserts
     */
    public @Nullable String hintString() {
        return rarelySet.hintString();
    }

    /**
     * The array filters of an update.
     *
     * @return the array filters; null when none, and for other kinds
     */
    public @Nullable List<? extends Bson> arrayFilters() {
        return rarelySet.arrayFilters();
    }

    /**
     * The sort of an updateOne or replaceOne (server 8.0), which chooses the document when the filter matches several.
     *
     * @return the sort; null when none, and for other kinds
     */
    public @Nullable Bson sort() {
        return rarelySet.sort();
    }

    @Override
    public String toString() {
        return "WriteRecord{" + kind.modelName() + '}';
    }
}
