package io.github.mongowriteguard.spring.boot.actuate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoClient;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.copies.CopyLedger;
import io.github.mongowriteguard.internal.copies.LiveCopyLedger;
import io.github.mongowriteguard.spring.boot.WriteGuardAutoConfiguration;
import io.github.mongowriteguard.spring.data.GuardedMongoTemplate;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.info.InfoContributorAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.info.InfoEndpointAutoConfiguration;
import org.springframework.boot.actuate.info.InfoEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.data.mongodb.autoconfigure.DataMongoAutoConfiguration;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.health.actuate.endpoint.IndicatedHealthDescriptor;
import org.springframework.boot.health.autoconfigure.actuate.endpoint.HealthEndpointAutoConfiguration;
import org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration;
import org.springframework.boot.health.autoconfigure.registry.HealthContributorRegistryAutoConfiguration;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.mongodb.autoconfigure.MongoAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.mongodb.core.BulkOperations.BulkMode;
import org.springframework.data.mongodb.core.MongoTemplate;
import org.springframework.data.mongodb.core.query.Criteria;
import org.springframework.data.mongodb.core.query.Query;
import org.springframework.data.mongodb.core.query.Update;

/**
 * The guard's health indicator and info contributor through Spring Boot's real auto-configuration (Mongo, Spring
 * Data, the guard's, Actuator's endpoints), on the emulated replica set: a socket timeout of 900 ms (server deadline
 * 600 ms), 2 attempts per write.
 */
class WriteGuardActuatorAutoConfigurationTest {
    private static final String NAMESPACE = "boot.items";
    private static EmulatedReplicaSet cluster;

    @BeforeAll
    static void start() {
        cluster = EmulatedCluster.replicaSet().start();
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    private ApplicationContextRunner runner() {
        return guardOnly()
                .withConfiguration(AutoConfigurations.of(
                        EndpointAutoConfiguration.class,
                        HealthContributorAutoConfiguration.class,
                        HealthContributorRegistryAutoConfiguration.class,
                        HealthEndpointAutoConfiguration.class,
                        InfoContributorAutoConfiguration.class,
                        InfoEndpointAutoConfiguration.class))
                .withPropertyValues("management.endpoints.web.exposure.include=health,info");
    }

    /** Mongo, Spring Data and the guard's auto-configurations, without Actuator's own. */
    private ApplicationContextRunner guardOnly() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        MongoAutoConfiguration.class,
                        DataMongoAutoConfiguration.class,
                        WriteGuardAutoConfiguration.class,
                        WriteGuardActuatorAutoConfiguration.class))
                .withPropertyValues(
                        "spring.mongodb.uri=" + cluster.connectionString()
                                + (cluster.connectionString().contains("?") ? "&" : "?")
                                + "socketTimeoutMS=900&serverSelectionTimeoutMS=3000",
                        "spring.mongodb.database=boot",
                        "mongo.write-guard.retry.max-attempts=2",
                        "mongo.write-guard.retry.initial-backoff=10ms",
                        "mongo.write-guard.retry.gate-grace=20ms",
                        "management.endpoint.health.show-details=always");
    }

    private static IndicatedHealthDescriptor guardHealth(AssertableApplicationContext context) {
        return (IndicatedHealthDescriptor) context.getBean(HealthEndpoint.class).healthForPath("mongoWriteGuard");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> guardInfo(AssertableApplicationContext context) {
        return (Map<String, Object>) context.getBean(InfoEndpoint.class).info().get("mongoWriteGuard");
    }

    private static void insert(MongoTemplate template, int id) {
        template.bulkOps(BulkMode.ORDERED, "items")
                .insert(new Document("_id", id))
                .execute();
    }

    @Test
    void theAutoConfigurationIsRegistered() {
        assertThat(ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader())
                        .getCandidates())
                .contains(WriteGuardActuatorAutoConfiguration.class.getName());
    }

    @Test
    @SuppressWarnings("unchecked")
    void aGuardThatSeesEveryCopy_isUp_withItsCountsAndSettings() {
        runner().run(context -> {
            insert(context.getBean(MongoTemplate.class), 1);

            IndicatedHealthDescriptor health = guardHealth(context);
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails())
                    .containsEntry("copiesPossiblyRunning", 0)
                    .containsEntry("maxConcurrentCopies", 0)
                    .containsEntry("gateRefusals", 0L)
                    .containsEntry("deadlineHits", 0L)
                    .doesNotContainKey("reason");
            Map<String, Object> info = guardInfo(context);
            assertThat(info)
                    .containsEntry("copiesPossiblyRunning", 0)
                    .containsEntry("gateRefusals", 0L)
                    .containsEntry("heldForSettle", 0);
            Map<String, Object> settings = (Map<String, Object>) info.get("settings");
            assertThat(settings)
                    .containsEntry("serverDeadlineFraction", 0.6667)
                    .containsEntry("defaultServerDeadline", "PT10S")
                    .containsEntry("strictOrdered", false)
                    .containsEntry("parallelShardCommands", 8)
                    .containsEntry("settleHold", Map.of("maxCopies", 1000, "maxAge", "PT10M"))
                    .doesNotContainKey("serverDeadline");
            // the retry policy, the same in the health details as in the info entry
            assertThat(settings.get("retry")).isEqualTo(health.getDetails().get("retry"));
            assertThat((Map<String, Object>) health.getDetails().get("retry"))
                    .containsEntry("maxAttempts", 2)
                    .containsEntry("initialBackoff", "PT0.01S")
                    .containsEntry("gateGrace", "PT0.02S");
        });
    }

    @Test
    void aCopyPossiblyRunning_isUnknownNotDown_andResentAsTheSameCopyWithoutTheGate() {
        runner().run(context -> {
            MongoTemplate template = context.getBean(MongoTemplate.class);
            try (StallHandle stall = cluster.primary().stall(Stall.uninterruptible(NAMESPACE, Duration.ofSeconds(8)))) {
                // Attempt 1 outlives the 900 ms socket timeout; attempt 2 is the same copy, sent at once (no gate), and
                // waits behind it on the server until its deadline: the write is unknown, its copy possibly running.
                assertThatThrownBy(() -> insert(template, 2)).isInstanceOf(RuntimeException.class);

                IndicatedHealthDescriptor health = guardHealth(context);
                assertThat(health.getStatus()).isEqualTo(Status.UNKNOWN);
                assertThat(health.getDetails())
                        .containsEntry("copiesPossiblyRunning", 1)
                        .containsEntry("gateRefusals", 0L)
                        .containsEntry("maxConcurrentCopies", 1);
                assertThat(health.getDetails().get("reason").toString())
                        .contains("1 copy whose client stopped waiting may" + " still be running");
                assertThat(health.getDetails().get("copies").toString()).contains("namespace=" + NAMESPACE, "sends=2");
                // UNKNOWN does not change the aggregate: the application stays UP.
                assertThat(context.getBean(HealthEndpoint.class).health().getStatus())
                        .isEqualTo(Status.UP);
                assertThat(guardInfo(context))
                        .containsEntry("copiesPossiblyRunning", 1)
                        .containsEntry("gateRefusals", 0L);
                stall.release();
            }
            cluster.truth().awaitIdle(c -> NAMESPACE.equals(c.namespace()), Duration.ofSeconds(10));
        });
    }

    /**
     * A copy the ledger forgot while it may still run (a stalled primary, then more copies given up on than the ledger
     * tracks) leaves the overlap gate blind for it: the health is UNKNOWN with the count and the reason, even once no
     * copy is counted as possibly running any more, and the application's aggregate stays UP.
     */
    @Test
    void aCopyTheLedgerForgot_isUnknownNotDown_withTheCount() {
        runner().run(context -> {
            MongoTemplate template = context.getBean(MongoTemplate.class);
            WriteGuard guard = context.getBean(WriteGuard.class);
            try (StallHandle stall = cluster.primary().stall(Stall.uninterruptible(NAMESPACE, Duration.ofSeconds(8)))) {
                assertThatThrownBy(() -> insert(template, 3)).isInstanceOf(RuntimeException.class);
                assertThat(guard.getCopies().possiblyRunningCount()).isEqualTo(1);
                // More copies given up on than the ledger tracks, as a stalled shard under a steady load makes them:
                // the stalled write's copy, the oldest, is forgotten while the server still runs it.
                // ... and those later copies are then seen to end: none is counted as possibly running any more
                giveUpOnAndEnd(guard, CopyLedger.MAX_TRACKED);
                assertThat(guard.getCopies().possiblyRunningCount()).isZero();

                IndicatedHealthDescriptor health = guardHealth(context);
                assertThat(health.getStatus()).isEqualTo(Status.UNKNOWN);
                assertThat(health.getDetails())
                        .containsEntry("copiesPossiblyRunning", 0)
                        .containsEntry("copiesForgotten", 1L)
                        .containsKey("lastCopyForgotten");
                assertThat(health.getDetails().get("reason").toString())
                        .contains("1 copy forgotten by the copy ledger while they may still run")
                        .contains("the overlap gate is blind for them");
                assertThat(guardInfo(context)).containsEntry("copiesForgotten", 1L);
                assertThat(context.getBean(HealthEndpoint.class).health().getStatus())
                        .isEqualTo(Status.UP);
                stall.release();
            }
            cluster.truth().awaitIdle(c -> NAMESPACE.equals(c.namespace()), Duration.ofSeconds(10));
        });
    }

    /**
     * {@code count} copies sent by hand into the guard's own ledger and given up on (the oldest copies that may still
     * run are forgotten past the ledger's bound), then seen to end.
     */
    private static void giveUpOnAndEnd(WriteGuard guard, int count) {
        LiveCopyLedger ledger = (LiveCopyLedger) guard.getCopies();
        List<LiveCopyLedger.Copy> copies = new java.util.ArrayList<>();
        for (int i = 0; i < count; i++) {
            LiveCopyLedger.Copy copy = ledger.start(NAMESPACE, "given-up-" + i, 1L, null);
            copy.sent();
            copy.clientGaveUp();
            copies.add(copy);
        }
        copies.forEach(LiveCopyLedger.Copy::markEnded);
    }

    /** Forgotten longer ago than the ledger keeps a copy: UP again, the count still shown. */
    @Test
    void aCopyForgottenLongAgo_isUpAgain_andStillCounted() {
        runner().run(context -> {
            WriteGuard guard = context.getBean(WriteGuard.class);
            giveUpOnAndEnd(guard, CopyLedger.MAX_TRACKED + 1);
            WriteGuardEventCounts counts = context.getBean(WriteGuardEventCounts.class);
            java.time.Clock later =
                    java.time.Clock.offset(java.time.Clock.systemUTC(), CopyLedger.RETENTION.plusMinutes(1));

            org.springframework.boot.health.contributor.Health health =
                    new WriteGuardHealthIndicator(guard, counts, later).health();

            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails()).containsEntry("copiesForgotten", 1L).doesNotContainKey("reason");
            assertThat(new WriteGuardHealthIndicator(guard, counts).health().getStatus())
                    .isEqualTo(Status.UNKNOWN);
        });
    }

    @Test
    @SuppressWarnings("unchecked")
    void bulksRunAsGiven_andBulksInRounds_areCountedInTheGuardHealth() {
        runner().run(context -> {
            MongoTemplate template = context.getBean(MongoTemplate.class);
            template.bulkOps(BulkMode.ORDERED, "items")
                    .upsert(
                            org.springframework.data.mongodb.core.query.Query.query(
                                    org.springframework.data.mongodb.core.query.Criteria.where("_id")
                                            .is(41)),
                            new org.springframework.data.mongodb.core.query.Update().set("s", 1))
                    .execute();
            template.bulkOps(BulkMode.ORDERED, "items")
                    .insert(new Document("_id", 42))
                    .updateMulti(
                            org.springframework.data.mongodb.core.query.Query.query(
                                    org.springframework.data.mongodb.core.query.Criteria.where("s")
                                            .is(1)),
                            new org.springframework.data.mongodb.core.query.Update().set("s", 2))
                    .execute();

            IndicatedHealthDescriptor health = guardHealth(context);
            assertThat((java.util.Map<String, Long>) health.getDetails().get("planModes"))
                    .containsEntry("UNORDERED_ROUNDS", 1L)
                    .containsEntry("PRESERVE_ORDER", 1L);
            assertThat(health.getDetails()).containsEntry("plansWithoutSameCopyRetries", 0L);
        });
    }

    @Test
    void writesStoppedAtTheirDeadline_areCounted_andTheGuardStaysUp() {
        runner().run(context -> {
            MongoTemplate template = context.getBean(MongoTemplate.class);
            try (StallHandle stall = cluster.primary().stall(Stall.interruptible(NAMESPACE, Duration.ofSeconds(8)))) {
                // Each of the 2 attempts ends on the server at its 600 ms deadline (MaxTimeMSExpired).
                assertThatThrownBy(() -> insert(template, 3)).isInstanceOf(RuntimeException.class);
            }
            IndicatedHealthDescriptor health = guardHealth(context);
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails()).containsEntry("deadlineHits", 2L).containsEntry("copiesPossiblyRunning", 0);
            assertThat(guardInfo(context)).containsEntry("deadlineHits", 2L);
        });
    }

    @Test
    void aGateWithoutCurrentOp_cannotSee_andIsUnknown() {
        runner().run(context -> {
            MongoTemplate template = context.getBean(MongoTemplate.class);
            BsonDocument failCurrentOp = new BsonDocument("configureFailPoint", new BsonString("failCommand"))
                    .append("mode", new BsonString("alwaysOn"))
                    .append(
                            "data",
                            new BsonDocument(
                                            "failCommands",
                                            new BsonArray(java.util.List.of(new BsonString("currentOp"))))
                                    .append("errorCode", new BsonInt32(13)));
            cluster.primary().failCommand().configure(failCurrentOp);
            // The gate decides before a new copy: a multi-document write retried by opt-in.
            WriteGuard guard = context.getBean(WriteGuard.class);
            MongoClient client = context.getBean(MongoClient.class);
            GuardedCollection<Document> items = guard.guardCollection(
                            client, client.getDatabase("boot").getCollection("items"))
                    .withIdempotentMultiDocumentRetries();
            try (StallHandle stall =
                    cluster.primary().stall(Stall.uninterruptible(NAMESPACE, Duration.ofMillis(2500)))) {
                // Attempt 1 times out; currentOp answers Unauthorized (13): the gate cannot see, no new copy starts.
                try {
                    items.updateMany(Filters.eq("s", 1), Updates.set("t", 2));
                } catch (RuntimeException e) {
                    // the outcome is what the health indicator reports
                }
                stall.release();
            } finally {
                cluster.primary().failCommand().off();
            }
            cluster.truth().awaitIdle(c -> NAMESPACE.equals(c.namespace()), Duration.ofSeconds(10));

            IndicatedHealthDescriptor health = guardHealth(context);
            assertThat(health.getStatus()).isEqualTo(Status.UNKNOWN);
            assertThat(health.getDetails()).containsEntry("gateWithoutCurrentOp", 1L);
            assertThat(health.getDetails().get("reason").toString()).contains("could not run currentOp");
        });
    }

    @Test
    void propertiesTurnTheIndicatorAndTheContributorOff() {
        runner().withPropertyValues("management.health.mongo-write-guard.enabled=false")
                .run(context -> {
                    assertThat(context)
                            .doesNotHaveBean(WriteGuardHealthIndicator.class)
                            .hasSingleBean(WriteGuardInfoContributor.class);
                    assertThat(context.getBean(HealthEndpoint.class).healthForPath("mongoWriteGuard"))
                            .isNull();
                });
        runner().withPropertyValues("management.info.mongo-write-guard.enabled=false")
                .run(context -> {
                    assertThat(context)
                            .hasSingleBean(WriteGuardHealthIndicator.class)
                            .doesNotHaveBean(WriteGuardInfoContributor.class);
                    assertThat(context.getBean(InfoEndpoint.class).info()).doesNotContainKey("mongoWriteGuard");
                });
    }

    @Test
    void withoutActuator_theGuardIsConfiguredAndNothingElse() {
        guardOnly()
                .withClassLoader(
                        new FilteredClassLoader("org.springframework.boot.health", "org.springframework.boot.actuate"))
                .run(context -> {
                    assertThat(context)
                            .hasNotFailed()
                            .hasSingleBean(WriteGuard.class)
                            .hasSingleBean(GuardedMongoTemplate.class)
                            .doesNotHaveBean(WriteGuardEventCounts.class)
                            .doesNotHaveBean(WriteGuardHealthIndicator.class);
                    insert(context.getBean(MongoTemplate.class), 5);
                });
    }

    @Test
    void withTheGuardOff_thereIsNoIndicator() {
        runner().withPropertyValues("mongo.write-guard.enabled=false")
                .run(context -> assertThat(context)
                        .doesNotHaveBean(WriteGuardHealthIndicator.class)
                        .doesNotHaveBean(WriteGuardInfoContributor.class));
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnGuard {
        @Bean
        WriteGuard writeGuard() {
            return WriteGuard.create();
        }
    }

    @Test
    void anApplicationsOwnGuard_isReported_andSaysItsEventsAreNotCounted() {
        runner().withUserConfiguration(OwnGuard.class).run(context -> {
            IndicatedHealthDescriptor health = guardHealth(context);
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails())
                    .containsEntry("copiesPossiblyRunning", 0)
                    .doesNotContainKey("gateRefusals");
            assertThat(health.getDetails().get("events").toString()).contains("not counted", "attachTo");
        });
    }

    // What is in effect: the deadline per client in milliseconds (not the formula), the worst case of one call, and
    // the guarded calls per plan mode.

    @Test
    @SuppressWarnings("unchecked")
    void info_showsTheDeadlineInEffect_perClient_inMilliseconds() {
        runner().run(context -> {
            context.getBean(MongoTemplate.class); // the client exists: the guard configured it
            List<Map<String, Object>> clients =
                    (List<Map<String, Object>>) guardInfo(context).get("clients");
            assertThat(clients).hasSize(1);
            assertThat(clients.get(0))
                    .containsEntry("client", 1)
                    .containsEntry("socketReadTimeoutMs", 900L)
                    .containsEntry("serverDeadlineMs", 600L)
                    .containsEntry("serverDeadlineFrom", "serverDeadlineFraction")
                    // 2 attempts x 900 ms + one backoff at its longest (10 ms x 1.5 jitter) + one gate grace of 20 ms
                    .containsEntry("worstCasePerCallMs", 1835L);
        });
    }

    @Test
    @SuppressWarnings("unchecked")
    void info_withAnExplicitDeadline_saysWhereItComesFrom() {
        runner().withPropertyValues("mongo.write-guard.server-deadline=250ms").run(context -> {
            Map<String, Object> client =
                    ((List<Map<String, Object>>) guardInfo(context).get("clients")).get(0);
            assertThat(client)
                    .containsEntry("serverDeadlineMs", 250L)
                    .containsEntry("serverDeadlineFrom", "serverDeadline");
        });
    }

    @Test
    @SuppressWarnings("unchecked")
    void infoAndHealth_countTheGuardedCallsPerPlanMode() {
        runner().run(context -> {
            MongoTemplate template = context.getBean(MongoTemplate.class);
            template.dropCollection("planModes");
            template.bulkOps(BulkMode.ORDERED, "planModes")
                    .insert(new Document("_id", 1))
                    .insert(new Document("_id", 2))
                    .execute();
            template.bulkOps(BulkMode.ORDERED, "planModes")
                    .updateMulti(new Query(Criteria.where("kind").is("x")), new Update().set("seen", true))
                    .insert(new Document("_id", 3))
                    .execute();

            Map<String, Long> plans = (Map<String, Long>) guardInfo(context).get("planModes");
            assertThat(plans).containsEntry("UNORDERED_ROUNDS", 1L).containsEntry("PRESERVE_ORDER", 1L);

            IndicatedHealthDescriptor health = guardHealth(context);
            assertThat((Map<String, Long>) health.getDetails().get("planModes"))
                    .containsEntry("UNORDERED_ROUNDS", 1L)
                    .containsEntry("PRESERVE_ORDER", 1L);
            assertThat(health.getDetails()).containsKey("clients");
        });
    }
}
