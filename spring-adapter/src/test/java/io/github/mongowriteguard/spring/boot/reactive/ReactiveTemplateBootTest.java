package io.github.mongowriteguard.spring.boot.reactive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.data.mongodb.core.query.Criteria.where;
import static org.springframework.data.mongodb.core.query.Query.query;

import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.result.DeleteResult;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoClients;
import io.github.mongowriteguard.test.EmulatedMongo;
import io.github.mongowriteguard.test.EmulatedMongo.ShardedCollection;
import io.github.mongowriteguard.test.EmulatedMongoCluster;
import java.util.List;
import java.util.function.Function;
import java.util.stream.IntStream;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.data.annotation.Id;
import org.springframework.data.mongodb.core.BulkOperations.BulkMode;
import org.springframework.data.mongodb.core.FindAndReplaceOptions;
import org.springframework.data.mongodb.core.ReactiveBulkOperations;
import org.springframework.data.mongodb.core.ReactiveMongoTemplate;
import org.springframework.data.mongodb.core.query.Query;
import org.springframework.data.mongodb.repository.ReactiveMongoRepository;
import org.springframework.data.mongodb.repository.config.EnableReactiveMongoRepositories;
import org.springframework.data.mongodb.repository.support.ReactiveMongoRepositoryFactory;

/**
 * A reactive application (it writes through Spring Boot's {@code ReactiveMongoTemplate} and a
 * {@code ReactiveMongoRepository}, nothing else) on an emulated 5-shard cluster, {@code shop.inventory} hashed on
 * {@code _id}: the auto-configured template writes through the guard, and every write gives what Spring's plain
 * template gives (a plain {@code ReactiveMongoTemplate} on a client the guard never saw, on the same collection).
 */
@SpringBootTest
@EmulatedMongo(
        shards = 5,
        database = "shop",
        shardedCollections = @ShardedCollection(namespace = "shop.inventory", key = "{_id: \"hashed\"}"))
class ReactiveTemplateBootTest {
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableReactiveMongoRepositories(
            considerNestedRepositories = true,
            basePackageClasses = ReactiveTemplateBootTest.class)
    static class Application {}

    @org.springframework.data.mongodb.core.mapping.Document("inventory")
    record Item(@Id Integer id, String name, int qty) {}

    interface ItemRepository extends ReactiveMongoRepository<Item, Integer> {}

    @Autowired
    ReactiveMongoTemplate reactiveTemplate;

    @Autowired
    ItemRepository repository;

    @Autowired
    EmulatedMongoCluster mongo;

    MongoClient plainClient;
    ReactiveMongoTemplate plainTemplate;

    @BeforeEach
    void reset() {
        plainClient = MongoClients.create(mongo.connectionString());
        plainTemplate = new ReactiveMongoTemplate(plainClient, "shop");
        clear();
        mongo.resetCounters();
    }

    @AfterEach
    void close() {
        plainClient.close();
    }

    private void clear() {
        plainTemplate.remove(new Query(), "inventory").block();
    }

    /**
     * The collection's documents, read with the synchronous driver: the reactive driver's {@code getMore} of a cursor
     * over more than one batch fails on the emulated mongos ("Illegal number to return: 0", a testkit gap, not the
     * guard's; the reads are the driver's own).
     */
    private List<Document> documents() {
        try (com.mongodb.client.MongoClient reader = com.mongodb.client.MongoClients.create(mongo.connectionString())) {
            return reader.getDatabase("shop")
                    .getCollection("inventory")
                    .find()
                    .sort(new Document("_id", 1))
                    .into(new java.util.ArrayList<>());
        }
    }

    private static BulkWriteResult upsert1000(ReactiveBulkOperations bulk) {
        for (int i = 0; i < 1000; i++) {
            bulk.replaceOne(
                    query(where("_id").is(i)),
                    new Document("qty", i),
                    FindAndReplaceOptions.options().upsert());
        }
        return bulk.execute().block();
    }

    /** Runs a write through the guarded template and, on the same collection emptied again, through the plain one. */
    private <R> void sameAsPlain(Function<ReactiveMongoTemplate, R> write) {
        R guarded = write.apply(reactiveTemplate);
        List<Document> guardedDocuments = documents();
        clear();
        R plain = write.apply(plainTemplate);
        assertThat(guarded).isEqualTo(plain);
        assertThat(guardedDocuments).isEqualTo(documents());
    }

    @Test
    void orderedBulkOf1000UpsertsById_isFiveMongosRoundTrips_againstAbout800Plain() {
        BulkWriteResult guarded = upsert1000(reactiveTemplate.bulkOps(BulkMode.ORDERED, "inventory"));
        long guardedTrips = mongo.roundTrips();
        List<Document> guardedDocuments = documents();
        clear();
        mongo.resetCounters();
        BulkWriteResult plain = upsert1000(plainTemplate.bulkOps(BulkMode.ORDERED, "inventory"));
        long plainTrips = mongo.roundTrips();

        assertThat(guardedTrips).isEqualTo(5);
        assertThat(plainTrips).isGreaterThan(700); // about 1 + 999 x (1 - 1/5)
        assertThat(guarded.getUpserts()).hasSize(1000);
        assertThat(guarded.getMatchedCount()).isEqualTo(plain.getMatchedCount());
        assertThat(guarded.getUpserts().size()).isEqualTo(plain.getUpserts().size());
        assertThat(guardedDocuments).hasSize(1000).isEqualTo(documents());
    }

    @Test
    void singleWrites_carryTheGuardsDeadline() {
        reactiveTemplate.insert(new Document("_id", "one"), "inventory").block();
        reactiveTemplate
                .updateFirst(
                        query(where("_id").is("one")),
                        org.springframework.data.mongodb.core.query.Update.update("qty", 2),
                        "inventory")
                .block();

        // no socket timeout on @EmulatedMongo: the default server deadline, 10 s
        assertThat(mongo.sharded().mongosTruth().commands("insert"))
                .isNotEmpty()
                .allSatisfy(command -> assertThat(command.maxTimeMs()).isEqualTo(10_000L));
        assertThat(mongo.sharded().mongosTruth().commands("update"))
                .isNotEmpty()
                .allSatisfy(command -> assertThat(command.maxTimeMs()).isEqualTo(10_000L));
    }

    @Test
    void insertAll_sameAsPlain() {
        List<Item> items = IntStream.range(0, 300)
                .mapToObj(i -> new Item(i, "item" + i, i % 7))
                .toList();
        sameAsPlain(template -> template.insertAll(items).collectList().block());
        assertThat(mongo.sharded().mongosTruth().commands("insert"))
                .isNotEmpty()
                .anySatisfy(command -> assertThat(command.maxTimeMs()).isEqualTo(10_000L));
    }

    @Test
    void repositorySaveAll_sameAsPlain() {
        List<Item> seed =
                IntStream.range(0, 100).mapToObj(i -> new Item(i, "old", 0)).toList();
        List<Item> changed =
                IntStream.range(50, 150).mapToObj(i -> new Item(i, "new", i)).toList();
        ItemRepository plainRepository =
                new ReactiveMongoRepositoryFactory(plainTemplate).getRepository(ItemRepository.class);

        sameAsPlain(template -> {
            ItemRepository repo = template == reactiveTemplate ? repository : plainRepository;
            return List.of(
                    repo.saveAll(seed).collectList().block(),
                    repo.saveAll(changed).collectList().block());
        });
        assertThat(mongo.sharded().mongosTruth().commands("update"))
                .isNotEmpty()
                .anySatisfy(command -> assertThat(command.maxTimeMs()).isEqualTo(10_000L));
    }

    @Test
    void removeByQuery_sameAsPlain() {
        sameAsPlain(template -> {
            template.insert(
                            IntStream.range(0, 200)
                                    .mapToObj(i -> new Document("_id", i).append("qty", i % 5))
                                    .toList(),
                            "inventory")
                    .collectList()
                    .block();
            DeleteResult removed =
                    template.remove(query(where("qty").is(3)), "inventory").block();
            return removed.getDeletedCount();
        });
        assertThat(mongo.sharded().mongosTruth().commands("delete"))
                .isNotEmpty()
                .anySatisfy(command -> assertThat(command.maxTimeMs()).isEqualTo(10_000L));
    }

    /** The exception a write signals, for the plain and the guarded template alike. */
    private static Class<?> failure(reactor.core.publisher.Mono<?> write) {
        try {
            write.block();
        } catch (RuntimeException e) {
            return e.getClass();
        }
        return Void.class;
    }

    @Test
    void duplicateKey_ofAnInsertAndOfABulk_isTranslatedAsForThePlainTemplate() {
        sameAsPlain(template -> {
            template.insert(new Document("_id", 1), "inventory").block();
            List<Class<?>> failures = List.of(
                    failure(template.insert(new Document("_id", 1), "inventory")),
                    failure(template.bulkOps(BulkMode.ORDERED, "inventory")
                            .insert(List.of(new Document("_id", 2), new Document("_id", 1)))
                            .execute()));
            assertThat(failures).doesNotContain(Void.class);
            return failures;
        });
        assertThat(mongo.sharded().mongosTruth().commands("insert"))
                .anySatisfy(command -> assertThat(command.maxTimeMs()).isEqualTo(10_000L));
    }
}
