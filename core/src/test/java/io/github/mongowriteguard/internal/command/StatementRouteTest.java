package io.github.mongowriteguard.internal.command;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.model.Collation;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.DeleteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.internal.command.StatementRoute.Route;
import io.github.mongowriteguard.internal.plan.BulkPlanner;
import io.github.mongowriteguard.internal.plan.PlanOptions;
import io.github.mongowriteguard.internal.plan.PlannedBulk;
import java.util.List;
import java.util.stream.Stream;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.bson.codecs.configuration.CodecRegistries;
import org.bson.codecs.configuration.CodecRegistry;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The route of each statement shape, as {@link StatementRoute} decides it: the first statement of a command (trees
 * allowed) and a statement in a command of bytes. That every route writes the bytes the codec writer writes is
 * {@code PlainStatementBytesTest}'s, {@code StatementTreesTest}'s and {@code WireEquivalenceTest}'s.
 */
class StatementRouteTest {
    private static final CodecRegistry DRIVERS = MongoClientSettings.getDefaultCodecRegistry();
    /** A registry with the application's own codec for a plain type: nothing is written by hand or as a tree of it. */
    private static final CodecRegistry OWN_INTEGERS =
            CodecRegistries.fromRegistries(CodecRegistries.fromCodecs(new OwnCodecsTest.WideIntegerCodec()), DRIVERS);

    private static final Document SMALL = new Document("_id", 1).append("n", 1);
    /** Past the replacement's 1 KiB from which trees are sent. */
    private static final Document LARGE = new Document("_id", 1).append("pad", "x".repeat(2048));

    /** shape, collection class, registry, write, route as a command's first statement, route in a command of bytes. */
    static Stream<Arguments> shapes() {
        return Stream.of(
                row("insert", Document.class, DRIVERS, new InsertOneModel<>(SMALL), Route.TREE, Route.CODEC_WRITER),
                row(
                        "insert of a BsonDocument",
                        BsonDocument.class,
                        DRIVERS,
                        new InsertOneModel<>(new BsonDocument("_id", new BsonInt32(1))),
                        Route.TREE,
                        Route.CODEC_WRITER),
                row(
                        "insert, own Integer codec",
                        Document.class,
                        OWN_INTEGERS,
                        new InsertOneModel<>(SMALL),
                        Route.CODEC_WRITER,
                        Route.CODEC_WRITER),
                row(
                        "small replacement",
                        Document.class,
                        DRIVERS,
                        new ReplaceOneModel<>(Filters.eq("_id", 1), SMALL),
                        Route.HAND_BYTES,
                        Route.HAND_BYTES),
                row(
                        "large replacement",
                        Document.class,
                        DRIVERS,
                        new ReplaceOneModel<>(Filters.eq("_id", 1), LARGE),
                        Route.TREE,
                        Route.HAND_BYTES),
                row(
                        "large replacement with an index hint",
                        Document.class,
                        DRIVERS,
                        new ReplaceOneModel<>(
                                Filters.eq("_id", 1), LARGE, new ReplaceOptions().hint(Indexes.ascending("n"))),
                        Route.TREE,
                        Route.CODEC_WRITER),
                row(
                        "large replacement with a hint Document",
                        Document.class,
                        DRIVERS,
                        new ReplaceOneModel<>(
                                Filters.eq("_id", 1), LARGE, new ReplaceOptions().hint(new Document("n", 1))),
                        Route.CODEC_WRITER,
                        Route.CODEC_WRITER),
                row(
                        "small replacement with a collation",
                        Document.class,
                        DRIVERS,
                        new ReplaceOneModel<>(
                                Filters.eq("_id", 1),
                                SMALL,
                                new ReplaceOptions()
                                        .collation(
                                                Collation.builder().locale("en").build())),
                        Route.CODEC_WRITER,
                        Route.CODEC_WRITER),
                row(
                        "small replacement, own Integer codec",
                        Document.class,
                        OWN_INTEGERS,
                        new ReplaceOneModel<>(Filters.eq("_id", 1), SMALL),
                        Route.CODEC_WRITER,
                        Route.CODEC_WRITER),
                row(
                        "update Document",
                        Document.class,
                        DRIVERS,
                        new UpdateOneModel<>(Filters.eq("_id", 1), new Document("$set", new Document("n", 2))),
                        Route.HAND_BYTES,
                        Route.HAND_BYTES),
                row(
                        "update of Updates",
                        Document.class,
                        DRIVERS,
                        new UpdateOneModel<>(Filters.eq("_id", 1), Updates.inc("n", 1)),
                        Route.HAND_BYTES,
                        Route.HAND_BYTES),
                row(
                        "update BsonDocument, own Integer codec",
                        Document.class,
                        OWN_INTEGERS,
                        new UpdateOneModel<>(
                                Filters.eq("_id", 1),
                                new BsonDocument("$set", new BsonDocument("s", new BsonString("a")))),
                        Route.HAND_BYTES,
                        Route.HAND_BYTES),
                row(
                        // the planner's copy of the update, which that registry's codecs made, is written as it is
                        "update Document, own Integer codec",
                        Document.class,
                        OWN_INTEGERS,
                        new UpdateOneModel<>(Filters.eq("_id", 1), new Document("$set", new Document("n", 2))),
                        Route.HAND_BYTES,
                        Route.HAND_BYTES),
                row(
                        "update pipeline",
                        Document.class,
                        DRIVERS,
                        new UpdateOneModel<>(Filters.eq("_id", 1), List.of(new Document("$set", new Document("n", 2)))),
                        Route.CODEC_WRITER,
                        Route.CODEC_WRITER),
                row(
                        "update with array filters",
                        Document.class,
                        DRIVERS,
                        new UpdateOneModel<>(
                                Filters.eq("_id", 1),
                                Updates.set("a.$[e]", 1),
                                new UpdateOptions().arrayFilters(List.of(Filters.eq("e", 0)))),
                        Route.CODEC_WRITER,
                        Route.CODEC_WRITER),
                row(
                        "updateMany",
                        Document.class,
                        DRIVERS,
                        new UpdateManyModel<>(Filters.gt("n", 1), Updates.inc("n", 1)),
                        Route.HAND_BYTES,
                        Route.HAND_BYTES),
                row(
                        "delete",
                        Document.class,
                        DRIVERS,
                        new DeleteOneModel<>(Filters.eq("_id", 1)),
                        Route.HAND_BYTES,
                        Route.HAND_BYTES),
                row(
                        "deleteMany with a hint",
                        Document.class,
                        DRIVERS,
                        new DeleteManyModel<>(Filters.gt("n", 1), new DeleteOptions().hintString("n_1")),
                        Route.CODEC_WRITER,
                        Route.CODEC_WRITER));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("shapes")
    <T> void eachStatementShape_hasOneRoute(
            String shape,
            Class<T> documentClass,
            CodecRegistry registry,
            WriteModel<T> write,
            Route first,
            Route inBytes) {
        PlannedBulk plan = BulkPlanner.of(documentClass, registry).plan(List.of(write), PlanOptions.unordered());
        StatementRoute route = new StatementRoute(documentClass, registry);
        assertThat(route.of(plan, 0, true)).as("as a command's first statement").isEqualTo(first);
        assertThat(route.of(plan, 0, false)).as("in a command of bytes").isEqualTo(inBytes);
    }

    private static Arguments row(
            String shape,
            Class<?> documentClass,
            CodecRegistry registry,
            WriteModel<?> write,
            Route first,
            Route inBytes) {
        return Arguments.of(shape, documentClass, registry, write, first, inBytes);
    }
}
