package io.github.mongowriteguard.bulk;


/**
 * The kind of one write in a bulk: one per driver {@code WriteModel} class.
 *
 * <pre>{@code
 * WriteRecord.of(new DeleteOneModel<>(Filters.eq("_id", 1))).kind()   // DELETE_ONE
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
}
