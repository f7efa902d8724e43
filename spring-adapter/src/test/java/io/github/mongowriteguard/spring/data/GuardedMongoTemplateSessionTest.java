package io.github.mongowriteguard.spring.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.data.mongodb.core.query.Criteria.where;
import static org.springframework.data.mongodb.core.query.Query.query;

import com.mongodb.ClientSessionOptions;
import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.spring.data.TemplateEntities.Item;
import io.github.mongowriteguard.spring.data.TemplateEntities.Versioned;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.data.mongodb.MongoDatabaseFactory;
import org.springframework.data.mongodb.MongoTransactionManager;
import org.springframework.data.mongodb.core.BulkOperations.BulkMode;
import org.springframework.data.mongodb.core.FindAndModifyOptions;
import org.springframework.data.mongodb.core.MongoOperations;
import org.springframework.data.mongodb.core.MongoTemplate;
import org.springframework.data.mongodb.core.SimpleMongoClientDatabaseFactory;
import org.springframework.data.mongodb.core.query.Update;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Sessions: a {@code withSession(...)} template writes through the guard on the caller's session (its {@code lsid} on
 * every write and read, the guard's deadline on every write), and a {@code MongoTransactionManager} transaction's
 * writes are the driver's own calls on the transaction's session, exactly as the plain template sends them.
 */
class GuardedMongoTemplateSessionTest {
    private static final List<String> SESSION_COMMANDS =
            List.of("insert", "update", "delete", "findAndModify", "find", "commitTransaction", "abortTransaction");

    /** The deployment the templates talk to: a replica set here, a sharded cluster in the sharded subclass. */
    static AutoCloseable deployment;

    static String connectionString;
    /** Prepares a freshly dropped database before each test (the sharded subclass shards its collections). */
    static java.util.function.Consumer<String> prepareDatabase = database -> {};

    private static WriteGuard guard;
    private static MongoClient guardedClient;
    private static MongoClient plainClient;
    private static final List<BsonDocument> sent = new CopyOnWriteArrayList<>();
    private static final List<BsonDocument> plainSent = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void start() {
        EmulatedReplicaSet set = EmulatedCluster.replicaSet().start();
        startOn(set, set.connectionString(), database -> {});
    }

    static void startOn(AutoCloseable started, String connection, java.util.function.Consumer<String> prepare) {
        deployment = started;
        connectionString = connection;
        prepareDatabase = prepare;
        guard = WriteGuard.create();
        guardedClient = MongoClients.create(
                guard.configure(settings().addCommandListener(recordTo(sent))).build());
        plainClient = MongoClients.create(
                settings().addCommandListener(recordTo(plainSent)).build());
    }

    private static MongoClientSettings.Builder settings() {
        return MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(connectionString))
                .applyToSocketSettings(s -> s.readTimeout(1500, TimeUnit.MILLISECONDS));
    }

    private static CommandListener recordTo(List<BsonDocument> commands) {
        return new CommandListener() {
            @Override
            public void commandStarted(CommandStartedEvent event) {
                // Not the guard's read of a collection's shard key (config.collections, once per namespace): the
                // caller's reads and writes are what must run on the caller's session.
                if (SESSION_COMMANDS.contains(event.getCommandName())
                        && !event.getDatabaseName().equals("config")) {
                    commands.add(event.getCommand().clone());
                }
            }
        };
    }

    @AfterAll
    static void stop() {
        guardedClient.close();
        plainClient.close();
        try {
            deployment.close();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @BeforeEach
    void seed() {
        for (String database : List.of("guarded", "plain")) {
            plainClient.getDatabase(database).drop();
            prepareDatabase.accept(database);
            plainClient
                    .getDatabase(database)
                    .getCollection("versioned")
                    .insertOne(new Document("_id", "v1").append("name", "V").append("version", 3L));
        }
        sent.clear();
        plainSent.clear();
    }

    /** One of every write of the template, and reads, on whatever template (session-bound or not) it is given. */
    private static List<Object> everyWrite(MongoOperations template) {
        List<Object> results = new ArrayList<>();
        results.add(template.insert(new Item("a", 1, "A")));
        results.add(template.insert(List.of(new Item("b", 2, "B"), new Item("c", 3, "C")), Item.class));
        results.add(template.save(new Item("a", 5, "A5")));
        results.add(template.save(new Versioned("v1", "V2", 3L)));
        results.add(template.updateFirst(query(where("id").is("b")), new Update().inc("qty", 1), Item.class));
        results.add(template.updateMulti(query(where("qty").gte(3)), new Update().set("name", "many"), Item.class));
        results.add(template.upsert(
                query(where("id").is("u")), new Update().set("qty", 7).set("name", "U"), Item.class));
        results.add(template.findAndModify(
                query(where("id").is("a")),
                new Update().inc("qty", 1),
                FindAndModifyOptions.options().returnNew(true),
                Item.class));
        results.add(template.findAndReplace(query(where("id").is("b")), new Item("b", 20, "B2")));
        results.add(template.findAndRemove(query(where("id").is("c")), Item.class));
        results.add(template.remove(query(where("id").is("u")), Item.class));
        results.add(template.bulkOps(BulkMode.ORDERED, Item.class)
                .insert(new Item("d", 4, "D"))
                .updateOne(query(where("id").is("d")), new Update().inc("qty", 1))
                .execute()
                .getModifiedCount());
        results.add(template.findById("a", Item.class));
        results.add(template.findAll(Item.class));
        return results;
    }

    @Test
    void withSession_everyWriteIsGuarded_onTheCallersSession_andReturnsWhatSpringsDoes() {
        GuardedMongoTemplate guarded = new GuardedMongoTemplate(guardedClient, "guarded", guard);
        MongoTemplate plain = new MongoTemplate(plainClient, "plain");
        try (ClientSession session = guardedClient.startSession();
                ClientSession plainSession = plainClient.startSession()) {
            List<Object> guardedResults = everyWrite(guarded.withSession(session));
            List<Object> plainResults = everyWrite(plain.withSession(plainSession));

            assertThat(guardedResults).hasToString(plainResults.toString());
            BsonDocument lsid = session.getServerSession().getIdentifier();
            assertThat(sent)
                    .extracting(c -> c.getFirstKey())
                    .contains("insert", "update", "delete", "findAndModify", "find");
            assertThat(sent)
                    .allSatisfy(
                            command -> assertThat(command.getDocument("lsid")).isEqualTo(lsid));
            assertThat(sent)
                    .filteredOn(command -> !command.getFirstKey().equals("find"))
                    .allSatisfy(
                            command -> assertThat(command.getNumber("maxTimeMS").longValue())
                                    .isEqualTo(1000));
            assertThat(GuardedMongoTemplateTest.statements(writes(sent)))
                    .isEqualTo(GuardedMongoTemplateTest.statements(
                            GuardedMongoTemplateTest.pinnedAsSingleDocument(writes(plainSent))));
            assertThat(guarded.findAll(Item.class)).isEqualTo(plain.findAll(Item.class));
        }
    }

    @Test
    void withSessionScoped_theCallbacksWritesShareTheScopedSession() {
        GuardedMongoTemplate guarded = new GuardedMongoTemplate(guardedClient, "guarded", guard);

        Item found = guarded.withSession(
                        ClientSessionOptions.builder().causallyConsistent(true).build())
                .execute(operations -> {
                    operations.insert(new Item("s", 1, "S"));
                    operations.updateFirst(query(where("id").is("s")), new Update().inc("qty", 1), Item.class);
                    return operations.findById("s", Item.class);
                });

        assertThat(found).isEqualTo(new Item("s", 2, "S"));
        assertThat(sent).hasSize(3);
        assertThat(sent)
                .extracting(c -> c.getDocument("lsid"))
                .containsOnly(sent.get(0).getDocument("lsid"));
        assertThat(sent.subList(0, 2))
                .allSatisfy(
                        command -> assertThat(command.containsKey("maxTimeMS")).isTrue());
    }

    @Test
    void transaction_writesAreTheDriversOwnCalls_onTheTransactionsSession_asThePlainTemplateSendsThem() {
        inTransaction(
                new SimpleMongoClientDatabaseFactory(guardedClient, "guarded"),
                factory -> new GuardedMongoTemplate(factory, null, guard),
                false);
        inTransaction(
                new SimpleMongoClientDatabaseFactory(plainClient, "plain"),
                factory -> new MongoTemplate(factory),
                false);

        assertTransaction(writes(sent));
        assertThat(GuardedMongoTemplateTest.statements(writes(sent)))
                .isEqualTo(GuardedMongoTemplateTest.statements(writes(plainSent)));
        assertThat(stored("guarded", "items"))
                .isEqualTo(stored("plain", "items"))
                .hasSize(3);
    }

    @Test
    void transaction_rollsBackOnAnException_andAnOptimisticLockingFailureInside_exactlyAsThePlainTemplate() {
        List<Object> outcomes = new ArrayList<>();
        for (String database : List.of("guarded", "plain")) {
            MongoTemplate template = template(database);
            TransactionTemplate transactions =
                    new TransactionTemplate(new MongoTransactionManager(template.getMongoDatabaseFactory()));
            outcomes.add(thrown(() -> transactions.executeWithoutResult(status -> {
                everyWriteInTransaction(template);
                throw new IllegalStateException("the service gives up");
            })));
            outcomes.add(thrown(() -> transactions.executeWithoutResult(status -> {
                template.insert(new Item("x", 1, "X"));
                template.save(new Versioned("v1", "stale", 2L));
            })));
            outcomes.add(transactions.execute(status -> template.save(new Versioned("v1", "V4", 3L))));
        }
        assertThat(outcomes.subList(3, 6)).isEqualTo(outcomes.subList(0, 3));
        assertThat(outcomes.get(0)).isEqualTo(IllegalStateException.class);
        assertThat(outcomes.get(1)).isEqualTo(org.springframework.dao.OptimisticLockingFailureException.class);
        assertThat(stored("guarded", "items"))
                .isEqualTo(stored("plain", "items"))
                .isEmpty();
        assertThat(stored("guarded", "versioned"))
                .isEqualTo(stored("plain", "versioned"))
                .containsExactly(new Document("_id", "v1")
                        .append("name", "V4")
                        .append("version", 4L)
                        .append("_class", Versioned.class.getName()));
    }

    @Test
    void transactionalAnnotation_withMongoTransactionManager_commitsAndRollsBackAsThePlainTemplate() {
        List<Object> outcomes = new ArrayList<>();
        for (String database : List.of("guarded", "plain")) {
            try (org.springframework.context.annotation.AnnotationConfigApplicationContext context =
                    new org.springframework.context.annotation.AnnotationConfigApplicationContext()) {
                context.registerBean(MongoTemplate.class, () -> template(database));
                context.registerBean(
                        MongoTransactionManager.class,
                        () -> new MongoTransactionManager(
                                context.getBean(MongoTemplate.class).getMongoDatabaseFactory()));
                context.register(TransactionalConfig.class, TransactionalItems.class);
                context.refresh();
                TransactionalItems items = context.getBean(TransactionalItems.class);
                outcomes.add(items.insertTwo("t1", "t2"));
                outcomes.add(thrown(() -> items.insertThenFail("t3")));
                outcomes.add(thrown(() -> items.insertTwo("t4", "t1")));
            }
        }
        assertThat(outcomes.subList(3, 6)).isEqualTo(outcomes.subList(0, 3));
        assertThat(outcomes.get(1)).isEqualTo(IllegalStateException.class);
        assertThat(outcomes.get(2)).isEqualTo(org.springframework.dao.DuplicateKeyException.class);
        assertThat(stored("guarded", "items"))
                .isEqualTo(stored("plain", "items"))
                .extracting(document -> document.get("_id"))
                .containsExactly("t1", "t2");
        assertThat(sent)
                .filteredOn(command -> command.getFirstKey().equals("insert"))
                .allSatisfy(command ->
                        assertThat(command.getBoolean("autocommit").getValue()).isFalse());
    }

    @org.springframework.context.annotation.Configuration
    @org.springframework.transaction.annotation.EnableTransactionManagement
    static class TransactionalConfig {}

    /** A service whose methods are {@code @Transactional} on whichever template the context holds. */
    static class TransactionalItems {
        private final MongoTemplate template;

        TransactionalItems(MongoTemplate template) {
            this.template = template;
        }

        @org.springframework.transaction.annotation.Transactional
        public List<Item> insertTwo(String first, String second) {
            template.insert(new Item(first, 1, first));
            template.insert(new Item(second, 2, second));
            return template.findAll(Item.class);
        }

        @org.springframework.transaction.annotation.Transactional
        public void insertThenFail(String id) {
            template.insert(new Item(id, 3, id));
            throw new IllegalStateException("rolled back");
        }
    }

    private static MongoTemplate template(String database) {
        return database.equals("guarded")
                ? new GuardedMongoTemplate(new SimpleMongoClientDatabaseFactory(guardedClient, "guarded"), null, guard)
                : new MongoTemplate(new SimpleMongoClientDatabaseFactory(plainClient, "plain"));
    }

    private static Object thrown(Runnable call) {
        try {
            call.run();
            return "no exception";
        } catch (RuntimeException e) {
            return e.getClass();
        }
    }

    private static List<Document> stored(String database, String collection) {
        return plainClient
                .getDatabase(database)
                .getCollection(collection)
                .find()
                .sort(new Document("_id", 1))
                .into(new ArrayList<>());
    }

    @Test
    void transaction_ofAManagerOnTheTemplatesOwnFactory_isJoinedToo() {
        inTransaction(
                new SimpleMongoClientDatabaseFactory(guardedClient, "guarded"),
                factory -> new GuardedMongoTemplate(factory, null, guard),
                true);

        assertTransaction(writes(sent));
    }

    /**
     * Runs {@link #everyWrite} in a {@code MongoTransactionManager} transaction on {@code factory} (or on the template's
     * own factory), committed by the emulator's multi-document transactions.
     */
    private static void inTransaction(
            MongoDatabaseFactory factory,
            Function<MongoDatabaseFactory, MongoTemplate> templates,
            boolean managerOnTemplatesFactory) {
        MongoTemplate template = templates.apply(factory);
        MongoTransactionManager manager =
                new MongoTransactionManager(managerOnTemplatesFactory ? template.getMongoDatabaseFactory() : factory);
        new TransactionTemplate(manager).executeWithoutResult(status -> everyWriteInTransaction(template));
    }

    /** The writes of {@link #everyWrite} (reads in a transaction would only repeat the emulator's view). */
    private static void everyWriteInTransaction(MongoTemplate template) {
        template.insert(new Item("a", 1, "A"));
        template.insert(List.of(new Item("b", 2, "B"), new Item("c", 3, "C")), Item.class);
        template.save(new Item("a", 5, "A5"));
        template.updateFirst(query(where("id").is("b")), new Update().inc("qty", 1), Item.class);
        template.upsert(query(where("id").is("u")), new Update().set("qty", 7).set("name", "U"), Item.class);
        template.findAndModify(query(where("id").is("a")), new Update().inc("qty", 1), Item.class);
        template.findAndRemove(query(where("id").is("c")), Item.class);
        template.remove(query(where("id").is("u")), Item.class);
        template.bulkOps(BulkMode.ORDERED, Item.class)
                .insert(new Item("d", 4, "D"))
                .execute();
    }

    /** One session, one transaction number, {@code startTransaction} on the first write, no guard deadline. */
    private static void assertTransaction(List<BsonDocument> writes) {
        assertThat(writes)
                .extracting(c -> c.getFirstKey())
                .containsExactly(
                        "insert",
                        "insert",
                        "update",
                        "update",
                        "update",
                        "findAndModify",
                        "findAndModify",
                        "delete",
                        "insert");
        assertThat(writes)
                .extracting(c -> c.getDocument("lsid"))
                .containsOnly(writes.get(0).getDocument("lsid"));
        assertThat(writes)
                .extracting(c -> c.get("txnNumber"))
                .containsOnly(writes.get(0).get("txnNumber"));
        assertThat(writes.get(0).getBoolean("startTransaction").getValue()).isTrue();
        assertThat(writes).allSatisfy(command -> {
            assertThat(command.getBoolean("autocommit").getValue()).isFalse();
            assertThat(command.containsKey("maxTimeMS"))
                    .as("no guard deadline inside a transaction")
                    .isFalse();
        });
        assertThat(sent).extracting(c -> c.getFirstKey()).contains("commitTransaction");
    }

    private static List<BsonDocument> writes(List<BsonDocument> commands) {
        return commands.stream()
                .filter(c -> GuardedMongoTemplateTest.WRITE_COMMANDS.contains(c.getFirstKey()))
                .toList();
    }
}
