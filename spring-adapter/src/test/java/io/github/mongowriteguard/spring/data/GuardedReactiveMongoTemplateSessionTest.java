package io.github.mongowriteguard.spring.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.data.mongodb.core.query.Criteria.where;
import static org.springframework.data.mongodb.core.query.Query.query;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.reactivestreams.client.ClientSession;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoClients;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.data.mongodb.ReactiveMongoTransactionManager;
import org.springframework.data.mongodb.core.BulkOperations.BulkMode;
import org.springframework.data.mongodb.core.ReactiveMongoOperations;
import org.springframework.data.mongodb.core.SimpleReactiveMongoDatabaseFactory;
import org.springframework.data.mongodb.core.query.Query;
import org.springframework.data.mongodb.core.query.Update;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;

/**
 * Sessions of {@link GuardedReactiveMongoTemplate}, on an emulated replica set: a {@code withSession(...)} template
 * writes through the guard on the caller's session (its {@code lsid} and the guard's deadline on every write), and a
 * {@code ReactiveMongoTransactionManager} transaction's writes are the driver's own calls on the transaction's session
 * (no guard deadline), committed or rolled back with it: no write leaves the transaction.
 */
class GuardedReactiveMongoTemplateSessionTest {
    private static final Set<String> WRITES = Set.of("insert", "update", "delete", "findAndModify");

    private static EmulatedReplicaSet set;
    private static WriteGuard guard;
    private static MongoClient client;
    private static final List<BsonDocument> sent = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void start() {
        set = EmulatedCluster.replicaSet().start();
        guard = WriteGuard.create();
        client = MongoClients.create(guard.configure(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(set.connectionString()))
                        .applyToSocketSettings(s -> s.readTimeout(1500, TimeUnit.MILLISECONDS))
                        .addCommandListener(new CommandListener() {
                            @Override
                            public void commandStarted(CommandStartedEvent event) {
                                if (WRITES.contains(event.getCommandName())
                                        && event.getDatabaseName().equals("shop")) {
                                    sent.add(event.getCommand().clone());
                                }
                            }
                        }))
                .build());
    }

    @AfterAll
    static void stop() {
        client.close();
        set.close();
    }

    @BeforeEach
    void clear() {
        Mono.from(client.getDatabase("shop").getCollection("items").deleteMany(new Document()))
                .block();
        sent.clear();
    }

    private static void writes(ReactiveMongoOperations template) {
        template.insert(new Document("_id", "a").append("qty", 1), "items").block();
        template.updateFirst(query(where("_id").is("a")), new Update().inc("qty", 1), "items")
                .block();
        template.bulkOps(BulkMode.ORDERED, "items")
                .insert(new Document("_id", "b"))
                .upsert(query(where("_id").is("c")), new Update().set("qty", 3))
                .execute()
                .block();
        template.remove(query(where("_id").is("b")), "items").block();
    }

    private static List<Document> stored() {
        return new GuardedReactiveMongoTemplate(client, "shop", guard)
                .find(new Query(), Document.class, "items")
                .collectList()
                .block();
    }

    @Test
    void withSession_everyWriteIsGuarded_onTheCallersSession() {
        GuardedReactiveMongoTemplate template = new GuardedReactiveMongoTemplate(client, "shop", guard);
        ClientSession session = Mono.from(client.startSession()).block();
        BsonDocument lsid = session.getServerSession().getIdentifier();
        try {
            writes(template.withSession(session));
        } finally {
            session.close();
        }

        assertThat(sent).extracting(BsonDocument::getFirstKey).contains("insert", "update", "delete");
        assertThat(sent)
                .allSatisfy(command -> assertThat(command.getDocument("lsid")).isEqualTo(lsid));
        assertThat(sent)
                .allSatisfy(command ->
                        assertThat(command.getNumber("maxTimeMS").longValue()).isEqualTo(1000));
        assertThat(stored()).hasSize(2);
    }

    @Test
    void plainGroup_itsWritesAreSpringsOwnCalls_theOtherGroupsGuarded_withAndWithoutASession() {
        GuardedReactiveMongoTemplate template = new GuardedReactiveMongoTemplate(client, "shop", guard);
        template.setPlainGroups(Set.of(TemplateWriteGroup.UPDATE));
        ClientSession session = Mono.from(client.startSession()).block();
        BsonDocument lsid = session.getServerSession().getIdentifier();
        try {
            for (ReactiveMongoOperations operations : List.of(template, template.withSession(session))) {
                operations.insert(new Document("_id", "a"), "items").block();
                operations
                        .updateFirst(query(where("_id").is("a")), new Update().set("qty", 1), "items")
                        .block();
                operations.remove(query(where("_id").is("a")), "items").block();
            }
        } finally {
            session.close();
        }

        assertThat(sent).extracting(BsonDocument::getFirstKey).hasSize(6);
        assertThat(sent)
                .allSatisfy(command -> assertThat(command.containsKey("maxTimeMS"))
                        .isEqualTo(!command.getFirstKey().equals("update")));
        assertThat(sent.subList(3, 6))
                .allSatisfy(command -> assertThat(command.getDocument("lsid")).isEqualTo(lsid));
    }

    @Test
    void transaction_rollsBack_everyWriteOfIt() {
        SimpleReactiveMongoDatabaseFactory factory = new SimpleReactiveMongoDatabaseFactory(client, "shop");
        GuardedReactiveMongoTemplate template = new GuardedReactiveMongoTemplate(factory, null, guard, client);
        TransactionalOperator transactions = TransactionalOperator.create(new ReactiveMongoTransactionManager(factory));

        Mono<Object> failing = chain(template).then(Mono.error(new IllegalStateException("rolled back")));
        try {
            transactions.transactional(failing).block();
        } catch (IllegalStateException expected) {
            assertThat(expected).hasMessage("rolled back");
        }

        assertTransaction();
        assertThat(stored()).isEmpty();
    }

    @Test
    void transaction_commits_everyWriteOfIt() {
        SimpleReactiveMongoDatabaseFactory factory = new SimpleReactiveMongoDatabaseFactory(client, "shop");
        GuardedReactiveMongoTemplate template = new GuardedReactiveMongoTemplate(factory, null, guard, client);
        TransactionalOperator transactions = TransactionalOperator.create(new ReactiveMongoTransactionManager(factory));

        transactions.transactional(chain(template)).block();

        assertTransaction();
        assertThat(stored()).hasSize(2);
    }

    private static Mono<Void> chain(ReactiveMongoOperations template) {
        return template.insert(new Document("_id", "a").append("qty", 1), "items")
                .then(template.updateFirst(query(where("_id").is("a")), new Update().inc("qty", 1), "items"))
                .then(template.bulkOps(BulkMode.ORDERED, "items")
                        .insert(new Document("_id", "b"))
                        .upsert(query(where("_id").is("c")), new Update().set("qty", 3))
                        .execute())
                .then(template.remove(query(where("_id").is("b")), "items"))
                .then();
    }

    /** Every write on one session, in one transaction (txnNumber, autocommit false), without the guard's deadline. */
    private static void assertTransaction() {
        assertThat(sent).extracting(BsonDocument::getFirstKey).contains("insert", "update", "delete");
        BsonDocument lsid = sent.get(0).getDocument("lsid");
        assertThat(sent).allSatisfy(command -> {
            assertThat(command.getDocument("lsid")).isEqualTo(lsid);
            assertThat(command.getBoolean("autocommit").getValue()).isFalse();
            assertThat(command.containsKey("maxTimeMS")).isFalse();
        });
        assertThat(sent.get(0).getBoolean("startTransaction").getValue()).isTrue();
        assertThat(sent)
                .extracting(c -> c.get("txnNumber"))
                .containsOnly(sent.get(0).get("txnNumber"));
    }
}
