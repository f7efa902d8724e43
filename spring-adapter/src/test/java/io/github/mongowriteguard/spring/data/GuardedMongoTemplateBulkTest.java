package io.github.mongowriteguard.spring.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.springframework.data.mongodb.core.query.Criteria.where;
import static org.springframework.data.mongodb.core.query.Query.query;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.exception.GuardedBulkWriteException;
import io.github.mongowriteguard.exception.WriteGuardException;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.ApplicationListener;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.dao.DataAccessException;
import org.springframework.data.annotation.Id;
import org.springframework.data.mongodb.BulkOperationException;
import org.springframework.data.mongodb.core.BulkOperations;
import org.springframework.data.mongodb.core.BulkOperations.BulkMode;
import org.springframework.data.mongodb.core.FindAndReplaceOptions;
import org.springframework.data.mongodb.core.MongoTemplate;
import org.springframework.data.mongodb.core.mapping.Field;
import org.springframework.data.mongodb.core.mapping.event.AfterSaveEvent;
import org.springframework.data.mongodb.core.mapping.event.BeforeConvertCallback;
import org.springframework.data.mongodb.core.mapping.event.BeforeConvertEvent;
import org.springframework.data.mongodb.core.mapping.event.BeforeSaveEvent;
import org.springframework.data.mongodb.core.mapping.event.MongoMappingEvent;
import org.springframework.data.mongodb.core.query.Query;
import org.springframework.data.mongodb.core.query.Update;
import org.springframework.data.util.Pair;

/**
 * The guarded {@link BulkOperations} against Spring Data's own, on the same emulated deployment: the same mapping,
 * results, errors and lifecycle events; plus what the guard adds (a server deadline on every write).
 */
class GuardedMongoTemplateBulkTest {
    private static EmulatedReplicaSet cluster;
    private static MongoClient guardedClient;
    private static MongoClient plainClient;
    private static final List<BsonDocument> sent = new CopyOnWriteArrayList<>();
    private MongoTemplate guarded;
    private MongoTemplate plain;

    @org.springframework.data.mongodb.core.mapping.Document("items")
    record Item(@Id String id, @Field("q") int qty, String name) {}

    @BeforeAll
    static void start() {
        cluster = EmulatedCluster.replicaSet().start();
        WriteGuard guard = WriteGuard.create();
        guardedClient = MongoClients.create(guard.configure(settings(b -> b.addCommandListener(new CommandListener() {
                    @Override
                    public void commandStarted(CommandStartedEvent event) {
                        if (List.of("insert", "update", "delete").contains(event.getCommandName())) {
                            sent.add(event.getCommand().clone());
                        }
                    }
                })))
                .build());
        plainClient = MongoClients.create(settings(b -> {}).build());
        GUARD = guard;
    }

    private static WriteGuard GUARD;

    private static MongoClientSettings.Builder settings(Consumer<MongoClientSettings.Builder> more) {
        MongoClientSettings.Builder builder = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(cluster.connectionString()))
                .applyToSocketSettings(s -> s.readTimeout(1500, TimeUnit.MILLISECONDS));
        more.accept(builder);
        return builder;
    }

    @AfterAll
    static void stop() {
        guardedClient.close();
        plainClient.close();
        cluster.close();
    }

    @BeforeEach
    void templates() {
        guarded = new GuardedMongoTemplate(guardedClient, "guarded", GUARD);
        plain = new MongoTemplate(plainClient, "plain");
        guarded.dropCollection(Item.class);
        plain.dropCollection(Item.class);
        sent.clear();
    }

    @Test
    void everyOperation_mapsAndCountsAsSpringDataDoes() {
        BulkWriteResult guardedResult =
                everyOperation(guarded.bulkOps(BulkMode.ORDERED, Item.class)).execute();
        BulkWriteResult plainResult =
                everyOperation(plain.bulkOps(BulkMode.ORDERED, Item.class)).execute();

        assertThat(guardedResult.getInsertedCount())
                .isEqualTo(plainResult.getInsertedCount())
                .isEqualTo(4);
        assertThat(guardedResult.getMatchedCount()).isEqualTo(plainResult.getMatchedCount());
        assertThat(guardedResult.getModifiedCount()).isEqualTo(plainResult.getModifiedCount());
        assertThat(guardedResult.getDeletedCount())
                .isEqualTo(plainResult.getDeletedCount())
                .isEqualTo(1);
        assertThat(guardedResult.getUpserts())
                .extracting(u -> u.getIndex())
                .isEqualTo(
                        plainResult.getUpserts().stream().map(u -> u.getIndex()).toList());
        assertThat(contents(guarded)).isEqualTo(contents(plain));
        assertThat(contents(guarded))
                .hasSize(6)
                .allMatch(d -> d.containsKey("q"))
                .noneMatch(d -> d.containsKey("qty"));
    }

    @Test
    void bulkOpsWithoutAMode_isAnIllegalArgumentException_asInSpringData() {
        Throwable plainError = catchThrowable(() -> plain.bulkOps(null, Item.class));
        Throwable guardedError = catchThrowable(() -> guarded.bulkOps(null, Item.class));

        assertThat(plainError).isInstanceOf(IllegalArgumentException.class);
        assertThat(guardedError).isExactlyInstanceOf(plainError.getClass()).hasMessage(plainError.getMessage());
    }

    @Test
    void anEmptyBulk_failsAsInSpringData_andAnEmptyInsertAllWritesNothing() {
        Throwable plainError =
                catchThrowable(() -> plain.bulkOps(BulkMode.ORDERED, Item.class).execute());
        Throwable guardedError = catchThrowable(
                () -> guarded.bulkOps(BulkMode.ORDERED, Item.class).execute());

        // Spring Data passes the empty list to the driver, which refuses it (IllegalArgumentException, untranslated)
        assertThat(plainError).isExactlyInstanceOf(IllegalArgumentException.class);
        assertThat(guardedError).isInstanceOf(plainError.getClass()).hasMessageContaining(plainError.getMessage());
        assertThat(plain.insertAll(List.of())).isEmpty();
        assertThat(guarded.insertAll(List.of())).isEmpty();
    }

    @Test
    void aWholeCommandError_isTranslatedAsSpringDataTranslatesIt() {
        Throwable plainError = failingInsert(plain, plainClient);
        Throwable guardedError = failingInsert(guarded, guardedClient);

        assertThat(plainError).isInstanceOf(DataAccessException.class);
        assertThat(guardedError).isExactlyInstanceOf(plainError.getClass());
        assertThat(guardedError.getCause())
                .isExactlyInstanceOf(plainError.getCause().getClass());
    }

    private static Throwable failingInsert(MongoTemplate template, MongoClient client) {
        client.getDatabase("admin")
                .runCommand(new Document("configureFailPoint", "failCommand")
                        .append("mode", new Document("times", 1))
                        .append("data", new Document("failCommands", List.of("insert")).append("errorCode", 2)));
        return catchThrowable(() -> template.bulkOps(BulkMode.ORDERED, Item.class)
                .insert(new Item("c", 1, "c"))
                .execute());
    }

    @Test
    void collectionNameAndStringVariants_followTheTemplate() {
        guarded.bulkOps(BulkMode.UNORDERED, "other")
                .insert(new Document("_id", 1))
                .execute();
        guarded.bulkOps(BulkMode.UNORDERED, Item.class, "third")
                .insert(new Item("x", 1, "x"))
                .execute();

        assertThat(guarded.getCollection("other").countDocuments()).isEqualTo(1);
        assertThat(guarded.getCollection("third").find().first()).containsEntry("q", 1);
    }

    @Test
    void everyWrite_carriesTheServerDeadline() {
        guarded.bulkOps(BulkMode.ORDERED, Item.class)
                .insert(new Item("a", 1, "a"))
                .updateOne(query(where("id").is("a")), new Update().inc("qty", 1))
                .execute();

        assertThat(sent).isNotEmpty().allMatch(command -> command.containsKey("maxTimeMS"));
        assertThat(sent).allMatch(command -> command.getNumber("maxTimeMS").longValue() == 1000); // 2/3 of 1.5 s
    }

    @Test
    void writeErrors_areABulkOperationException_withTheCallersIndices_likeSpringData() {
        guarded.insert(new Item("dup", 1, "d"));
        plain.insert(new Item("dup", 1, "d"));

        BulkOperationException guardedError = catchBulk(guarded);
        BulkOperationException plainError = catchBulk(plain);

        assertThat(guardedError.getErrors()).extracting(e -> e.getIndex()).containsExactly(2);
        assertThat(plainError.getErrors()).extracting(e -> e.getIndex()).containsExactly(2);
        assertThat(guardedError.getErrors().get(0).getCode())
                .isEqualTo(plainError.getErrors().get(0).getCode())
                .isEqualTo(11000);
        assertThat(guardedError.getCause()).isInstanceOf(GuardedBulkWriteException.class);
        // Spring's ORDERED stops at the failure; the guard ran the distinct keys as one unordered round, so the write
        // after the failure was applied too (the core's default; strict-ordered keeps the driver's meaning, below).
        assertThat(plainError.getResult().getInsertedCount()).isEqualTo(2);
        assertThat(guardedError.getResult().getInsertedCount()).isEqualTo(3);
    }

    /**
     * A multi-document update that failed part-way: Spring translates the guard's {@code GuardedWriteException} as it
     * translates the driver's {@code MongoWriteException} (the same exception class as the plain template's), and the
     * guard's exception, with its outcome, is in the cause chain.
     */
    @Test
    void aMultiDocumentUpdateFailingPartWay_isTranslatedAsTheDrivers_withTheOutcomeInTheCauses() {
        for (MongoTemplate template : List.of(guarded, plain)) {
            template.getCollection("items")
                    .insertMany(List.of(
                            new org.bson.Document("_id", "a").append("q", 1),
                            new org.bson.Document("_id", "b").append("q", "not a number"),
                            new org.bson.Document("_id", "c").append("q", 3)));
        }
        Update inc = new Update().inc("q", 1);

        Throwable guardedError = catchThrowable(() -> guarded.updateMulti(new Query(), inc, Item.class));
        Throwable plainError = catchThrowable(() -> plain.updateMulti(new Query(), inc, Item.class));

        assertThat(plainError).isNotNull();
        assertThat(guardedError).isExactlyInstanceOf(plainError.getClass());
        assertThat(guardedError)
                .hasRootCauseInstanceOf(io.github.mongowriteguard.exception.GuardedWriteException.class);
        io.github.mongowriteguard.exception.GuardedWriteException guardException =
                (io.github.mongowriteguard.exception.GuardedWriteException)
                        org.assertj.core.util.Throwables.getRootCause(guardedError);
        assertThat(guardException.outcome().outcome(0).mayHaveChangedDocuments())
                .isTrue();
        assertThat(guarded.getCollection("items")
                        .find(new org.bson.Document("_id", "a"))
                        .first())
                .containsEntry("q", 2);
    }

    @Test
    void strictOrdered_stopsAtTheFirstError_likeSpringData() {
        WriteGuard strict = WriteGuard.create(
                WriteGuardSettings.builder().strictOrdered(true).build());
        try (MongoClient client =
                MongoClients.create(strict.configure(settings(b -> {})).build())) {
            MongoTemplate template = new GuardedMongoTemplate(client, "strict", strict);
            template.dropCollection(Item.class);
            template.insert(new Item("dup", 1, "d"));

            BulkOperationException error = catchBulk(template);

            assertThat(error.getErrors()).extracting(e -> e.getIndex()).containsExactly(2);
            assertThat(error.getResult().getInsertedCount()).isEqualTo(2);
        }
    }

    @Test
    void guardExceptions_goThroughTheTemplatesTranslator_withTheGuardsExceptionAsCause() throws Exception {
        try (StallHandle stall =
                cluster.primary().stall(Stall.uninterruptible("guarded.items", Duration.ofSeconds(8)))) {
            // longer than the guard's 3 attempts of the same copy (each waits behind the stalled one), so that the
            // write ends unknown
            assertThatThrownBy(() -> guarded.bulkOps(BulkMode.ORDERED, Item.class)
                            .insert(new Item("s", 1, "s"))
                            .execute())
                    .isInstanceOf(DataAccessException.class)
                    .hasCauseInstanceOf(WriteGuardException.class);
        }
    }

    @Test
    void lifecycleEventsAndCallbacks_asSpringData() {
        List<String> events = new ArrayList<>();
        GenericApplicationContext context = new GenericApplicationContext();
        context.registerBean("events", ApplicationListener.class, () -> (ApplicationListener<MongoMappingEvent<?>>)
                event -> events.add(event.getClass().getSimpleName()));
        context.registerBean(
                "renamer", BeforeConvertCallback.class, () -> (BeforeConvertCallback<Item>) (item, collection) ->
                        new Item(item.id(), item.qty(), item.name().toUpperCase()));
        context.refresh();
        guarded.setApplicationContext(context);

        guarded.bulkOps(BulkMode.ORDERED, Item.class)
                .insert(new Item("e", 1, "e"))
                .replaceOne(
                        query(where("id").is("f")),
                        new Item("f", 2, "f"),
                        FindAndReplaceOptions.options().upsert())
                .updateOne(query(where("id").is("e")), new Update().set("qty", 3))
                .execute();

        assertThat(events)
                .containsExactly(
                        BeforeConvertEvent.class.getSimpleName(), BeforeConvertEvent.class.getSimpleName(),
                        BeforeSaveEvent.class.getSimpleName(), BeforeSaveEvent.class.getSimpleName(),
                        AfterSaveEvent.class.getSimpleName(), AfterSaveEvent.class.getSimpleName());
        assertThat(guarded.findById("e", Item.class)).isEqualTo(new Item("e", 3, "E"));
        assertThat(guarded.findById("f", Item.class)).isEqualTo(new Item("f", 2, "F"));
        context.close();
    }

    private static BulkOperationException catchBulk(MongoTemplate template) {
        try {
            template.bulkOps(BulkMode.ORDERED, Item.class)
                    .insert(List.of(
                            new Item("n1", 1, "n"),
                            new Item("n2", 1, "n"),
                            new Item("dup", 2, "x"),
                            new Item("n3", 1, "n")))
                    .execute();
        } catch (BulkOperationException e) {
            return e;
        }
        throw new AssertionError("no BulkOperationException");
    }

    private static BulkOperations everyOperation(BulkOperations bulk) {
        return bulk.insert(new Item("a", 1, "apple"))
                .insert(List.of(new Item("b", 2, "banana"), new Item("c", 3, "cherry"), new Item("d", 4, "date")))
                .updateOne(query(where("id").is("a")), new Update().set("qty", 10))
                .updateOne(List.of(Pair.of(query(where("id").is("b")), new Update().inc("qty", 1))))
                .updateMulti(query(where("qty").gte(3)), new Update().set("name", "many"))
                .updateMulti(List.of(Pair.of(query(where("name").is("many")), new Update().inc("qty", 100))))
                .upsert(query(where("id").is("u")), new Update().set("qty", 7))
                .upsert(List.of(Pair.of(query(where("id").is("v")), new Update().set("qty", 8))))
                .replaceOne(query(where("id").is("c")), new Item("c", 30, "cherry!"))
                .replaceOne(
                        query(where("id").is("r")),
                        new Item("r", 5, "raspberry"),
                        FindAndReplaceOptions.options().upsert())
                .remove(query(where("id").is("d")))
                .remove(List.of(query(where("qty").is(-1))));
    }

    private static List<Document> contents(MongoTemplate template) {
        List<Document> docs = new ArrayList<>();
        template.getCollection("items").find().sort(new Document("_id", 1)).forEach(d -> {
            d.remove("_class");
            docs.add(d);
        });
        return docs;
    }
}
