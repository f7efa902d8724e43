package io.github.mongowriteguard.spring.data;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The writes of a {@link GuardedMongoTemplate}, grouped by the driver method the template calls for them. Every group
 * goes through the guard unless it is set to plain ({@link GuardedMongoTemplate#setPlainGroups}, or the Spring Boot
 * property {@code mongo.write-guard.template.<group>=plain}): then the template calls the driver as Spring Data's
 * {@code MongoTemplate} does. docs/spring.md has the table of which template method goes where.
 */
public enum TemplateWriteGroup {
    /**
     * {@code insertOne}/{@code insertMany}: {@code insert}, {@code insertAll}, fluent {@code insert(...).one/all}, and a
     * {@code save} that inserts (an entity without id, a new versioned entity).
     */
    INSERT("insertOne", "insertMany"),
    /**
     * {@code replaceOne}: {@code save} of an entity with an id (a versioned one with its version in the filter),
     * {@code replace}, fluent {@code replaceWith(...).replaceFirst()}, and {@code updateFirst}/{@code upsert} given a
     * document without update operators.
     */
    REPLACE("replaceOne"),
    /** {@code updateOne}/{@code updateMany}: {@code updateFirst}, {@code updateMulti}, {@code upsert}, fluent {@code update(...).first/all/upsert}. */
    UPDATE("updateOne", "updateMany"),
    /** {@code deleteOne}/{@code deleteMany}: {@code remove}, {@code findAllAndRemove}, fluent {@code remove(...).one/all/findAndRemove}. */
    REMOVE("deleteOne", "deleteMany"),
    /** {@code findOneAndUpdate/Replace/Delete}: {@code findAndModify}, {@code findAndReplace}, {@code findAndRemove}, and their fluent forms. */
    FIND_AND_MODIFY("findOneAndUpdate", "findOneAndReplace", "findOneAndDelete"),
    /** {@code bulkWrite}: {@code bulkOps(...)} and fluent {@code insert(...).bulk}; plain gives Spring Data's own {@code BulkOperations}. */
    BULK("bulkWrite");

    private final List<String> driverMethods;

    TemplateWriteGroup(String... driverMethods) {
        this.driverMethods = List.of(driverMethods);
    }

    /**
     * The driver's {@code MongoCollection} methods of this group.
     *
     * @return the method names
     */
    public List<String> driverMethods() {
        return driverMethods;
    }

    /** The group of a driver {@code MongoCollection} method, or null when it does not write. */
    static @Nullable TemplateWriteGroup ofDriverMethod(String name) {
        for (TemplateWriteGroup group : values()) {
            if (group.driverMethods.contains(name)) {
                return group;
            }
        }
        return null;
    }

    /** Where a group's writes go: through the guard (the default), or to the driver as Spring Data sends them. */
    public enum Mode {
        /** Through the guard. */
        GUARDED,
        /** To the driver, as Spring Data sends them. */
        PLAIN
    }
}
