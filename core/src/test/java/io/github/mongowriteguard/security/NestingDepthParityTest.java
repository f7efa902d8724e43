package io.github.mongowriteguard.security;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.GuardedCollection;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonSerializationException;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Deep nesting, side by side through the raw driver and the guard: each part of a write (the document, a filter, an
 * update, a replacement, a pipeline stage, an array filter, findOneAndUpdate's update) at the deepest nesting the driver
 * writes there and one level deeper, and far deeper (20,000 levels, where unbounded recursion would throw
 * {@link StackOverflowError}), and a document that contains itself. At every depth the guard accepts what the driver
 * accepts and refuses what it refuses, with the driver's {@link BsonSerializationException}, before anything is sent.
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
        MongoCollection<Document> guardView = sides.guarded.asMongoCollection();
        for (int levels : new int[] {part.deepestAccepted, part.deepestAccepted + 1, 20_000}) {
            int sentBefore = sides.sentWrites.size();
            Throwable driver = SideBySide.thrown(() -> part.write.apply(sides.driver, levels));
            int driverSent = sides.sentWrites.size() - sentBefore;
            Throwable guard = SideBySide.thrown(() -> part.write.apply(guardView, levels));
            int guardSent = sides.sentWrites.size() - sentBefore - driverSent;

            if (levels == part.deepestAccepted) {
                // the driver sends it (and the server may refuse it: stored documents nest at most 180 levels)
                assertThat(driver instanceof BsonSerializationException)
                        .as("driver refused %d", levels)
                        .isFalse();
                assertThat(guard instanceof BsonSerializationException)
                        .as("guard refused %d", levels)
                        .isFalse();
                assertThat(guardSent).isEqualTo(driverSent).isPositive();
                assertThat(guard == null ? null : guard.getClass())
                        .isEqualTo(driver == null ? null : driver.getClass());
            } else {
                assertThat(driver).as("driver at %d", levels).isInstanceOf(BsonSerializationException.class);
                assertThat(guard)
                        .as("guard at %d", levels)
                        .isExactlyInstanceOf(BsonSerializationException.class)
                        .hasMessageStartingWith(driver.getMessage())
                        .hasMessageContaining("Nothing was sent");
                assertThat(guardSent).isZero();
            }
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
