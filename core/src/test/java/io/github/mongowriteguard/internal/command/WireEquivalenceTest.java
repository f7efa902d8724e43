package io.github.mongowriteguard.internal.command;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Collation;
import com.mongodb.client.model.CollationStrength;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.DeleteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.testkit.TestDeployment;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;
import org.bson.types.Decimal128;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Wire equivalence: for the same writes, the guard sends the insert/update/delete commands the driver 5.6.5 sends,
 * as a {@link CommandListener} sees them at {@code commandStarted}, except for the deliberate differences of the
 * execution contract:
 * <ul>
 *   <li>top level: {@code lsid}, {@code txnNumber}, {@code maxTimeMS}, {@code $db}, {@code $clusterTime},
 *       {@code $readPreference} and {@code ordered} are not compared; the guard's own {@code mwg:...} comment is
 *       allowed only when the caller gave none (a caller's comment must arrive unchanged); {@code writeConcern} is
 *       not compared when the collection's write concern is the server default. Top-level field order is not compared
 *       (the contract fixes the order inside statements only); every other top-level field must be on every command
 *       of its type with the same value and BSON type;</li>
 *   <li>commands may be split differently, so the statements of one bulk are concatenated per command type
 *       ({@code insert}, {@code update}, {@code delete}) in send order and compared as lists: same statements, same
 *       order, and inside each statement the same fields in the same order with the same values and BSON types;</li>
 *   <li>an insert without {@code _id} gets an ObjectId from the driver on one side and from the guard on the other:
 *       both must put an {@code _id} first in the document; the two generated values are not compared.</li>
 * </ul>
 * Both sides run on one emulated replica set through one client (the guard only adds a command listener to it),
 * each on a fresh collection, each with fresh model and option objects (the guard writes {@code _id}s into the
 * caller's insert documents; driver options are mutable). Writes the emulator refuses are fine: the commands are
 * captured when they start, and both sides' exceptions are caught and shown.
 *
 * <p>The single-write methods are compared too: unlike a bulk, the driver's {@code replaceOne}, {@code updateOne} and
 * {@code updateMany} put their options' {@code comment}, {@code let} and {@code bypassDocumentValidation} on the
 * command.
 *
 * <p>Multi-write bulks keep every keyed write on a key of its own: a key written twice in one bulk is deliberately
 * sent in per-key rounds, in another order than the driver's (contract, modes 1 and 2), which the differential test
 * {@code BulkEquivalenceTest} covers. The bulk of every kind holds a pipeline update too (the emulator runs them as a
 * server does; see {@link #everyKind()} for where it stands). The order of the command types relative to each other is not
 * compared (the contract compares per command type). Replay one random bulk with
 * {@code -Dwire.seed=<seed> -Dwire.bulks=1}.
 *
 * <p>The fixture is this class's own {@link WireFixture} ({@code GuardFixture} is package-private to the root
 * package); like it, it is a guarded client with a listener recording the write commands.
 */
@org.junit.jupiter.api.Tag("deployment") // runs against -Dmongo.uri (the real-mongodb profile)
class WireEquivalenceTest {
    private static final long BASE_SEED = Long.getLong("wire.seed", 20_260_513L);
    private static final int BULKS = Integer.getInteger("wire.bulks", 200);

    private static final List<String> COMMANDS = List.of("insert", "update", "delete");
    private static final Map<String, String> STATEMENTS =
            Map.of("insert", "documents", "update", "updates", "delete", "deletes");
    /** Top-level fields the contract lets differ (comment and writeConcern are handled apart). */
    private static final Set<String> NOT_COMPARED =
            Set.of("lsid", "txnNumber", "maxTimeMS", "$db", "$clusterTime", "$readPreference", "ordered");

    private static final String GENERATED_ID = "<ObjectId generated by this side>";
    private static final JsonWriterSettings CANONICAL =
            JsonWriterSettings.builder().outputMode(JsonMode.EXTENDED).build();
    private static final JsonWriterSettings READABLE =
            JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).build();

    private static final Collation FRENCH = Collation.builder()
            .locale("fr")
            .collationStrength(CollationStrength.SECONDARY)
            .build();
    private static final String HINT_STRING = "a_1";

    private static TestDeployment deployment;
    private static WireFixture fixture;
    private static MongoDatabase database;
    private static final AtomicInteger COLLECTIONS = new AtomicInteger();

    @BeforeAll
    static void start() {
        deployment = TestDeployment.replicaSet();
        fixture = new WireFixture(deployment.connectionString());
        database = fixture.client.getDatabase("wire");
    }

    @AfterAll
    static void stop() {
        if (fixture != null) {
            fixture.close();
        }
        if (deployment != null) {
            deployment.close();
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Bulks: every model kind with every option, then the bulk options and write concerns on a bulk of every kind.

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyModelKindWithEveryOption")
    void modelKindAndOption_inABulk_sendsTheDriversCommands(BulkCase bulk) {
        assertEquivalent(bulk.compare());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyBulkOptionAndWriteConcern")
    void bulkOptionAndWriteConcern_onEveryCommandType_sendTheDriversCommands(BulkCase bulk) {
        assertEquivalent(bulk.compare());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("mixedKindsInOneBulk")
    void mixedKindsInOneBulk_keepTheDriversStatementOrderPerCommandType(BulkCase bulk) {
        assertEquivalent(bulk.compare());
    }

    static Stream<BulkCase> everyModelKindWithEveryOption() {
        List<BulkCase> cases = new ArrayList<>();
        // Inserts: _id first, _id after other fields (the driver writes it first), no _id, every common BSON type.
        cases.add(bulk(
                "insertOne with _id", () -> List.of(new InsertOneModel<>(new Document("_id", 1).append("a", 1)))));
        cases.add(bulk(
                "insertOne with _id after other fields",
                () -> List.of(new InsertOneModel<>(
                        new Document("a", 1).append("b", "x").append("_id", 2)))));
        cases.add(bulk(
                "insertOne without _id", () -> List.of(new InsertOneModel<>(new Document("a", 1).append("b", "x")))));
        cases.add(bulk("insertOne of every common BSON type", () -> List.of(new InsertOneModel<>(everyType()))));

        for (Map.Entry<String, Consumer<ReplaceOptions>> option :
                replaceOptions().entrySet()) {
            cases.add(bulk(
                    "replaceOne " + option.getKey(),
                    () -> List.of(new ReplaceOneModel<>(
                            Filters.eq("_id", 1),
                            new Document("a", 5).append("b", "r"),
                            apply(new ReplaceOptions(), option.getValue())))));
        }
        cases.add(bulk(
                "replaceOne with its _id after other fields",
                () -> List.of(new ReplaceOneModel<>(Filters.eq("_id", 1), new Document("a", 5).append("_id", 1)))));

        for (Map.Entry<String, Consumer<UpdateOptions>> option :
                updateOptions(true).entrySet()) {
            boolean arrays = option.getKey().contains("arrayFilters");
            cases.add(bulk(
                    "updateOne (document) " + option.getKey(),
                    () -> List.of(new UpdateOneModel<>(
                            Filters.eq("_id", 1),
                            arrays ? arrayUpdate() : update(),
                            apply(new UpdateOptions(), option.getValue())))));
            cases.add(bulk(
                    "updateMany (document) " + option.getKey(),
                    () -> List.of(new UpdateManyModel<>(
                            Filters.gte("a", 1),
                            arrays ? arrayUpdate() : update(),
                            apply(new UpdateOptions(), option.getValue())))));
        }
        for (Map.Entry<String, Consumer<UpdateOptions>> option :
                updateOptions(false).entrySet()) {
            cases.add(bulk(
                    "updateOne (pipeline) " + option.getKey(),
                    () -> List.of(new UpdateOneModel<>(
                            Filters.eq("_id", 1), pipeline(), apply(new UpdateOptions(), option.getValue())))));
            cases.add(bulk(
                    "updateMany (pipeline) " + option.getKey(),
                    () -> List.of(new UpdateManyModel<>(
                            Filters.gte("a", 1), pipeline(), apply(new UpdateOptions(), option.getValue())))));
        }

        for (Map.Entry<String, Consumer<DeleteOptions>> option : deleteOptions().entrySet()) {
            cases.add(bulk(
                    "deleteOne " + option.getKey(),
                    () -> List.of(new DeleteOneModel<>(
                            Filters.eq("_id", 1), apply(new DeleteOptions(), option.getValue())))));
            cases.add(bulk(
                    "deleteMany " + option.getKey(),
                    () -> List.of(new DeleteManyModel<>(
                            Filters.gte("a", 1), apply(new DeleteOptions(), option.getValue())))));
        }

        // Filters: keyed in the guard's forms and unkeyed, with several id types.
        Map<String, Supplier<Bson>> filters = new LinkedHashMap<>();
        filters.put("Filters.eq(_id, long)", () -> Filters.eq("_id", 7L));
        filters.put("Document {_id: string}", () -> new Document("_id", "k7"));
        filters.put("{_id: {$eq: double}}", () -> new Document("_id", new Document("$eq", 7.5)));
        filters.put("_id and another field", () -> Filters.and(Filters.eq("_id", 7), Filters.eq("a", 1)));
        filters.put("a non-_id field", () -> Filters.in("a", 1, 2L, "3"));
        for (Map.Entry<String, Supplier<Bson>> filter : filters.entrySet()) {
            cases.add(bulk(
                    "updateOne filtered by " + filter.getKey(),
                    () -> List.of(new UpdateOneModel<>(filter.getValue().get(), update()))));
            cases.add(bulk(
                    "deleteOne filtered by " + filter.getKey(),
                    () -> List.of(new DeleteOneModel<>(filter.getValue().get()))));
        }
        // Updates given as a Document (sent through the document's own codec, as the driver's BsonDocumentWrapperCodec
        // writes them), a counter's $inc among them.
        cases.add(bulk(
                "updateOne with a Document update, upsert",
                () -> List.of(
                        new UpdateOneModel<>(
                                new Document("_id", "hot"),
                                new Document("$inc", new Document("n", 1)),
                                new UpdateOptions().upsert(true)),
                        new UpdateOneModel<>(
                                new Document("_id", "hot"),
                                new Document("$inc", new Document("n", 1)),
                                new UpdateOptions().upsert(true)))));
        cases.add(bulk("updateOne with a Document update of every type", () -> {
            Document fields = everyType();
            fields.remove("_id");
            return List.of(new UpdateOneModel<>(Filters.eq("_id", 1), new Document("$set", fields)));
        }));
        return cases.stream();
    }

    static Stream<BulkCase> everyBulkOptionAndWriteConcern() {
        Map<String, Consumer<BulkWriteOptions>> options = new LinkedHashMap<>();
        options.put("no option", o -> {});
        options.put("bypassDocumentValidation true", o -> o.bypassDocumentValidation(true));
        options.put("bypassDocumentValidation false", o -> o.bypassDocumentValidation(false));
        options.put("comment string", o -> o.comment("caller's comment"));
        options.put(
                "comment document",
                o -> o.comment(new BsonDocument("app", new BsonString("billing")).append("n", new BsonInt32(3))));
        options.put("let", o -> o.let(new Document("limit", 10).append("tag", "x")));
        options.put(
                "bypassDocumentValidation, comment and let",
                o -> o.bypassDocumentValidation(true).comment("all").let(new Document("limit", 10)));
        List<BulkCase> cases = new ArrayList<>();
        for (boolean ordered : new boolean[] {true, false}) {
            for (Map.Entry<String, Consumer<BulkWriteOptions>> option : options.entrySet()) {
                cases.add(new BulkCase(
                        "all kinds, ordered=" + ordered + ", " + option.getKey() + ", server-default write concern",
                        WriteConcern.ACKNOWLEDGED,
                        WireEquivalenceTest::everyKind,
                        () -> apply(new BulkWriteOptions().ordered(ordered), option.getValue())));
            }
            for (Map.Entry<String, Consumer<BulkWriteOptions>> option : options.entrySet()) {
                cases.add(new BulkCase(
                        "large inserts (statement trees the driver encodes), ordered=" + ordered + ", "
                                + option.getKey(),
                        WriteConcern.MAJORITY,
                        WireEquivalenceTest::largeInserts,
                        () -> apply(new BulkWriteOptions().ordered(ordered), option.getValue())));
            }
            for (WriteConcern concern : List.of(WriteConcern.W1, WriteConcern.MAJORITY)) {
                cases.add(new BulkCase(
                        "all kinds, ordered=" + ordered + ", write concern "
                                + concern.asDocument().toJson(),
                        concern,
                        WireEquivalenceTest::everyKind,
                        () -> new BulkWriteOptions().ordered(ordered)));
            }
        }
        return cases.stream();
    }

    static Stream<BulkCase> mixedKindsInOneBulk() {
        List<BulkCase> cases = new ArrayList<>();
        for (boolean ordered : new boolean[] {true, false}) {
            String mode = ordered ? "ordered: " : "unordered: ";
            cases.add(bulk(
                    mode + "insert, delete, insert, update, insert (every write keyed)",
                    ordered,
                    () -> List.of(
                            new InsertOneModel<>(new Document("_id", 1)),
                            new DeleteOneModel<>(Filters.eq("_id", 2)),
                            new InsertOneModel<>(new Document("_id", 3)),
                            new UpdateOneModel<>(Filters.eq("_id", 4), update()),
                            new InsertOneModel<>(new Document("a", 5)))));
            if (!ordered) {
                // Ordered, these distinct keys are the README's deliberate difference: the guard runs them as one
                // unordered round (the driver's UNORDERED grouping), so replaces follow the updates.
                cases.add(bulk(
                        mode + "updateOne, replaceOne, updateOne",
                        false,
                        () -> List.of(
                                new UpdateOneModel<>(Filters.eq("_id", 1), update()),
                                new ReplaceOneModel<>(Filters.eq("_id", 2), new Document("a", 2)),
                                new UpdateOneModel<>(Filters.eq("_id", 3), update()))));
            }
            cases.add(bulk(
                    mode + "updateMany before updateOne",
                    ordered,
                    () -> List.of(
                            new UpdateManyModel<>(Filters.gte("a", 1), update()),
                            new UpdateOneModel<>(Filters.eq("_id", 2), update()))));
            cases.add(bulk(
                    mode + "deleteMany before deleteOne",
                    ordered,
                    () -> List.of(
                            new DeleteManyModel<>(Filters.gte("a", 1)), new DeleteOneModel<>(Filters.eq("_id", 2)))));
        }
        return cases.stream();
    }

    /**
     * Every kind, a pipeline update included, each keyed write on a key of its own, in an order whose per-type
     * statement order is the same under the driver's grouping and the guard's. The pipeline update is the last update:
     * with the bulk's {@code let} it is a write error (the emulator does not give pipelines variables) that stops an
     * ordered bulk, and only as the last update statement has each side sent the same statements when it stops.
     */
    /**
     * Inserts of documents large enough for the guard to hand them to the driver as statement trees instead of its own
     * bytes ({@link TreeCommands}): _id first, after other fields, absent; binary subtypes 0, 2 (old), 4, 0x80; every
     * common type.
     */
    private static List<WriteModel<Document>> largeInserts() {
        byte[] payload = new byte[40_000];
        new Random(5).nextBytes(payload);
        return List.of(
                new InsertOneModel<>(new Document("_id", 1).append("p", new org.bson.types.Binary(payload))),
                new InsertOneModel<>(new Document("a", 2)
                        .append("p", new org.bson.types.Binary((byte) 2, payload))
                        .append("_id", 2L)),
                new InsertOneModel<>(new Document("p", new org.bson.types.Binary((byte) 4, new byte[16]))
                        .append("big", new org.bson.types.Binary((byte) 0x80, payload))),
                new InsertOneModel<>(everyType().append("_id", 3.5).append("p", new org.bson.types.Binary(payload))));
    }

    private static List<WriteModel<Document>> everyKind() {
        return List.of(
                new InsertOneModel<>(new Document("_id", 1).append("a", 1)),
                new InsertOneModel<>(new Document("a", 2)),
                new ReplaceOneModel<>(Filters.eq("_id", 2), new Document("a", 3)),
                new UpdateOneModel<>(Filters.eq("_id", 3), update()),
                new UpdateOneModel<>(
                        Filters.eq("_id", 4), arrayUpdate(), new UpdateOptions().arrayFilters(arrayFilters())),
                new UpdateManyModel<>(Filters.gte("a", 1), update()),
                new UpdateManyModel<>(Filters.gte("a", 2), pipeline()),
                new DeleteOneModel<>(Filters.eq("_id", 5)),
                new DeleteManyModel<>(Filters.eq("a", 99)));
    }

    private static Map<String, Consumer<ReplaceOptions>> replaceOptions() {
        Map<String, Consumer<ReplaceOptions>> options = new LinkedHashMap<>();
        options.put("without options", o -> {});
        options.put("upsert", o -> o.upsert(true));
        options.put("upsert false", o -> o.upsert(false));
        options.put("collation", o -> o.collation(FRENCH));
        options.put("hint", o -> o.hint(Indexes.ascending("a")));
        options.put("hintString", o -> o.hintString(HINT_STRING));
        options.put("sort", o -> o.sort(Sorts.descending("a")));
        options.put(
                "comment, let and bypassDocumentValidation of the model (a bulk ignores them)",
                o -> o.comment("model's").let(new Document("v", 1)).bypassDocumentValidation(true));
        options.put(
                "with upsert, collation, hint and sort",
                o -> o.upsert(true)
                        .collation(FRENCH)
                        .hint(Indexes.ascending("a"))
                        .sort(Sorts.descending("a")));
        return options;
    }

    private static Map<String, Consumer<UpdateOptions>> updateOptions(boolean document) {
        Map<String, Consumer<UpdateOptions>> options = new LinkedHashMap<>();
        options.put("without options", o -> {});
        options.put("upsert", o -> o.upsert(true));
        options.put("upsert false", o -> o.upsert(false));
        options.put("collation", o -> o.collation(FRENCH));
        options.put("hint", o -> o.hint(Indexes.ascending("a")));
        options.put("hintString", o -> o.hintString(HINT_STRING));
        if (document) {
            options.put("arrayFilters", o -> o.arrayFilters(arrayFilters()));
        }
        options.put("sort", o -> o.sort(Sorts.descending("a")));
        options.put(
                "comment, let and bypassDocumentValidation of the model (a bulk ignores them)",
                o -> o.comment("model's").let(new Document("v", 1)).bypassDocumentValidation(true));
        if (document) {
            options.put(
                    "with upsert, collation, arrayFilters, hint and sort",
                    o -> o.upsert(true)
                            .collation(FRENCH)
                            .arrayFilters(arrayFilters())
                            .hint(Indexes.ascending("a"))
                            .sort(Sorts.descending("a")));
        } else {
            options.put(
                    "with upsert, collation, hintString and sort",
                    o -> o.upsert(true)
                            .collation(FRENCH)
                            .hintString(HINT_STRING)
                            .sort(Sorts.descending("a")));
        }
        return options;
    }

    private static Map<String, Consumer<DeleteOptions>> deleteOptions() {
        Map<String, Consumer<DeleteOptions>> options = new LinkedHashMap<>();
        options.put("without options", o -> {});
        options.put("collation", o -> o.collation(FRENCH));
        options.put("hint", o -> o.hint(Indexes.ascending("a")));
        options.put("hintString", o -> o.hintString(HINT_STRING));
        options.put(
                "comment and let of the model (a bulk ignores them)",
                o -> o.comment("model's").let(new Document("v", 1)));
        options.put("with collation and hint", o -> o.collation(FRENCH).hint(Indexes.ascending("a")));
        return options;
    }

    private static Bson update() {
        return Updates.combine(Updates.set("a", 2), Updates.inc("n", 1L));
    }

    private static Bson arrayUpdate() {
        return Updates.set("arr.$[x]", 0);
    }

    private static List<Bson> arrayFilters() {
        return List.of(Filters.gte("x", 2));
    }

    private static List<Bson> pipeline() {
        return List.of(
                new Document("$set", new Document("a", 3).append("total", new Document("$add", List.of("$a", 1)))),
                new Document("$unset", "tmp"));
    }

    private static Document everyType() {
        return new Document("_id", 10)
                .append("int", 1)
                .append("long", 2L)
                .append("double", 1.5)
                .append("decimal", new Decimal128(new BigDecimal("1.10")))
                .append("date", new Date(0))
                .append("null", null)
                .append("bool", true)
                .append("array", List.of(1, "two", 3.0))
                .append("sub", new Document("z", 1).append("y", "b"));
    }

    private static <O> O apply(O options, Consumer<O> change) {
        change.accept(options);
        return options;
    }

    private static BulkCase bulk(String name, Supplier<List<WriteModel<Document>>> models) {
        return bulk(name, true, models);
    }

    private static BulkCase bulk(String name, boolean ordered, Supplier<List<WriteModel<Document>>> models) {
        return new BulkCase(name, WriteConcern.ACKNOWLEDGED, models, () -> new BulkWriteOptions().ordered(ordered));
    }

    /** One bulk, built afresh for each side. */
    record BulkCase(
            String name,
            WriteConcern writeConcern,
            Supplier<List<WriteModel<Document>>> models,
            Supplier<BulkWriteOptions> options) {
        Comparison compare() {
            return WireEquivalenceTest.compare(
                    name,
                    writeConcern,
                    raw -> raw.bulkWrite(models.get(), options.get()),
                    guarded -> guarded.bulkWrite(models.get(), options.get()));
        }

        @Override
        public String toString() {
            return name;
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Single-write methods of GuardedCollection against MongoCollection's.

    @ParameterizedTest(name = "{0}")
    @MethodSource("singleWriteMethods")
    void singleWriteMethod_sendsTheDriversCommand(SingleCase single) {
        assertEquivalent(compare(single.name, single.writeConcern, single.raw, single.guarded));
    }

    static Stream<SingleCase> singleWriteMethods() {
        List<SingleCase> cases = new ArrayList<>();
        for (WriteConcern concern : List.of(WriteConcern.ACKNOWLEDGED, WriteConcern.W1, WriteConcern.MAJORITY)) {
            String suffix = concern.isServerDefault()
                    ? ""
                    : ", write concern " + concern.asDocument().toJson();
            cases.add(new SingleCase(
                    "insertOne with _id" + suffix,
                    concern,
                    raw -> raw.insertOne(new Document("_id", 1).append("a", 1)),
                    guarded -> guarded.insertOne(new Document("_id", 1).append("a", 1))));
            cases.add(new SingleCase(
                    "deleteOne" + suffix,
                    concern,
                    raw -> raw.deleteOne(Filters.eq("_id", 1)),
                    guarded -> guarded.deleteOne(Filters.eq("_id", 1))));
        }
        cases.add(new SingleCase(
                "insertOne without _id",
                WriteConcern.ACKNOWLEDGED,
                raw -> raw.insertOne(new Document("a", 1)),
                guarded -> guarded.insertOne(new Document("a", 1))));
        cases.add(new SingleCase(
                "insertOne with _id after other fields",
                WriteConcern.ACKNOWLEDGED,
                raw -> raw.insertOne(new Document("a", 1).append("_id", 2)),
                guarded -> guarded.insertOne(new Document("a", 1).append("_id", 2))));
        cases.add(new SingleCase(
                "deleteMany",
                WriteConcern.ACKNOWLEDGED,
                raw -> raw.deleteMany(Filters.gte("a", 1)),
                guarded -> guarded.deleteMany(Filters.gte("a", 1))));
        cases.add(new SingleCase(
                "replaceOne without options",
                WriteConcern.ACKNOWLEDGED,
                raw -> raw.replaceOne(Filters.eq("_id", 1), new Document("a", 2)),
                guarded -> guarded.replaceOne(Filters.eq("_id", 1), new Document("a", 2))));

        Map<String, Consumer<ReplaceOptions>> replace = new LinkedHashMap<>();
        replace.put("upsert", o -> o.upsert(true));
        replace.put("comment", o -> o.comment("caller's"));
        replace.put("let", o -> o.let(new Document("v", 1)));
        replace.put("bypassDocumentValidation true", o -> o.bypassDocumentValidation(true));
        replace.put("bypassDocumentValidation false", o -> o.bypassDocumentValidation(false));
        replace.put("sort", o -> o.sort(Sorts.descending("a")));
        replace.put(
                "comment, let, bypassDocumentValidation, upsert, collation, hint and sort",
                o -> o.comment("all")
                        .let(new Document("v", 1))
                        .bypassDocumentValidation(true)
                        .upsert(true)
                        .collation(FRENCH)
                        .hint(Indexes.ascending("a"))
                        .sort(Sorts.descending("a")));
        for (Map.Entry<String, Consumer<ReplaceOptions>> option : replace.entrySet()) {
            cases.add(new SingleCase(
                    "replaceOne with " + option.getKey(),
                    WriteConcern.ACKNOWLEDGED,
                    raw -> raw.replaceOne(
                            Filters.eq("_id", 1), new Document("a", 2), apply(new ReplaceOptions(), option.getValue())),
                    guarded -> guarded.replaceOne(
                            Filters.eq("_id", 1),
                            new Document("a", 2),
                            apply(new ReplaceOptions(), option.getValue()))));
        }

        Map<String, Consumer<UpdateOptions>> update = new LinkedHashMap<>();
        update.put("no option", o -> {});
        update.put("upsert", o -> o.upsert(true));
        update.put("comment", o -> o.comment("caller's"));
        update.put("comment document", o -> o.comment(new BsonDocument("app", new BsonString("billing"))));
        update.put("let", o -> o.let(new Document("v", 1)));
        update.put("bypassDocumentValidation true", o -> o.bypassDocumentValidation(true));
        update.put("sort", o -> o.sort(Sorts.descending("a")));
        update.put("hintString", o -> o.hintString(HINT_STRING));
        update.put("collation", o -> o.collation(FRENCH));
        update.put(
                "comment, let, bypassDocumentValidation, upsert, hint and sort",
                o -> o.comment("all")
                        .let(new Document("v", 1))
                        .bypassDocumentValidation(true)
                        .upsert(true)
                        .hint(Indexes.ascending("a"))
                        .sort(Sorts.descending("a")));
        for (Map.Entry<String, Consumer<UpdateOptions>> option : update.entrySet()) {
            cases.add(new SingleCase(
                    "updateOne with " + option.getKey(),
                    WriteConcern.ACKNOWLEDGED,
                    raw -> raw.updateOne(Filters.eq("_id", 1), update(), apply(new UpdateOptions(), option.getValue())),
                    guarded -> guarded.updateOne(
                            Filters.eq("_id", 1), update(), apply(new UpdateOptions(), option.getValue()))));
            cases.add(new SingleCase(
                    "updateMany with " + option.getKey(),
                    WriteConcern.ACKNOWLEDGED,
                    raw -> raw.updateMany(Filters.gte("a", 1), update(), apply(new UpdateOptions(), option.getValue())),
                    guarded -> guarded.updateMany(
                            Filters.gte("a", 1), update(), apply(new UpdateOptions(), option.getValue()))));
        }
        cases.add(new SingleCase(
                "updateOne with arrayFilters",
                WriteConcern.ACKNOWLEDGED,
                raw -> raw.updateOne(
                        Filters.eq("_id", 1), arrayUpdate(), new UpdateOptions().arrayFilters(arrayFilters())),
                guarded -> guarded.updateOne(
                        Filters.eq("_id", 1), arrayUpdate(), new UpdateOptions().arrayFilters(arrayFilters()))));
        cases.add(new SingleCase(
                "updateOne (pipeline) with comment and upsert",
                WriteConcern.ACKNOWLEDGED,
                raw -> raw.updateOne(
                        Filters.eq("_id", 1),
                        pipeline(),
                        new UpdateOptions().comment("caller's").upsert(true)),
                guarded -> guarded.updateOne(
                        Filters.eq("_id", 1),
                        pipeline(),
                        new UpdateOptions().comment("caller's").upsert(true))));
        return cases.stream();
    }

    /** One single-write call, made afresh on each side. */
    record SingleCase(
            String name,
            WriteConcern writeConcern,
            Function<MongoCollection<Document>, ?> raw,
            Function<GuardedCollection<Document>, ?> guarded) {
        @Override
        public String toString() {
            return name;
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Random bulks.

    @Test
    void randomBulksOfEveryKindAndOption_sendTheDriversStatementsAndCommandFields() {
        System.out.println("WireEquivalenceTest random bulks: base seed " + BASE_SEED + ", " + BULKS + " bulks"
                + " (replay one with -Dwire.seed=<seed> -Dwire.bulks=1)");
        Map<String, List<Long>> seedsByKind = new LinkedHashMap<>();
        Map<String, Comparison> exampleByKind = new HashMap<>();
        int differing = 0;
        for (int i = 0; i < BULKS; i++) {
            long seed = BASE_SEED + i;
            RandomBulk shape = RandomBulk.of(seed);
            Comparison comparison = compare(
                    "random bulk, seed " + seed + ": " + shape.description,
                    shape.writeConcern,
                    raw -> {
                        RandomBulk fresh = RandomBulk.of(seed);
                        return raw.bulkWrite(fresh.models, fresh.options);
                    },
                    guarded -> {
                        RandomBulk fresh = RandomBulk.of(seed);
                        return guarded.execute(fresh.models, fresh.options);
                    });
            if (comparison.differences.isEmpty()) {
                continue;
            }
            differing++;
            for (String kind : comparison.differences.stream()
                    .map(Difference::kind)
                    .distinct()
                    .toList()) {
                seedsByKind.computeIfAbsent(kind, k -> new ArrayList<>()).add(seed);
                exampleByKind.putIfAbsent(kind, comparison);
            }
        }
        StringBuilder report = new StringBuilder();
        report.append(differing)
                .append(" of ")
                .append(BULKS)
                .append(" random bulks (base seed ")
                .append(BASE_SEED)
                .append(") were sent differently by the guard. Differences by kind (bulks, seeds):\n");
        seedsByKind.forEach((kind, seeds) -> report.append("  - ")
                .append(kind)
                .append(": ")
                .append(seeds.size())
                .append(" bulks, e.g. seeds ")
                .append(seeds.stream().limit(5).map(String::valueOf).collect(Collectors.joining(", ")))
                .append('\n'));
        Set<Comparison> shown = new HashSet<>();
        seedsByKind.keySet().forEach(kind -> {
            Comparison example = exampleByKind.get(kind);
            if (shown.size() < 6 && shown.add(example)) {
                report.append("\nFirst bulk with '").append(kind).append("':\n").append(example.report());
            }
        });
        assertThat(differing).withFailMessage(report::toString).isZero();
    }

    /**
     * A random bulk of 1 to 10 writes of every kind and option, with random bulk options and write concern, and
     * arrayFilters only with the update that uses their identifier. Pipeline updates are in {@link #everyKind()} and
     * one per bulk, not here (a seed replays the bulk it always drew).
     */
    static final class RandomBulk {
        final List<WriteModel<Document>> models = new ArrayList<>();
        final BulkWriteOptions options = new BulkWriteOptions();
        final WriteConcern writeConcern;
        final String description;
        private final Random random;
        /** Every write gets its own number: keys never repeat (see the class comment), filters never coincide. */
        private int number;

        private RandomBulk(long seed) {
            random = new Random(seed);
            int size = 1 + random.nextInt(10);
            List<String> kinds = new ArrayList<>();
            for (int i = 0; i < size; i++) {
                kinds.add(addWrite());
            }
            options.ordered(random.nextBoolean());
            switch (random.nextInt(3)) {
                case 0 -> options.bypassDocumentValidation(random.nextBoolean());
                default -> {}
            }
            switch (random.nextInt(4)) {
                case 0 -> options.comment("caller " + random.nextInt(100));
                case 1 -> options.comment(new BsonDocument("caller", new BsonInt32(random.nextInt(100))));
                default -> {}
            }
            if (random.nextInt(3) == 0) {
                options.let(new Document("limit", random.nextInt(100)));
            }
            writeConcern = List.of(WriteConcern.ACKNOWLEDGED, WriteConcern.W1, WriteConcern.MAJORITY)
                    .get(random.nextInt(3));
            description =
                    kinds + " " + options + " " + writeConcern.asDocument().toJson();
        }

        static RandomBulk of(long seed) {
            return new RandomBulk(seed);
        }

        private String addWrite() {
            int n = ++number;
            switch (random.nextInt(10)) {
                case 0:
                    models.add(new InsertOneModel<>(
                            new Document("_id", id(n)).append("n", n).append("a", random.nextInt(5))));
                    return "insertOne(_id)";
                case 1:
                    models.add(new InsertOneModel<>(
                            new Document("n", n).append("a", random.nextInt(5)).append("_id", id(n))));
                    return "insertOne(_id later)";
                case 2:
                    models.add(new InsertOneModel<>(
                            new Document("n", n).append("a", random.nextInt(5)).append("b", "x")));
                    return "insertOne(no _id)";
                case 3: {
                    ReplaceOptions o = new ReplaceOptions();
                    if (random.nextBoolean()) {
                        o.upsert(random.nextBoolean());
                    }
                    collationHintSort(o::collation, o::hint, o::hintString, o::sort);
                    if (random.nextInt(4) == 0) {
                        o.comment("model").let(new Document("v", 1)).bypassDocumentValidation(true);
                    }
                    models.add(new ReplaceOneModel<>(
                            filter(n, true), new Document("n", n).append("r", random.nextInt(5)), o));
                    return "replaceOne";
                }
                case 4:
                case 5:
                case 6:
                case 7: {
                    boolean many = random.nextBoolean();
                    boolean arrays = random.nextInt(4) == 0;
                    UpdateOptions o = new UpdateOptions();
                    if (!arrays && random.nextBoolean()) {
                        o.upsert(random.nextBoolean());
                    }
                    collationHintSort(o::collation, o::hint, o::hintString, o::sort);
                    if (arrays) {
                        o.arrayFilters(arrayFilters());
                    }
                    if (random.nextInt(4) == 0) {
                        o.comment("model").let(new Document("v", 1)).bypassDocumentValidation(true);
                    }
                    Bson filter = filter(n, !many);
                    Bson update = arrays ? arrayUpdate() : Updates.combine(Updates.set("u", n), Updates.inc("c", 1));
                    models.add(
                            many ? new UpdateManyModel<>(filter, update, o) : new UpdateOneModel<>(filter, update, o));
                    return many ? "updateMany" : "updateOne";
                }
                default: {
                    boolean many = random.nextBoolean();
                    DeleteOptions o = new DeleteOptions();
                    collationHintSort(o::collation, o::hint, o::hintString, sort -> {});
                    Bson filter = filter(n, !many);
                    models.add(many ? new DeleteManyModel<>(filter, o) : new DeleteOneModel<>(filter, o));
                    return many ? "deleteMany" : "deleteOne";
                }
            }
        }

        /** An id of one of several BSON types, distinct by server equality across the bulk. */
        private Object id(int n) {
            switch (random.nextInt(3)) {
                case 0:
                    return n;
                case 1:
                    return 1_000L + n;
                default:
                    return "id" + n;
            }
        }

        /** A keyed filter in one of the guard's forms, or one on a field no document of the bulk has. */
        private Bson filter(int n, boolean mayBeKeyed) {
            switch (mayBeKeyed ? random.nextInt(4) : 3) {
                case 0:
                    return Filters.eq("_id", id(n));
                case 1:
                    return new Document("_id", new Document("$eq", id(n)));
                case 2:
                    return Filters.and(Filters.eq("_id", id(n)), Filters.exists("gone", false));
                default:
                    return Filters.eq("k", n);
            }
        }

        private void collationHintSort(
                Consumer<Collation> collation, Consumer<Bson> hint, Consumer<String> hintString, Consumer<Bson> sort) {
            if (random.nextInt(4) == 0) {
                collation.accept(FRENCH);
            }
            switch (random.nextInt(4)) {
                case 0 -> hint.accept(Indexes.ascending("a"));
                case 1 -> hintString.accept(HINT_STRING);
                default -> {}
            }
            if (random.nextInt(4) == 0) {
                sort.accept(Sorts.descending("a"));
            }
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Running both sides and comparing what they sent.

    /** Runs the raw call on one fresh collection and the guarded call on another, and compares what each sent. */
    private static Comparison compare(
            String name,
            WriteConcern writeConcern,
            Function<MongoCollection<Document>, ?> raw,
            Function<GuardedCollection<Document>, ?> guarded) {
        int number = COLLECTIONS.incrementAndGet();
        MongoCollection<Document> rawCollection =
                database.getCollection("raw" + number).withWriteConcern(writeConcern);
        MongoCollection<Document> guardCollection =
                database.getCollection("guard" + number).withWriteConcern(writeConcern);
        GuardedCollection<Document> guardedCollection = fixture.wrap(guardCollection);
        try {
            fixture.sent.clear();
            String rawError = run(() -> raw.apply(rawCollection));
            Side rawSide = new Side(
                    "raw driver",
                    rawCollection.getNamespace().getCollectionName(),
                    List.copyOf(fixture.sent),
                    rawError);
            fixture.sent.clear();
            String guardError = run(() -> guarded.apply(guardedCollection));
            Side guardSide = new Side(
                    "guard", guardCollection.getNamespace().getCollectionName(), List.copyOf(fixture.sent), guardError);
            return new Comparison(name, writeConcern, rawSide, guardSide);
        } finally {
            rawCollection.drop();
            guardCollection.drop();
        }
    }

    /** Runs a call; returns what it threw (a server's refusal is fine here: the commands were captured when they started). */
    private static String run(Supplier<?> call) {
        try {
            call.get();
            return null;
        } catch (RuntimeException e) {
            return e.getClass().getSimpleName() + ": " + e.getMessage();
        }
    }

    private static void assertEquivalent(Comparison comparison) {
        assertThat(comparison.differences).withFailMessage(comparison::report).isEmpty();
    }

    /** What one side sent. */
    private static final class Side {
        final String label;
        final String collection;
        final List<BsonDocument> commands;
        final String error;

        Side(String label, String collection, List<BsonDocument> commands, String error) {
            this.label = label;
            this.collection = collection;
            this.commands = commands;
            this.error = error;
        }

        List<BsonDocument> commandsNamed(String name) {
            return commands.stream()
                    .filter(command -> command.getFirstKey().equals(name))
                    .toList();
        }

        /** The statements of every command of this type, concatenated in send order. */
        List<BsonDocument> statements(String name) {
            List<BsonDocument> statements = new ArrayList<>();
            for (BsonDocument command : commandsNamed(name)) {
                command.getArray(STATEMENTS.get(name), new BsonArray())
                        .forEach(statement -> statements.add(statement.asDocument()));
            }
            return statements;
        }
    }

    /** One difference the contract does not allow; {@code kind} names it without positions or values, for grouping. */
    record Difference(String kind, String detail) {}

    /** The differences between what the two sides sent. */
    private static final class Comparison {
        final String name;
        final WriteConcern writeConcern;
        final Side raw;
        final Side guard;
        final List<Difference> differences = new ArrayList<>();

        Comparison(String name, WriteConcern writeConcern, Side raw, Side guard) {
            this.name = name;
            this.writeConcern = writeConcern;
            this.raw = raw;
            this.guard = guard;
            if (raw.commands.isEmpty()) {
                differences.add(new Difference(
                        "the raw driver sent nothing",
                        "the raw driver sent no write command; the case is broken (" + raw.error + ")"));
            }
            for (String command : COMMANDS) {
                compareCommandFields(command);
                compareStatements(command);
            }
        }

        private void add(String kind, String detail) {
            differences.add(new Difference(kind, detail));
        }

        /** Every command of a type carries the same fields besides its statements: compare them (order aside). */
        private void compareCommandFields(String command) {
            List<BsonDocument> rawFields = distinctFields(raw, command);
            List<BsonDocument> guardFields = distinctFields(guard, command);
            if (rawFields.isEmpty() || guardFields.isEmpty()) {
                if (rawFields.isEmpty() != guardFields.isEmpty()) {
                    Side only = rawFields.isEmpty() ? guard : raw;
                    add(
                            command + " commands: sent by one side only",
                            "only the " + only.label + " sent " + command + " commands");
                }
                return;
            }
            if (rawFields.size() > 1) {
                add(
                        command + " commands: the raw driver's differ from each other",
                        "the raw driver's " + command + " commands carry different fields: "
                                + rawFields.stream()
                                        .map(WireEquivalenceTest::json)
                                        .toList());
            }
            for (BsonDocument fields : guardFields) {
                compareDocuments(command + " command", command + " command", rawFields.get(0), fields, false);
            }
        }

        /** The command's own fields, without statements and what the contract lets differ; one per distinct value. */
        private List<BsonDocument> distinctFields(Side side, String command) {
            Map<String, BsonDocument> distinct = new LinkedHashMap<>();
            // The driver puts a caller's comment on every command, and sends none of its own.
            boolean callerComment = raw.commands.stream().anyMatch(c -> c.containsKey("comment"));
            for (BsonDocument sent : side.commandsNamed(command)) {
                BsonDocument fields = new BsonDocument();
                for (Map.Entry<String, BsonValue> field : sent.entrySet()) {
                    String key = field.getKey();
                    if (key.equals(command)) {
                        if (!field.getValue().equals(new BsonString(side.collection))) {
                            add(
                                    command + " command: wrong collection",
                                    "the " + side.label + "'s " + command + " command names " + json(field.getValue())
                                            + ", not its collection " + side.collection);
                        }
                    } else if (!key.equals(STATEMENTS.get(command)) && !NOT_COMPARED.contains(key)) {
                        fields.put(key, field.getValue());
                    }
                }
                if (writeConcern.isServerDefault()) {
                    fields.remove("writeConcern");
                }
                if (side == guard
                        && !callerComment
                        && fields.isString("comment")
                        && fields.getString("comment").getValue().startsWith("mwg:")) {
                    fields.remove("comment"); // the guard's own comment, allowed when the caller gave none
                }
                BsonDocument sorted = new BsonDocument();
                fields.keySet().stream().sorted().forEach(key -> sorted.put(key, fields.get(key)));
                distinct.putIfAbsent(sorted.toJson(CANONICAL), sorted);
            }
            return new ArrayList<>(distinct.values());
        }

        /** Statements concatenated per command type: the same statements, in the same order, encoded the same. */
        private void compareStatements(String command) {
            List<BsonDocument> rawStatements = normalized(raw, command);
            List<BsonDocument> guardStatements = normalized(guard, command);
            if (rawStatements.size() != guardStatements.size()) {
                add(
                        command + " statements: count differs",
                        "the raw driver sent " + rawStatements.size() + " " + command + " statements, the guard "
                                + guardStatements.size());
            }
            // Pair statements by what they write to (filter, or inserted document), so that a reordering shows as one.
            List<String> rawIds =
                    rawStatements.stream().map(s -> identity(command, s)).toList();
            List<String> guardIds =
                    guardStatements.stream().map(s -> identity(command, s)).toList();
            List<int[]> pairs = new ArrayList<>();
            List<Integer> rawOnly = new ArrayList<>();
            List<Integer> guardOnly = new ArrayList<>();
            if (new HashSet<>(rawIds).size() == rawIds.size() && new HashSet<>(guardIds).size() == guardIds.size()) {
                Set<Integer> matched = new HashSet<>();
                for (int i = 0; i < rawIds.size(); i++) {
                    int j = guardIds.indexOf(rawIds.get(i));
                    if (j >= 0) {
                        pairs.add(new int[] {i, j});
                        matched.add(j);
                    } else {
                        rawOnly.add(i);
                    }
                }
                for (int j = 0; j < guardIds.size(); j++) {
                    if (!matched.contains(j)) {
                        guardOnly.add(j);
                    }
                }
                List<Integer> guardOrder = pairs.stream().map(pair -> pair[1]).toList();
                if (!guardOrder.equals(guardOrder.stream().sorted().toList())) {
                    add(
                            command + " statements: sent in another order",
                            "the guard sends the " + command + " statements in"
                                    + " another order: the raw driver's statements #0.." + (rawIds.size() - 1)
                                    + " are the guard's #"
                                    + guardOrder + "; raw driver order " + rawIds + ", guard order " + guardIds);
                }
                // What did not pair by identity is compared by position.
                while (!rawOnly.isEmpty() && !guardOnly.isEmpty()) {
                    pairs.add(new int[] {rawOnly.remove(0), guardOnly.remove(0)});
                }
            } else {
                for (int i = 0; i < Math.max(rawStatements.size(), guardStatements.size()); i++) {
                    if (i >= guardStatements.size()) {
                        rawOnly.add(i);
                    } else if (i >= rawStatements.size()) {
                        guardOnly.add(i);
                    } else {
                        pairs.add(new int[] {i, i});
                    }
                }
            }
            rawOnly.forEach(i -> add(
                    command + " statement: sent by the raw driver only",
                    "only the raw driver sent " + command + " statement " + json(rawStatements.get(i))));
            guardOnly.forEach(j -> add(
                    command + " statement: sent by the guard only",
                    "only the guard sent " + command + " statement " + json(guardStatements.get(j))));
            for (int[] pair : pairs) {
                String where = command + " statement #" + pair[0]
                        + (pair[0] == pair[1] ? "" : " (the guard's #" + pair[1] + ")");
                compareDocuments(
                        command + " statement", where, rawStatements.get(pair[0]), guardStatements.get(pair[1]), true);
            }
        }

        /**
         * The side's statements of one type; an insert's {@code _id} must be there and first (the driver writes it
         * first), then is moved first for the comparison, and a generated ObjectId is replaced by a placeholder.
         */
        private List<BsonDocument> normalized(Side side, String command) {
            List<BsonDocument> statements = side.statements(command);
            if (!command.equals("insert")) {
                return statements;
            }
            List<BsonDocument> normalized = new ArrayList<>();
            for (int i = 0; i < statements.size(); i++) {
                BsonDocument document = statements.get(i);
                List<String> keys = new ArrayList<>(document.keySet());
                if (!document.containsKey("_id")) {
                    add(
                            "insert statement: no _id",
                            "the " + side.label + "'s insert #" + i + " has no _id: " + json(document));
                    normalized.add(document);
                    continue;
                }
                if (!keys.get(0).equals("_id")) {
                    add(
                            "insert statement: _id is not the first field",
                            "the " + side.label + "'s insert #" + i + " has _id as field " + (keys.indexOf("_id") + 1)
                                    + " of " + keys + ", not first: " + json(document));
                }
                BsonValue id = document.get("_id");
                BsonDocument copy = new BsonDocument("_id", id.isObjectId() ? new BsonString(GENERATED_ID) : id);
                document.forEach((key, value) -> {
                    if (!key.equals("_id")) {
                        copy.put(key, value);
                    }
                });
                normalized.add(copy);
            }
            return normalized;
        }

        private static String identity(String command, BsonDocument statement) {
            if (!command.equals("insert")) {
                return json(statement.get("q", new BsonDocument()));
            }
            BsonValue id = statement.get("_id");
            if (id != null && !id.equals(new BsonString(GENERATED_ID))) {
                return "{_id: " + id.toString() + "}";
            }
            BsonDocument rest = statement.clone();
            rest.remove("_id");
            return json(rest);
        }

        /** Compares two documents: fields, values, BSON types and, when {@code ordered}, field order. */
        private void compareDocuments(
                String kind, String where, BsonDocument raw, BsonDocument guard, boolean ordered) {
            List<String> rawKeys = new ArrayList<>(raw.keySet());
            List<String> guardKeys = new ArrayList<>(guard.keySet());
            for (String key : rawKeys) {
                if (!guard.containsKey(key)) {
                    add(
                            kind + ": field '" + key + "' missing from the guard's",
                            where + ": the raw driver sends " + key + ": " + json(raw.get(key))
                                    + ", the guard sends no " + key);
                }
            }
            for (String key : guardKeys) {
                if (!raw.containsKey(key)) {
                    add(
                            kind + ": field '" + key + "' only in the guard's",
                            where + ": the guard sends " + key + ": " + json(guard.get(key))
                                    + ", the raw driver sends no " + key);
                }
            }
            List<String> rawCommon = rawKeys.stream().filter(guard::containsKey).toList();
            List<String> guardCommon =
                    guardKeys.stream().filter(raw::containsKey).toList();
            if (ordered && !rawCommon.equals(guardCommon)) {
                add(
                        kind + ": field order differs",
                        where + ": fields in another order: the raw driver's " + rawKeys + ", the guard's "
                                + guardKeys);
            }
            for (String key : rawCommon) {
                compareValues(kind + "." + key, where + "." + key, raw.get(key), guard.get(key), ordered);
            }
        }

        private void compareValues(String kind, String where, BsonValue raw, BsonValue guard, boolean ordered) {
            if (raw.getBsonType() != guard.getBsonType()) {
                add(
                        kind + ": BSON type differs",
                        where + ": the raw driver sends " + raw.getBsonType() + " " + json(raw) + ", the guard "
                                + guard.getBsonType() + " " + json(guard));
            } else if (raw.isDocument()) {
                compareDocuments(kind, where, raw.asDocument(), guard.asDocument(), ordered);
            } else if (raw.isArray()) {
                List<BsonValue> rawValues = raw.asArray().getValues();
                List<BsonValue> guardValues = guard.asArray().getValues();
                if (rawValues.size() != guardValues.size()) {
                    add(
                            kind + ": array length differs",
                            where + ": the raw driver sends " + json(raw) + ", the guard " + json(guard));
                }
                for (int i = 0; i < Math.min(rawValues.size(), guardValues.size()); i++) {
                    compareValues(kind + "[]", where + "[" + i + "]", rawValues.get(i), guardValues.get(i), ordered);
                }
            } else if (!raw.equals(guard)) {
                add(
                        kind + ": value differs",
                        where + ": the raw driver sends " + json(raw) + ", the guard " + json(guard));
            }
        }

        /** The differences, then both sides' commands in full. */
        String report() {
            StringBuilder report = new StringBuilder();
            report.append(name)
                    .append(": the guard's write commands differ from the raw driver's (collection write concern ")
                    .append(writeConcern.asDocument().toJson())
                    .append(")\n");
            differences.forEach(difference ->
                    report.append("  - ").append(difference.detail()).append('\n'));
            for (Side side : List.of(raw, guard)) {
                report.append(side.label)
                        .append(" sent ")
                        .append(side.commands.size())
                        .append(" command(s) on ")
                        .append(side.collection)
                        .append(side.error == null ? "" : " and threw " + side.error)
                        .append(":\n");
                side.commands.forEach(command ->
                        report.append("    ").append(command.toJson(READABLE)).append('\n'));
            }
            return report.toString();
        }
    }

    private static String json(BsonValue value) {
        if (value.isDocument()) {
            return value.asDocument().toJson(CANONICAL);
        }
        return new BsonDocument("v", value)
                .toJson(CANONICAL)
                .replaceFirst("^\\{\"v\": ", "")
                .replaceFirst("}$", "");
    }

    /** A guarded client whose write commands a test-side listener records (the guard only adds its own listener). */
    private static final class WireFixture implements AutoCloseable {
        final WriteGuard guard = WriteGuard.create(WriteGuardSettings.defaults());
        final List<BsonDocument> sent = new CopyOnWriteArrayList<>();
        final MongoClient client;

        WireFixture(String connectionString) {
            MongoClientSettings.Builder builder = MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(connectionString))
                    .applyToClusterSettings(c -> c.serverSelectionTimeout(10, TimeUnit.SECONDS))
                    .applyToSocketSettings(s -> s.readTimeout(5_000, TimeUnit.MILLISECONDS))
                    .addCommandListener(new CommandListener() {
                        @Override
                        public void commandStarted(CommandStartedEvent event) {
                            if (COMMANDS.contains(event.getCommandName())) {
                                sent.add(event.getCommand().clone());
                            }
                        }
                    });
            client = MongoClients.create(guard.configure(builder).build());
        }

        GuardedCollection<Document> wrap(MongoCollection<Document> collection) {
            return guard.guardCollection(client, collection);
        }

        @Override
        public void close() {
            client.close();
        }
    }
}
