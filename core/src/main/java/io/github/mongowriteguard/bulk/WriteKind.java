package io.github.mongowriteguard.bulk;

import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.WriteModel;
import org.jspecify.annotations.Nullable;

/**
 * The kind of one write in a bulk: one per driver {@link WriteModel} class.
 *
 * <pre>{@code
 * WriteKind.of(new DeleteOneModel<>(Filters.eq("_id", 1)))   // DELETE_ONE
 * }</pre>
 */
public enum WriteKind {
    INSERT_ONE("InsertOneModel"),
    REPLACE_ONE("ReplaceOneModel"),
    UPDATE_ONE("UpdateOneModel"),
    UPDATE_MANY("UpdateManyModel"),
    DELETE_ONE("DeleteOneModel"),
    DELETE_MANY("DeleteManyModel");

    private final String modelName;

    WriteKind(String modelName) {
        this.modelName = modelName;
    }

    /** The driver's class name for this kind, e.g. {@code ReplaceOneModel}: what the caller wrote. */
    public String modelName() {
        return modelName;
    }

    /** Whether this kind can change more than one document. */
    public boolean isMulti() {
        return this == UPDATE_MANY || this == DELETE_MANY;
    }

    /** The kind of {@code model}, or {@code null} for a model class this version does not know. */
    @Nullable
    static WriteKind of(WriteModel<?> model) {
        if (model instanceof InsertOneModel) {
            return INSERT_ONE;
        } else if (model instanceof ReplaceOneModel) {
            return REPLACE_ONE;
        } else if (model instanceof UpdateOneModel) {
            return UPDATE_ONE;
        } else if (model instanceof UpdateManyModel) {
            return UPDATE_MANY;
        } else if (model instanceof DeleteOneModel) {
            return DELETE_ONE;
        } else if (model instanceof DeleteManyModel) {
            return DELETE_MANY;
        }
        return null;
    }
}
