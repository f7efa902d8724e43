package io.github.mongowriteguard.spring.data;

import static org.springframework.data.mongodb.core.query.Criteria.where;
import static org.springframework.data.mongodb.core.query.Query.query;

import io.github.mongowriteguard.spring.data.TemplateEntities.Auto;
import io.github.mongowriteguard.spring.data.TemplateEntities.Item;
import io.github.mongowriteguard.spring.data.TemplateEntities.Versioned;
import java.util.List;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.dao.OptimisticLockingFailureException;
import org.springframework.data.mongodb.core.BulkOperations.BulkMode;
import org.springframework.data.mongodb.core.FindAndModifyOptions;
import org.springframework.data.mongodb.core.FindAndReplaceOptions;
import org.springframework.data.mongodb.core.MongoTemplate;
import org.springframework.data.mongodb.core.aggregation.AggregationUpdate;
import org.springframework.data.mongodb.core.query.BasicUpdate;
import org.springframework.data.mongodb.core.query.Update;

/**
 * Every write method of {@code MongoTemplate} (and its fluent API), as one call each, on the seed of
 * {@link GuardedMongoTemplateTest}: items {@code a(q 1, A), b(2, B), c(2, C)} with a unique index on {@code name} on the
 * replica set, and {@code versioned v1(V, version 3)}.
 */
enum TemplateCall {
    INSERT(t -> t.insert(new Item("d", 4, "D"))),
    INSERT_GENERATED_ID(t -> t.insert(new Auto("x"))),
    INSERT_DUPLICATE_ID(DuplicateKeyException.class, t -> t.insert(new Item("a", 9, "Z"))),
    INSERT_INTO_COLLECTION(t -> t.insert(new Item("d", 4, "D"), "items")),
    INSERT_BATCH(t -> t.insert(List.of(new Item("d", 4, "D"), new Item("e", 5, "E")), Item.class)),
    INSERT_BATCH_GENERATED_IDS(t -> t.insert(List.of(new Auto("x"), new Auto("y")), Auto.class)),
    /**
     * The core's ORDERED default (CONTRACT.md, mode 2): distinct keys are one round, so {@code e}, after the duplicate,
     * is inserted too; Spring's plain insertMany stops at the duplicate. Same exception.
     */
    INSERT_BATCH_WITH_DUPLICATE(
            DuplicateKeyException.class,
            true,
            t -> t.insert(List.of(new Item("d", 4, "D"), new Item("a", 9, "Z"), new Item("e", 5, "E")), Item.class)),
    INSERT_ALL(t -> t.insertAll(List.of(new Item("d", 4, "D"), new Versioned("v2", "W", null), new Auto("x")))),
    SAVE_NEW_WITH_ID(t -> t.save(new Item("d", 4, "D"))),
    SAVE_EXISTING(t -> t.save(new Item("a", 7, "A2"))),
    SAVE_INTO_COLLECTION(t -> t.save(new Item("a", 7, "A2"), "items")),
    SAVE_WITHOUT_ID(t -> t.save(new Auto("y"))),
    SAVE_VERSIONED_NEW(t -> t.save(new Versioned("v2", "W", null))),
    SAVE_VERSIONED_CURRENT(t -> t.save(new Versioned("v1", "V2", 3L))),
    SAVE_VERSIONED_STALE(OptimisticLockingFailureException.class, t -> t.save(new Versioned("v1", "V2", 2L))),
    SAVE_VERSIONED_TWICE(t -> t.save(t.save(new Versioned("v1", "V2", 3L)))),
    SAVE_DUPLICATE_NAME(DuplicateKeyException.class, t -> t.save(new Item("d", 4, "A"))),
    UPDATE_FIRST(t ->
            t.updateFirst(query(where("id").is("a")), new Update().inc("qty", 1).set("name", "A1"), Item.class)),
    UPDATE_FIRST_BY_FIELD(t -> t.updateFirst(query(where("qty").is(2)), new Update().set("name", "first"), Item.class)),
    UPDATE_FIRST_BY_COLLECTION_NAME(
            t -> t.updateFirst(query(where("_id").is("b")), new Update().set("q", 20), "items")),
    UPDATE_FIRST_NO_MATCH(
            t -> t.updateFirst(query(where("id").is("zz")), new Update().set("name", "none"), Item.class)),
    UPDATE_FIRST_VERSIONED(
            t -> t.updateFirst(query(where("id").is("v1")), new Update().set("name", "U"), Versioned.class)),
    /** A pipeline update ({@code AggregationUpdate}), which the emulator runs as a server does. */
    UPDATE_FIRST_PIPELINE(t -> t.updateFirst(
            query(where("id").is("a")), AggregationUpdate.update().set("name").toValue("P"), Item.class)),
    UPDATE_FIRST_REPLACEMENT_DOCUMENT(t -> t.updateFirst(
            query(where("id").is("a")),
            new BasicUpdate(new org.bson.Document("q", 8).append("name", "R")),
            Item.class)),
    UPDATE_DUPLICATE_NAME(
            DuplicateKeyException.class,
            t -> t.updateFirst(query(where("id").is("a")), new Update().set("name", "B"), Item.class)),
    UPDATE_MULTI(t -> t.updateMulti(query(where("qty").is(2)), new Update().inc("qty", 10), Item.class)),
    UPSERT_BY_ID(t ->
            t.upsert(query(where("id").is("n")), new Update().set("name", "N").set("qty", 5), Item.class)),
    UPSERT_EXISTING(t -> t.upsert(query(where("id").is("a")), new Update().set("name", "A5"), Item.class)),
    UPSERT_BY_FIELD(t -> t.upsert(query(where("name").is("N")), new Update().set("qty", 5), Item.class)),
    REMOVE_QUERY(t -> t.remove(query(where("qty").is(2)), Item.class)),
    REMOVE_QUERY_BY_COLLECTION_NAME(t -> t.remove(query(where("q").is(2)), "items")),
    REMOVE_ENTITY(t -> t.remove(new Item("a", 1, "A"))),
    REMOVE_VERSIONED_CURRENT(t -> t.remove(new Versioned("v1", "V", 3L))),
    REMOVE_VERSIONED_STALE(t -> t.remove(new Versioned("v1", "V", 2L))),
    REMOVE_WITH_LIMIT(t -> t.remove(query(where("qty").is(2)).limit(1), Item.class)),
    FIND_AND_MODIFY(t -> t.findAndModify(query(where("id").is("a")), new Update().inc("qty", 1), Item.class)),
    FIND_AND_MODIFY_RETURN_NEW(t -> t.findAndModify(
            query(where("id").is("a")),
            new Update().inc("qty", 1),
            FindAndModifyOptions.options().returnNew(true),
            Item.class)),
    FIND_AND_MODIFY_UPSERT(t -> t.findAndModify(
            query(where("id").is("n")),
            new Update().set("name", "N").set("qty", 6),
            FindAndModifyOptions.options().upsert(true).returnNew(true),
            Item.class)),
    FIND_AND_MODIFY_NO_MATCH(
            t -> t.findAndModify(query(where("id").is("zz")), new Update().set("name", "none"), Item.class)),
    FIND_AND_MODIFY_VERSIONED(t -> t.findAndModify(
            query(where("id").is("v1")),
            new Update().set("name", "M"),
            FindAndModifyOptions.options().returnNew(true),
            Versioned.class)),
    FIND_AND_MODIFY_DUPLICATE_NAME(
            DuplicateKeyException.class,
            t -> t.findAndModify(query(where("id").is("a")), new Update().set("name", "B"), Item.class)),
    FIND_AND_REPLACE(t -> t.findAndReplace(query(where("id").is("b")), new Item("b", 20, "B2"))),
    FIND_AND_REPLACE_UPSERT_RETURN_NEW(t -> t.findAndReplace(
            query(where("id").is("n")),
            new Item("n", 6, "N"),
            FindAndReplaceOptions.options().upsert().returnNew())),
    FIND_AND_REMOVE(t -> t.findAndRemove(query(where("id").is("c")), Item.class)),
    FIND_ALL_AND_REMOVE(t -> t.findAllAndRemove(query(where("qty").is(2)), Item.class)),
    REPLACE(t -> t.replace(query(where("id").is("a")), new Item("a", 30, "A3"))),
    FLUENT_INSERT_ONE(t -> t.insert(Item.class).one(new Item("d", 4, "D"))),
    FLUENT_INSERT_ALL(t -> t.insert(Item.class).all(List.of(new Item("d", 4, "D"), new Item("e", 5, "E")))),
    FLUENT_INSERT_BULK(t -> t.insert(Item.class)
            .withBulkMode(BulkMode.UNORDERED)
            .bulk(List.of(new Item("d", 4, "D"), new Item("e", 5, "E")))),
    FLUENT_UPDATE_FIRST(t -> t.update(Item.class)
            .matching(where("id").is("a"))
            .apply(new Update().set("name", "F"))
            .first()),
    FLUENT_UPDATE_ALL(t -> t.update(Item.class)
            .matching(where("qty").is(2))
            .apply(new Update().inc("qty", 1))
            .all()),
    FLUENT_UPSERT(t -> t.update(Item.class)
            .matching(where("id").is("n"))
            .apply(new Update().set("qty", 3))
            .upsert()),
    FLUENT_FIND_AND_MODIFY(t -> t.update(Item.class)
            .matching(where("id").is("b"))
            .apply(new Update().inc("qty", 5))
            .withOptions(FindAndModifyOptions.options().returnNew(true))
            .findAndModifyValue()),
    FLUENT_FIND_AND_REPLACE(t -> t.update(Item.class)
            .matching(where("id").is("c"))
            .replaceWith(new Item("c", 9, "C9"))
            .withOptions(FindAndReplaceOptions.options().returnNew())
            .findAndReplaceValue()),
    FLUENT_REPLACE_FIRST(t -> t.update(Item.class)
            .matching(where("id").is("c"))
            .replaceWith(new Item("c", 9, "C9"))
            .replaceFirst()),
    FLUENT_REMOVE_ONE(t -> t.remove(Item.class).matching(where("qty").is(2)).one()),
    FLUENT_REMOVE_ALL(t -> t.remove(Item.class).matching(where("qty").is(2)).all()),
    FLUENT_FIND_AND_REMOVE(
            t -> t.remove(Item.class).matching(where("qty").is(2)).findAndRemove()),
    BULK_OPS(t -> t.bulkOps(BulkMode.ORDERED, Item.class)
            .insert(new Item("d", 4, "D"))
            .updateOne(query(where("id").is("a")), new Update().inc("qty", 1))
            .remove(query(where("id").is("c")))
            .execute());

    final @Nullable Class<? extends Exception> expected;
    /** The guard's documented difference from the plain template changes the stored documents (see the constant). */
    final boolean documentsDiffer;

    final Function<MongoTemplate, Object> run;

    TemplateCall(Function<MongoTemplate, Object> run) {
        this(null, false, run);
    }

    TemplateCall(Class<? extends Exception> expected, Function<MongoTemplate, Object> run) {
        this(expected, false, run);
    }

    TemplateCall(
            @Nullable Class<? extends Exception> expected,
            boolean documentsDiffer,
            Function<MongoTemplate, Object> run) {
        this.expected = expected;
        this.documentsDiffer = documentsDiffer;
        this.run = run;
    }

    /** Needs the unique index on {@code items.name}, which a sharded collection cannot have (not prefixed by its key). */
    boolean needsUniqueName() {
        return name().endsWith("DUPLICATE_NAME");
    }
}
