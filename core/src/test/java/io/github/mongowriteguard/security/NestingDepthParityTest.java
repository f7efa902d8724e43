package io.github.mongowriteguard.security;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoNamespace;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.DeleteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.FindOneAndDeleteOptions;
import com.mongodb.client.model.FindOneAndReplaceOptions;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import com.mongodb.client.model.bulk.ClientBulkWriteOptions;
import com.mongodb.client.model.bulk.ClientNamespacedWriteModel;
import com.mongodb.client.model.bulk.ClientUpdateOneOptions;
import io.github.mongowriteguard.GuardedClient;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonSerializationException;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Deep nesting, side by side through the raw driver and the guard: each part of a write (the document, a filter, an
 * update, a replacement, a pipeline stage, an array filter, findOneAndUpdate's update) at the deepest nesting the driver
 * writes there and one level deeper, and far deeper (20,000 levels, where unbounded recursion would throw
 * {@link StackOverflowError}), and a document that contains itself; the same for every option document a write sends
 * ({@code let}, {@code comment}, {@code hint}, {@code sort}, findOneAndX's {@code projection}). At every depth the guard
 * accepts what the driver accepts and refuses what it refuses, with the driver's {@link BsonSerializationException},
 * before anything is sent.
 */
class NestingDepthParityTest {
    private static SideBySide sides;

    @BeforeAll
    static void start() {
        sides = new SideBySide("nesting");
    }

    @AfterAll
    static void stop() {
        sides.close();
    }

    /** A document of {@code levels} levels: {a: {a: ... {x: 1}}}. */
    static Document nested(int levels) {
        Document inner = new Document("x", 1);
        for (int level = 1; level < levels; level++) {
            inner = new Document("a", inner);
        }
        return inner;
    }

    static BsonDocument nestedBson(int levels) {
        BsonDocument inner = new BsonDocument("x", new BsonInt32(1));
        for (int level = 1; level < levels; level++) {
            inner = new BsonDocument("a", inner);
        }
        return inner;
    }

    /** A write whose one part nests {@code levels} levels, run on a collection (the raw one or the guard's view). */
    enum Part {
        INSERTED_DOCUMENT(1024, (c, n) -> c.insertOne(nested(n))),
        INSERTED_BSON_DOCUMENT(
                1024, (c, n) -> c.withDocumentClass(BsonDocument.class).insertOne(nestedBson(n))),
        FILTER(1023, (c, n) -> c.updateOne(nested(n), Updates.set("y", 1))),
        BSON_FILTER(1023, (c, n) -> c.deleteOne(nestedBson(n))),
        BUILDER_FILTER(1023, (c, n) -> c.deleteOne(Filters.eq("v", nested(n - 1)))),
        UPDATE(1023, (c, n) -> c.updateOne(Filters.eq("_id", 1), new Document("$set", nested(n - 1)))),
        REPLACEMENT(1023, (c, n) -> c.replaceOne(Filters.eq("_id", 1), nested(n))),
        PIPELINE_STAGE(1022, (c, n) -> c.updateOne(Filters.eq("_id", 1), List.of(new Document("$set", nested(n - 1))))),
        ARRAY_FILTER(
                1022,
                (c, n) -> c.updateOne(
                        Filters.eq("_id", 1),
                        Updates.set("v.$[e]", 1),
                        new UpdateOptions().arrayFilters(List.of(new Document("e", nested(n - 1)))))),
        FIND_ONE_AND_UPDATE(
                1023, (c, n) -> c.findOneAndUpdate(Filters.eq("_id", 1), new Document("$set", nested(n - 1))));

        final int deepestAccepted;
        final BiFunction<MongoCollection<Document>, Integer, Object> write;

        Part(int deepestAccepted, BiFunction<MongoCollection<Document>, Integer, Object> write) {
            this.deepestAccepted = deepestAccepted;
            this.write = write;
        }
    }

    @ParameterizedTest
    @EnumSource(Part.class)
    void eachPart_isWrittenToTheDriversDepth_andRefusedOneLevelDeeper_asTheDriverRefuses(Part part) {
        for (int levels : new int[] {part.deepestAccepted, part.deepestAccepted + 1, 20_000}) {
            sendsOrRefusesAsTheDriver(part.deepestAccepted, levels, part.write);
        }
    }

    /**
     * Runs {@code write} with {@code levels} levels through the raw driver, then through the guard: up to
     * {@code deepest} both send it (and the server may refuse it: stored documents nest at most 180 levels), past it
     * both refuse it with the driver's exception and send nothing.
     */
    private static void sendsOrRefusesAsTheDriver(
            int deepest, int levels, BiFunction<MongoCollection<Document>, Integer, Object> write) {
        MongoCollection<Document> guardView = sides.guarded.asMongoCollection();
        int sentBefore = sides.sentWrites.size();
        Throwable driver = SideBySide.thrown(() -> write.apply(sides.driver, levels));
        int driverSent = sides.sentWrites.size() - sentBefore;
        Throwable guard = SideBySide.thrown(() -> write.apply(guardView, levels));
        int guardSent = sides.sentWrites.size() - sentBefore - driverSent;

        if (levels <= deepest) {
            assertThat(driver instanceof BsonSerializationException)
                    .as("driver refused %d", levels)
                    .isFalse();
            assertThat(guard instanceof BsonSerializationException)
                    .as("guard refused %d: %s", levels, guard)
                    .isFalse();
            assertThat(guardSent).isEqualTo(driverSent).isPositive();
            assertThat(guard == null ? null : guard.getClass())
                    .as("%s", guard)
                    .isEqualTo(driver == null ? null : driver.getClass());
        } else {
            assertThat(driver).as("driver at %d", levels).isInstanceOf(BsonSerializationException.class);
            assertThat(driverSent).as("driver sent at %d", levels).isZero();
            assertThat(guard)
                    .as("guard at %d", levels)
                    .isExactlyInstanceOf(BsonSerializationException.class)
                    .hasMessageStartingWith(driver.getMessage())
                    .hasMessageContaining("Nothing was sent");
            assertThat(guardSent).as("guard sent at %d", levels).isZero();
        }
    }

    /**
     * A write with one option document nesting {@code levels} levels: the command-level ones (a bulk's or a single
     * write's {@code let} and {@code comment}; findAndModify's {@code let}, {@code sort}, {@code fields} and
     * {@code hint}) and the statement-level ones ({@code hint}, {@code sort}) sit one level down, where the driver writes
     * 1,023 levels; findAndModify's array filters and pipeline stages two levels down (1,022). A collation is never
     * nested (the driver's {@code Collation} holds only scalars).
     */
    enum Option {
        BULK_LET(
                1023,
                (c, n) -> c.bulkWrite(
                        List.of(new UpdateOneModel<>(Filters.eq("_id", 1), Updates.set("y", 1))),
                        new BulkWriteOptions().let(nested(n)))),
        BULK_COMMENT(
                1023,
                (c, n) -> c.bulkWrite(
                        List.of(new InsertOneModel<>(new Document())), new BulkWriteOptions().comment(nestedBson(n)))),
        UPDATE_ONE_LET(
                1023,
                (c, n) -> c.updateOne(Filters.eq("_id", 1), Updates.set("y", 1), new UpdateOptions().let(nested(n)))),
        DELETE_MANY_LET(1023, (c, n) -> c.deleteMany(Filters.eq("v", 1), new DeleteOptions().let(nested(n)))),
        REPLACE_ONE_LET(
                1023,
                (c, n) ->
                        c.replaceOne(Filters.eq("_id", 1), new Document("y", 1), new ReplaceOptions().let(nested(n)))),
        UPDATE_ONE_HINT(
                1023,
                (c, n) -> c.updateOne(Filters.eq("_id", 1), Updates.set("y", 1), new UpdateOptions().hint(nested(n)))),
        UPDATE_MANY_HINT(
                1023,
                (c, n) -> c.updateMany(Filters.eq("v", 1), Updates.set("y", 1), new UpdateOptions().hint(nested(n)))),
        DELETE_ONE_HINT(1023, (c, n) -> c.deleteOne(Filters.eq("_id", 1), new DeleteOptions().hint(nested(n)))),
        UPDATE_ONE_BUILDER_HINT(
                1023,
                (c, n) -> c.updateOne(
                        Filters.eq("_id", 1),
                        Updates.set("y", 1),
                        new UpdateOptions().hint(Filters.eq("a", nested(n - 1))))),
        UPDATE_ONE_SORT(
                1023,
                (c, n) -> c.updateOne(Filters.eq("_id", 1), Updates.set("y", 1), new UpdateOptions().sort(nested(n)))),
        REPLACE_ONE_SORT(
                1023,
                (c, n) ->
                        c.replaceOne(Filters.eq("_id", 1), new Document("y", 1), new ReplaceOptions().sort(nested(n)))),
        FIND_ONE_AND_UPDATE_LET(
                1023,
                (c, n) -> c.findOneAndUpdate(
                        Filters.eq("_id", 1), Updates.set("y", 1), new FindOneAndUpdateOptions().let(nested(n)))),
        FIND_ONE_AND_UPDATE_SORT(
                1023,
                (c, n) -> c.findOneAndUpdate(
                        Filters.eq("_id", 1), Updates.set("y", 1), new FindOneAndUpdateOptions().sort(nested(n)))),
        FIND_ONE_AND_UPDATE_PROJECTION(
                1023,
                (c, n) -> c.findOneAndUpdate(
                        Filters.eq("_id", 1),
                        Updates.set("y", 1),
                        new FindOneAndUpdateOptions().projection(nested(n)))),
        FIND_ONE_AND_UPDATE_HINT(
                1023,
                (c, n) -> c.findOneAndUpdate(
                        Filters.eq("_id", 1), Updates.set("y", 1), new FindOneAndUpdateOptions().hint(nested(n)))),
        FIND_ONE_AND_UPDATE_COMMENT(
                1023,
                (c, n) -> c.findOneAndUpdate(
                        Filters.eq("_id", 1),
                        Updates.set("y", 1),
                        new FindOneAndUpdateOptions().comment(nestedBson(n)))),
        FIND_ONE_AND_UPDATE_ARRAY_FILTER(
                1022,
                (c, n) -> c.findOneAndUpdate(
                        Filters.eq("_id", 1),
                        Updates.set("v.$[e]", 1),
                        new FindOneAndUpdateOptions().arrayFilters(List.of(new Document("e", nested(n - 1)))))),
        FIND_ONE_AND_UPDATE_PIPELINE_STAGE(
                1022, (c, n) -> c.findOneAndUpdate(Filters.eq("_id", 1), List.of(new Document("$set", nested(n - 1))))),
        FIND_ONE_AND_REPLACE_SORT(
                1023,
                (c, n) -> c.findOneAndReplace(
                        Filters.eq("_id", 1), new Document("y", 1), new FindOneAndReplaceOptions().sort(nested(n)))),
        FIND_ONE_AND_REPLACE_LET(
                1023,
                (c, n) -> c.findOneAndReplace(
                        Filters.eq("_id", 1), new Document("y", 1), new FindOneAndReplaceOptions().let(nested(n)))),
        FIND_ONE_AND_DELETE_PROJECTION(
                1023,
                (c, n) ->
                        c.findOneAndDelete(Filters.eq("_id", 1), new FindOneAndDeleteOptions().projection(nested(n)))),
        FIND_ONE_AND_DELETE_BUILDER_SORT(
                1023,
                (c, n) -> c.findOneAndDelete(
                        Filters.eq("_id", 1), new FindOneAndDeleteOptions().sort(Filters.eq("a", nested(n - 1))))),
        FIND_ONE_AND_DELETE_LET(
                1023, (c, n) -> c.findOneAndDelete(Filters.eq("_id", 1), new FindOneAndDeleteOptions().let(nested(n))));

        final int deepestAccepted;
        final BiFunction<MongoCollection<Document>, Integer, Object> write;

        Option(int deepestAccepted, BiFunction<MongoCollection<Document>, Integer, Object> write) {
            this.deepestAccepted = deepestAccepted;
            this.write = write;
        }
    }

    @ParameterizedTest
    @EnumSource(Option.class)
    void eachOption_isWrittenToTheDriversDepth_andRefusedDeeper_asTheDriverRefuses(Option option) {
        int deepest = option.deepestAccepted;
        for (int levels : new int[] {deepest, deepest + 1, deepest + 2, 20_000}) {
            sendsOrRefusesAsTheDriver(deepest, levels, option.write);
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Part.class,
            names = {"INSERTED_DOCUMENT", "FILTER", "REPLACEMENT"})
    void aDocumentThatContainsItself_isRefusedAsTheDriverRefusesIt(Part part) {
        Document cycle = new Document("_id", 1);
        cycle.put("self", cycle);
        MongoCollection<Document> guardView = sides.guarded.asMongoCollection();
        BiFunction<MongoCollection<Document>, Document, Object> write = switch (part) {
            case INSERTED_DOCUMENT -> MongoCollection::insertOne;
            case FILTER -> (c, d) -> c.deleteOne(d);
            default -> (c, d) -> c.replaceOne(Filters.eq("_id", 1), d);
        };

        Throwable driver = SideBySide.thrown(() -> write.apply(sides.driver, cycle));
        Throwable guard = SideBySide.thrown(() -> write.apply(guardView, cycle));

        assertThat(driver).isInstanceOf(BsonSerializationException.class);
        assertThat(guard)
                .isExactlyInstanceOf(BsonSerializationException.class)
                .hasMessageStartingWith(driver.getMessage());
    }

    /** The client-level bulk (a server 8.0 {@code bulkWrite} for the driver): its {@code let} and a write's hint. */
    @Test
    void clientBulkLetAndHint_areWrittenToTheDriversDepth_andRefusedDeeper_asTheDriverRefuses() {
        try (SideBySide client = new SideBySide("clientNesting", ServerVersion.V8_0)) {
            GuardedClient guarded = client.guardedClient();
            MongoNamespace driverNs = client.driver.getNamespace();
            MongoNamespace guardNs = client.guarded.getNamespace();
            Map<String, BiFunction<MongoNamespace, Integer, List<ClientNamespacedWriteModel>>> writes = Map.of(
                    "let", (ns, n) -> List.of(ClientNamespacedWriteModel.insertOne(ns, new Document())),
                    "hint",
                            (ns, n) -> List.of(ClientNamespacedWriteModel.updateOne(
                                    ns,
                                    Filters.eq("_id", 1),
                                    Updates.set("y", 1),
                                    ClientUpdateOneOptions.clientUpdateOneOptions()
                                            .hint(nested(n)))));
            for (var write : writes.entrySet()) {
                for (int levels : new int[] {1023, 1024, 1025}) {
                    ClientBulkWriteOptions options = ClientBulkWriteOptions.clientBulkWriteOptions();
                    if (write.getKey().equals("let")) {
                        options.let(nested(levels));
                    }
                    int sentBefore = client.sentWrites.size();
                    Throwable driver = SideBySide.thrown(
                            () -> client.client.bulkWrite(write.getValue().apply(driverNs, levels), options));
                    int driverSent = client.sentWrites.size() - sentBefore;
                    Throwable guard = SideBySide.thrown(
                            () -> guarded.bulkWrite(write.getValue().apply(guardNs, levels), options));
                    int guardSent = client.sentWrites.size() - sentBefore - driverSent;

                    String what = write.getKey() + " at " + levels;
                    if (levels == 1023) {
                        assertThat(driver instanceof BsonSerializationException)
                                .as(what)
                                .isFalse();
                        assertThat(guard instanceof BsonSerializationException)
                                .as("%s: %s", what, guard)
                                .isFalse();
                        assertThat(driverSent).as(what).isPositive();
                        assertThat(guardSent).as(what).isPositive();
                    } else {
                        assertThat(driver).as(what).isInstanceOf(BsonSerializationException.class);
                        assertThat(guard)
                                .as(what)
                                .isExactlyInstanceOf(BsonSerializationException.class)
                                .hasMessageStartingWith(driver.getMessage())
                                .hasMessageContaining("Nothing was sent");
                        assertThat(driverSent + guardSent).as(what).isZero();
                    }
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Option.class,
            names = {"BULK_LET", "UPDATE_ONE_HINT", "FIND_ONE_AND_UPDATE_SORT"})
    void anOptionThatContainsItself_isRefusedAsTheDriverRefusesIt(Option option) {
        Document cycle = new Document("x", 1);
        cycle.put("self", cycle);
        MongoCollection<Document> guardView = sides.guarded.asMongoCollection();
        int sentBefore = sides.sentWrites.size();
        BiFunction<MongoCollection<Document>, Document, Object> write = switch (option) {
            case BULK_LET ->
                (c, d) -> c.bulkWrite(List.of(new InsertOneModel<>(new Document())), new BulkWriteOptions().let(d));
            case UPDATE_ONE_HINT ->
                (c, d) -> c.updateOne(Filters.eq("_id", 1), Updates.set("y", 1), new UpdateOptions().hint(d));
            default ->
                (c, d) -> c.findOneAndUpdate(
                        Filters.eq("_id", 1), Updates.set("y", 1), new FindOneAndUpdateOptions().sort(d));
        };

        Throwable driver = SideBySide.thrown(() -> write.apply(sides.driver, cycle));
        Throwable guard = SideBySide.thrown(() -> write.apply(guardView, cycle));

        assertThat(driver).isInstanceOf(BsonSerializationException.class);
        assertThat(guard)
                .isExactlyInstanceOf(BsonSerializationException.class)
                .hasMessageStartingWith(driver.getMessage())
                .hasMessageContaining("Nothing was sent");
        assertThat(sides.sentWrites.size()).isEqualTo(sentBefore);
    }

    @ParameterizedTest
    @EnumSource(
            value = Part.class,
            names = {"INSERTED_DOCUMENT"})
    void aTooDeepWriteLateInABulk_refusesTheWholeBulkBeforeAnythingIsSent(Part part) {
        List<WriteModel<Document>> bulk = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            bulk.add(new InsertOneModel<>(new Document("_id", 10_000 + i)));
        }
        bulk.add(new InsertOneModel<>(nested(part.deepestAccepted + 1)));
        GuardedCollection<Document> guarded = sides.guarded;
        int sentBefore = sides.sentWrites.size();

        Throwable guard = SideBySide.thrown(() -> guarded.execute(bulk, new BulkWriteOptions().ordered(false)));

        assertThat(guard).isExactlyInstanceOf(BsonSerializationException.class).hasMessageContaining("index 1000");
        assertThat(sides.sentWrites.size()).isEqualTo(sentBefore);
        assertThat(guarded.unwrap().countDocuments(Filters.gte("_id", 10_000))).isZero();
    }
}
