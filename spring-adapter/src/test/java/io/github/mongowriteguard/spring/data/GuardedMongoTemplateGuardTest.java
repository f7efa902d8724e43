package io.github.mongowriteguard.spring.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.springframework.data.mongodb.core.query.Criteria.where;
import static org.springframework.data.mongodb.core.query.Query.query;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.exception.CopyStillRunningException;
import io.github.mongowriteguard.exception.WriteOutcomeUnknownException;
import io.github.mongowriteguard.retry.RetryPolicy;
import io.github.mongowriteguard.spring.boot.WriteGuardAutoConfiguration;
import io.github.mongowriteguard.spring.data.TemplateEntities.Item;
import io.github.mongowriteguard.spring.data.TemplateEntities.Versioned;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.mongodb.autoconfigure.DataMongoAutoConfiguration;
import org.springframework.boot.mongodb.autoconfigure.MongoAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.dao.DataAccessException;
import org.springframework.data.mongodb.core.BulkOperations.BulkMode;
import org.springframework.data.mongodb.core.MongoOperations;
import org.springframework.data.mongodb.core.MongoTemplate;
import org.springframework.data.mongodb.core.query.Update;

/**
 * The guard's promises through the template (one server copy of a write after a socket timeout with a stalled
 * server), and the switch that sends a group of template writes to the driver as Spring does.
 */
class GuardedMongoTemplateGuardTest {
    private static EmulatedReplicaSet cluster;
    private static MongoClient plainClient;

    @BeforeAll
    static void start() {
        cluster = EmulatedCluster.replicaSet().start();
        plainClient = MongoClients.create(cluster.connectionString());
    }

    @AfterAll
    static void stop() {
        plainClient.close();
        cluster.close();
    }

    @BeforeEach
    void seed() {
        for (String database : List.of("stall", "groups")) {
            plainClient.getDatabase(database).drop();
            plainClient
                    .getDatabase(database)
                    .getCollection("items")
                    .insertOne(new Document("_id", "a").append("q", 1).append("name", "A"));
            plainClient
                    .getDatabase(database)
                    .getCollection("versioned")
                    .insertOne(new Document("_id", "v1").append("name", "V").append("version", 3L));
        }
    }

    /** Single-document template writes whose copies the server counts; each changes {@code a} or {@code v1} once. */
    enum StalledWrite {
        INSERT("items", "insert", t -> t.insert(new Item("b", 1, "B"))),
        UPDATE_FIRST(
                "items",
                "update",
                t -> t.updateFirst(query(where("id").is("a")), new Update().inc("qty", 1), Item.class)),
        SAVE_VERSIONED("versioned", "update", t -> t.save(new Versioned("v1", "V2", 3L))),
        FIND_AND_MODIFY(
                "items",
                "findAndModify",
                t -> t.findAndModify(query(where("id").is("a")), new Update().inc("qty", 1), Item.class));

        final String collection;
        final String command;
        final Consumer<MongoTemplate> run;

        StalledWrite(String collection, String command, Consumer<MongoTemplate> run) {
            this.collection = collection;
            this.command = command;
            this.run = run;
        }
    }

    @ParameterizedTest
    @EnumSource(StalledWrite.class)
    void afterASocketTimeout_onAStalledServer_theWriteRunsAsOneServerCopy_andFailsTranslated(StalledWrite write)
            throws Exception {
        WriteGuard guard = WriteGuard.create(WriteGuardSettings.builder()
                .retryPolicy(RetryPolicy.builder()
                        .maxAttempts(3)
                        .initialBackoff(Duration.ofMillis(10))
                        .gateGrace(Duration.ofMillis(20))
                        .build())
                .build());
        try (MongoClient client = MongoClients.create(guard.configure(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(cluster.connectionString()))
                        .applyToSocketSettings(s -> s.readTimeout(300, TimeUnit.MILLISECONDS)))
                .build())) {
            MongoTemplate template = new GuardedMongoTemplate(client, "stall", guard);
            cluster.truth().reset();

            Throwable thrown;
            try (StallHandle stall = cluster.primary()
                    .stall(Stall.uninterruptible("stall." + write.collection, Duration.ofMillis(1_500)))) {
                thrown = catchThrowable(() -> write.run.accept(template));
            }

            assertThat(thrown).isInstanceOf(DataAccessException.class);
            assertThat(thrown.getCause())
                    .isInstanceOfAny(CopyStillRunningException.class, WriteOutcomeUnknownException.class);
            assertThat(cluster.truth().awaitIdle(c -> true, Duration.ofSeconds(10)))
                    .isTrue();
            assertThat(cluster.truth().commands(c -> c.commandName().equals(write.command)))
                    .isNotEmpty();
            assertThat(cluster.truth().copies(c -> c.commandName().equals(write.command)))
                    .as("server copies")
                    .hasSize(1);
            Document a = plainClient
                    .getDatabase("stall")
                    .getCollection("items")
                    .find(new Document("_id", "a"))
                    .first();
            Document v1 = plainClient
                    .getDatabase("stall")
                    .getCollection("versioned")
                    .find(new Document("_id", "v1"))
                    .first();
            long applied =
                    plainClient.getDatabase("stall").getCollection("items").countDocuments()
                            - 1
                            + (a.getInteger("q") - 1)
                            + (v1.getLong("version") - 3);
            assertThat(applied).as("applied once").isEqualTo(1);
        }
    }

    /** One template call per group, on whatever template it is given. */
    private static void call(TemplateWriteGroup group, MongoOperations template, int n) {
        switch (group) {
            case INSERT -> template.insert(new Item("i" + n, n, "I" + n));
            case REPLACE -> template.save(new Item("a", n, "A" + n));
            case UPDATE -> template.updateFirst(query(where("id").is("a")), new Update().inc("qty", 1), Item.class);
            case REMOVE -> template.remove(query(where("id").is("none")), Item.class);
            case FIND_AND_MODIFY ->
                template.findAndModify(query(where("id").is("a")), new Update().inc("qty", 1), Item.class);
            case BULK ->
                template.bulkOps(BulkMode.UNORDERED, Item.class)
                        .insert(new Item("k" + n, n, "K" + n))
                        .execute();
            default -> throw new IllegalArgumentException(group.name());
        }
    }

    @ParameterizedTest
    @EnumSource(TemplateWriteGroup.class)
    void aGroupSetToPlain_isSentAsSpringSendsIt_withAndWithoutASession_andTheOtherGroupsStayGuarded(
            TemplateWriteGroup plain) {
        WriteGuard guard = WriteGuard.create();
        List<BsonDocument> sent = new CopyOnWriteArrayList<>();
        try (MongoClient client = MongoClients.create(guard.configure(MongoClientSettings.builder()
                                .applyConnectionString(new ConnectionString(cluster.connectionString()))
                                .addCommandListener(GuardedMongoTemplateTest.Side.writesTo(sent)))
                        .build());
                ClientSession session = client.startSession()) {
            GuardedMongoTemplate template = new GuardedMongoTemplate(client, "groups", guard);
            template.setPlainGroups(Set.of(plain));
            assertThat(template.getPlainGroups()).containsExactly(plain);
            int n = 0;
            for (TemplateWriteGroup group : TemplateWriteGroup.values()) {
                for (MongoOperations operations : List.of(template, template.withSession(session))) {
                    sent.clear();
                    call(group, operations, n++);
                    assertThat(sent)
                            .as(group + " on " + operations.getClass().getSimpleName())
                            .isNotEmpty()
                            .allSatisfy(command ->
                                    assertThat(command.containsKey("maxTimeMS")).isEqualTo(group != plain));
                }
            }
        }
    }

    @Test
    void bootProperty_setsGroupsToPlain() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        MongoAutoConfiguration.class,
                        DataMongoAutoConfiguration.class,
                        WriteGuardAutoConfiguration.class))
                .withPropertyValues(
                        "spring.mongodb.uri=" + cluster.connectionString(),
                        "spring.mongodb.database=boot",
                        "mongo.write-guard.template.update=plain",
                        "mongo.write-guard.template.find-and-modify=PLAIN",
                        "mongo.write-guard.template.insert=guarded")
                .run(context -> assertThat(
                                context.getBean(GuardedMongoTemplate.class).getPlainGroups())
                        .isEqualTo(EnumSet.of(TemplateWriteGroup.UPDATE, TemplateWriteGroup.FIND_AND_MODIFY)));
    }
}
