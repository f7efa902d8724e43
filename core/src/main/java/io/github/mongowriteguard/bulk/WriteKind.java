package io.github.mongowriteguard.bulk;

/**
 * The kind of one write in a bulk: one per driver {@code WriteModel} class.
 *
 * <pre>{@code
 * plan.kind(0)   // DELETE_ONE for a DeleteOneModel
 * }</pre>
 */
public enum WriteKind {
    /** {@code InsertOneModel}: one document, keyed by its {@code _id} (assigned by the guard when missing). */
    INSERT_ONE("InsertOneModel"),
    /** {@code ReplaceOneModel}: at most one document; keyed when its filter is {@code _id} equality. */
    REPLACE_ONE("ReplaceOneModel"),
    /** {@code UpdateOneModel}: at most one document; keyed when its filter is {@code _id} equality. */
    UPDATE_ONE("UpdateOneModel"),
    /**
     * {@code UpdateManyModel}: any number of documents; unkeyed, unless its filter pins {@code _id} by equality and the
     * collection allows it to be sent as a single-document update (see {@link BulkPlan#sentAs(int)}).
     */
    UPDATE_MANY("UpdateManyModel"),
    /** {@code DeleteOneModel}: at most one document; keyed when its filter is {@code _id} equality. */
    DELETE_ONE("DeleteOneModel"),
    /**
     * {@code DeleteManyModel}: any number of documents; unkeyed, unless its filter pins {@code _id} by equality and the
     * collection allows it to be sent as a single-document delete (see {@link BulkPlan#sentAs(int)}).
     */
    DELETE_MANY("DeleteManyModel");

    private final String modelName;

    WriteKind(String modelName) {
        this.modelName = modelName;
    }

    /**
     * The driver's class name for this kind: what the caller wrote.
     *
     * @return the simple class name, e.g. {@code ReplaceOneModel}
     */
    public String modelName() {
        return modelName;
    }

    /**
     * Whether this kind can change more than one document.
     *
     * @return {@code true} for {@link #UPDATE_MANY} and {@link #DELETE_MANY}
     */
    public boolean isMulti() {
        return this == UPDATE_MANY || this == DELETE_MANY;
    }

    /**
     * The driver's request type of this kind (driver-core {@code BulkWriteBatch}): the driver sends each type as its own
     * command, so both the plan's key runs and the guard's commands are split where it changes.
     *
     * @return {@link RequestType#UPDATE} for both updates, {@link RequestType#DELETE} for both deletes
     */
    public RequestType requestType() {
        return switch (this) {
            case INSERT_ONE -> RequestType.INSERT;
            case UPDATE_ONE, UPDATE_MANY -> RequestType.UPDATE;
            case REPLACE_ONE -> RequestType.REPLACE;
            case DELETE_ONE, DELETE_MANY -> RequestType.DELETE;
        };
    }

    /** The driver's request types, one command each: updateOne and updateMany are one, deleteOne and deleteMany one. */
    public enum RequestType {
        /** {@code insert} commands. */
        INSERT,
        /** {@code update} commands of update documents or pipelines. */
        UPDATE,
        /** {@code update} commands of replacements. */
        REPLACE,
        /** {@code delete} commands. */
        DELETE
    }
}
