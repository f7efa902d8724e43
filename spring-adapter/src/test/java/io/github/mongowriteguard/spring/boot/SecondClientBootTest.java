package io.github.mongowriteguard.spring.boot;

import static io.github.mongowriteguard.spring.boot.InventoryUpserts.upsert1000;
import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.data.mongodb.core.query.Criteria.where;
import static org.springframework.data.mongodb.core.query.Query.query;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.spring.data.GuardedMongoTemplate;
import io.github.mongowriteguard.test.EmulatedMongo;
import io.github.mongowriteguard.test.EmulatedMongo.ShardedCollection;
import io.github.mongowriteguard.test.EmulatedMongoCluster;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.mongodb.autoconfigure.MongoClientFactory;
import org.springframework.boot.mongodb.autoconfigure.MongoClientSettingsBuilderCustomizer;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.data.mongodb.core.BulkOperations.BulkMode;
import org.springframework.data.mongodb.core.MongoTemplate;

/**
 * A second client built the Spring Boot way (Boot's {@code MongoClientFactory} with the same customizers, the guard's
 * among them, plus one of its own: a 3 s socket timeout) beside the auto-configured one, e.g. for an import job. The
 * auto-configured template keeps working, and a guarded template on the second client works too; each write carries
 * the deadline of its own client (4 s: 2/3 of the URI's 6 s; 2 s: 2/3 of the import's 3 s). The URI names a socket
 * timeout, as the README advises: Boot's customizer applies it, so the import's own timeout must come after Boot's
 * customizer (and before the guard's, the last), as the README's recipe puts it.
 */
@SpringBootTest
@EmulatedMongo(
        shards = 5,
        database = "shop",
        options = "socketTimeoutMS=6000",
        shardedCollections = @ShardedCollection(namespace = "shop.inventory", key = "{_id: \"hashed\"}"))
class SecondClientBootTest {
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class Application {
        @Bean(destroyMethod = "close")
        ImportJob importJob(ObjectProvider<MongoClientSettingsBuilderCustomizer> customizers, WriteGuard guard) {
            List<MongoClientSettingsBuilderCustomizer> ordered =
                    new ArrayList<>(customizers.orderedStream().toList());
            // after Boot's (spring.mongodb.uri), before the guard's, which is last and reads the timeout
            ordered.add(
                    ordered.size() - 1,
                    builder -> builder.applyToSocketSettings(s -> s.readTimeout(3, TimeUnit.SECONDS)));
            MongoClient client = new MongoClientFactory(ordered)
                    .createMongoClient(MongoClientSettings.builder().build());
            return new ImportJob(client, new GuardedMongoTemplate(client, "shop", guard));
        }
    }

    /** The application's import job: a client of its own and a guarded template on it; not beans of their own. */
    record ImportJob(MongoClient client, GuardedMongoTemplate template) implements AutoCloseable {
        @Override
        public void close() {
            client.close();
        }
    }

    @Autowired
    MongoTemplate template;

    @Autowired
    ImportJob importJob;

    @Autowired
    WriteGuard guard;

    @Autowired
    EmulatedMongoCluster mongo;

    @BeforeEach
    void reset() {
        template.getCollection("inventory").deleteMany(new Document());
        mongo.resetCounters();
    }

    /** The {@code maxTimeMS} of the update commands as the client sent them (mongos passes the time left on). */
    private List<Long> updateDeadlines() {
        return mongo.sharded().mongosTruth().commands("update").stream()
                .map(ReceivedCommand::maxTimeMs)
                .distinct()
                .toList();
    }

    @Test
    void theGuardConfiguredEveryClient_eachWithItsOwnDeadline() {
        // Boot's synchronous and reactive clients (the reactive starter is on the test class path) and the import's
        assertThat(guard.getClientDeadlines())
                .extracting(deadline -> deadline.serverDeadline().toMillis())
                .containsExactlyInAnyOrder(4_000L, 4_000L, 2_000L);
    }

    @Test
    void autoConfiguredTemplate_writesThroughTheGuard_withItsClientsDeadline() {
        assertThat(template).isInstanceOf(GuardedMongoTemplate.class);

        upsert1000(template.bulkOps(BulkMode.ORDERED, "inventory"), "qty");

        assertThat(mongo.roundTrips()).isEqualTo(5);
        assertThat(updateDeadlines()).containsExactly(4_000L);
        assertThat(template.getCollection("inventory").countDocuments()).isEqualTo(1000);
    }

    @Test
    void secondClientsTemplate_writesThroughTheGuard_withItsClientsDeadline() {
        upsert1000(importJob.template().bulkOps(BulkMode.ORDERED, "inventory"), "imported");

        assertThat(mongo.roundTrips()).isEqualTo(5);
        assertThat(updateDeadlines()).containsExactly(2_000L);
        assertThat(template.count(query(where("imported").exists(true)), "inventory"))
                .isEqualTo(1000);
    }

    @Test
    void bothTemplates_singleWrites_eachWithItsClientsDeadline() {
        template.save(new Document("_id", "a").append("by", "app"), "inventory");
        importJob.template().save(new Document("_id", "b").append("by", "import"), "inventory");

        assertThat(updateDeadlines()).containsExactly(4_000L, 2_000L);
        assertThat(template.getCollection("inventory").countDocuments()).isEqualTo(2);
    }
}
