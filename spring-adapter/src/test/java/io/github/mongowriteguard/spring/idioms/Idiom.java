package io.github.mongowriteguard.spring.idioms;

import static org.springframework.data.mongodb.core.query.Criteria.where;
import static org.springframework.data.mongodb.core.query.Query.query;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;
import java.util.stream.IntStream;
import org.bson.Document;
import org.springframework.data.annotation.Id;
import org.springframework.data.annotation.Version;
import org.springframework.data.mongodb.core.BulkOperations;
import org.springframework.data.mongodb.core.BulkOperations.BulkMode;
import org.springframework.data.mongodb.core.FindAndReplaceOptions;
import org.springframework.data.mongodb.core.MongoTemplate;
import org.springframework.data.mongodb.core.ReactiveBulkOperations;
import org.springframework.data.mongodb.core.ReactiveMongoTemplate;
import org.springframework.data.mongodb.core.query.Update;
import org.springframework.data.mongodb.repository.MongoRepository;
import org.springframework.data.mongodb.repository.ReactiveMongoRepository;

/**
 * One write idiom people write, run the same way through the guard and plain: Spring Data's {@code bulkOps},
 * {@code MongoTemplate} and {@code MongoRepository}, their reactive counterparts ({@code ReactiveMongoTemplate},
 * {@code ReactiveMongoRepository}), and the driver. Every idiom writes {@link #N} documents (or
 * calls {@link #N} times) into a collection of its own, {@code orders}, seeded first with N documents when it
 * updates or removes.
 *
 * @param group  the API, for the table's sections
 * @param name   what the caller writes
 * @param seeded whether the collection holds N documents ({@code _id} 0..N-1, version 0) before the idiom runs
 * @param calls  1 for an idiom that writes its N documents in one call; {@link #CALLS} for one that writes one
 *               document per call, measured over that many calls
 * @param run    the idiom, against one side
 */
record Idiom(String group, String name, boolean seeded, int calls, Run run) {
    static final int N = 1_000;
    /**
     * Calls made by an idiom that writes one document per call: each call is one client command to one shard, so the
     * matrix measures {@value} calls and scales to N (the emulated cluster answers a few hundred calls a second).
     */
    static final int CALLS = 100;

    Idiom(String group, String name, boolean seeded, Run run) {
        this(group, name, seeded, 1, run);
    }

    @FunctionalInterface
    interface Run {
        void on(Side side);
    }

    /**
     * What an idiom writes with: the template, a repository, their reactive counterparts (on the side's reactive
     * client) and the driver's collection of one side.
     */
    interface Side {
        MongoTemplate template();

        OrderRepository repository();

        ReactiveMongoTemplate reactiveTemplate();

        ReactiveOrderRepository reactiveRepository();

        MongoCollection<Document> collection();
    }

    /** The entity: an explicit {@code Integer} id and optimistic locking, as in many services. */
    @org.springframework.data.mongodb.core.mapping.Document("orders")
    static final class Order {
        @Id
        Integer id;

        String state;
        int qty;

        @Version
        Long version;

        Order() {}

        Order(Integer id, String state, int qty, Long version) {
            this.id = id;
            this.state = state;
            this.qty = qty;
            this.version = version;
        }
    }

    interface OrderRepository extends MongoRepository<Order, Integer> {}

    interface ReactiveOrderRepository extends ReactiveMongoRepository<Order, Integer> {}

    static Order fresh(int i) {
        return new Order(i, "new", i % 7, null);
    }

    static Order existing(int i) {
        return new Order(i, "paid", i % 7, 0L);
    }

    static Update pay() {
        return new Update().set("state", "paid").inc("qty", 1);
    }

    private static Idiom bulk(String name, boolean seeded, BulkStep step) {
        return new Idiom("Spring `bulkOps(ORDERED)`", name, seeded, side -> {
            BulkOperations bulk = side.template().bulkOps(BulkMode.ORDERED, Order.class);
            for (int i = 0; i < N; i++) {
                step.add(bulk, i);
            }
            bulk.execute();
        });
    }

    @FunctionalInterface
    private interface BulkStep {
        void add(BulkOperations bulk, int i);
    }

    private static Idiom reactiveBulk(String name, boolean seeded, ReactiveBulkStep step) {
        return new Idiom("Spring reactive `bulkOps(ORDERED)`", name, seeded, side -> {
            ReactiveBulkOperations bulk = side.reactiveTemplate().bulkOps(BulkMode.ORDERED, Order.class);
            for (int i = 0; i < N; i++) {
                step.add(bulk, i);
            }
            bulk.execute().block();
        });
    }

    @FunctionalInterface
    private interface ReactiveBulkStep {
        void add(ReactiveBulkOperations bulk, int i);
    }

    private static Idiom template(String name, boolean seeded, TemplateStep step) {
        return new Idiom("`MongoTemplate`", name, seeded, CALLS, side -> {
            for (int i = 0; i < CALLS; i++) {
                step.call(side.template(), i);
            }
        });
    }

    @FunctionalInterface
    private interface TemplateStep {
        void call(MongoTemplate template, int i);
    }

    private static Idiom driverBulk(String name, boolean seeded, IntFunction<WriteModel<Document>> model) {
        return new Idiom("driver", name, seeded, side -> {
            List<WriteModel<Document>> models = new ArrayList<>(N);
            for (int i = 0; i < N; i++) {
                models.add(model.apply(i));
            }
            side.collection().bulkWrite(models, new BulkWriteOptions().ordered(true));
        });
    }

    private static List<Order> all(IntFunction<Order> order) {
        return IntStream.range(0, N).mapToObj(order).toList();
    }

    /** The idioms of the matrix, in the table's order. */
    static List<Idiom> all() {
        return List.of(
                bulk("insert", false, (bulk, i) -> bulk.insert(fresh(i))),
                bulk(
                        "upsert(query(where(\"_id\").is(id)), update)",
                        false,
                        (bulk, i) -> bulk.upsert(query(where("_id").is(i)), pay())),
                bulk(
                        "updateOne(query(where(\"_id\").is(id)), update)",
                        true,
                        (bulk, i) -> bulk.updateOne(query(where("_id").is(i)), pay())),
                bulk(
                        "updateMulti(query(where(\"_id\").is(id)), update)",
                        true,
                        (bulk, i) -> bulk.updateMulti(query(where("_id").is(i)), pay())),
                bulk(
                        "replaceOne(query(where(\"_id\").is(id)), entity, upsert())",
                        false,
                        (bulk, i) -> bulk.replaceOne(
                                query(where("_id").is(i)),
                                existing(i),
                                FindAndReplaceOptions.options().upsert())),
                bulk(
                        "remove(query(where(\"_id\").is(id)))",
                        true,
                        (bulk, i) -> bulk.remove(query(where("_id").is(i)))),
                template("insert(entity)", false, (template, i) -> template.insert(fresh(i))),
                new Idiom(
                        "`MongoTemplate`",
                        "insertAll(entities)",
                        false,
                        side -> side.template().insertAll(all(Idiom::fresh))),
                template("save(entity) (existing, versioned)", true, (template, i) -> template.save(existing(i))),
                template(
                        "upsert(query(where(\"_id\").is(id)), update, Order.class)",
                        false,
                        (template, i) -> template.upsert(query(where("_id").is(i)), pay(), Order.class)),
                template(
                        "updateFirst(query(where(\"_id\").is(id)), update, Order.class)",
                        true,
                        (template, i) -> template.updateFirst(query(where("_id").is(i)), pay(), Order.class)),
                template(
                        "updateMulti(query(where(\"_id\").is(id)), update, Order.class)",
                        true,
                        (template, i) -> template.updateMulti(query(where("_id").is(i)), pay(), Order.class)),
                template(
                        "remove(query(where(\"_id\").is(id)), Order.class)",
                        true,
                        (template, i) -> template.remove(query(where("_id").is(i)), Order.class)),
                template("remove(entity)", true, (template, i) -> template.remove(existing(i))),
                template(
                        "findAndModify(query(where(\"_id\").is(id)), update, Order.class)",
                        true,
                        (template, i) ->
                                template.findAndModify(query(where("_id").is(i)), pay(), Order.class)),
                template(
                        "findAndReplace(query(where(\"_id\").is(id)), entity)",
                        true,
                        (template, i) ->
                                template.findAndReplace(query(where("_id").is(i)), existing(i))),
                template(
                        "findAllAndRemove(query(where(\"_id\").is(id)), Order.class)",
                        true,
                        (template, i) ->
                                template.findAllAndRemove(query(where("_id").is(i)), Order.class)),
                new Idiom("`MongoRepository`", "save(entity) (existing, versioned)", true, CALLS, side -> {
                    for (int i = 0; i < CALLS; i++) {
                        side.repository().save(existing(i));
                    }
                }),
                new Idiom(
                        "`MongoRepository`",
                        "saveAll(new entities)",
                        false,
                        side -> side.repository().saveAll(all(Idiom::fresh))),
                new Idiom(
                        "`MongoRepository`",
                        "saveAll(existing entities)",
                        true,
                        CALLS,
                        side -> side.repository()
                                .saveAll(IntStream.range(0, CALLS)
                                        .mapToObj(Idiom::existing)
                                        .toList())),
                new Idiom("`MongoRepository`", "deleteById(id)", true, CALLS, side -> {
                    for (int i = 0; i < CALLS; i++) {
                        side.repository().deleteById(i);
                    }
                }),
                new Idiom(
                        "`MongoRepository`",
                        "deleteAllById(ids)",
                        true,
                        side -> side.repository()
                                .deleteAllById(IntStream.range(0, N).boxed().toList())),
                new Idiom(
                        "driver",
                        "insertMany(documents)",
                        false,
                        side -> side.collection()
                                .insertMany(IntStream.range(0, N)
                                        .mapToObj(i -> new Document("_id", i).append("state", "new"))
                                        .toList())),
                driverBulk(
                        "bulkWrite(UpdateOneModel(eq(\"_id\", id), update, upsert))",
                        false,
                        i -> new UpdateOneModel<>(
                                Filters.eq("_id", i), Updates.set("state", "paid"), new UpdateOptions().upsert(true))),
                driverBulk(
                        "bulkWrite(ReplaceOneModel(eq(\"_id\", id), document, upsert))",
                        false,
                        i -> new ReplaceOneModel<>(
                                Filters.eq("_id", i),
                                new Document("_id", i).append("state", "paid"),
                                new ReplaceOptions().upsert(true))),
                driverBulk(
                        "bulkWrite(UpdateManyModel(eq(\"_id\", id), update))",
                        true,
                        i -> new UpdateManyModel<>(Filters.eq("_id", i), Updates.inc("qty", 1))),
                driverBulk(
                        "bulkWrite(DeleteManyModel(eq(\"_id\", id)))",
                        true,
                        i -> new DeleteManyModel<>(Filters.eq("_id", i))),
                reactiveBulk(
                        "upsert(query(where(\"_id\").is(id)), update)",
                        false,
                        (bulk, i) -> bulk.upsert(query(where("_id").is(i)), pay())),
                reactiveBulk(
                        "updateMulti(query(where(\"_id\").is(id)), update)",
                        true,
                        (bulk, i) -> bulk.updateMulti(query(where("_id").is(i)), pay())),
                reactiveBulk(
                        "remove(query(where(\"_id\").is(id)))",
                        true,
                        (bulk, i) -> bulk.remove(query(where("_id").is(i)))),
                new Idiom(
                        "`ReactiveMongoTemplate`",
                        "insertAll(entities)",
                        false,
                        side -> side.reactiveTemplate()
                                .insertAll(all(Idiom::fresh))
                                .blockLast()),
                new Idiom(
                        "`ReactiveMongoRepository`",
                        "saveAll(new entities)",
                        false,
                        side -> side.reactiveRepository()
                                .saveAll(all(Idiom::fresh))
                                .blockLast()));
    }
}
