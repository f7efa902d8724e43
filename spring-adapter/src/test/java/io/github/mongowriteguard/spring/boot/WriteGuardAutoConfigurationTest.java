package io.github.mongowriteguard.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.event.ConnectionCheckedOutEvent;
import com.mongodb.event.ConnectionPoolListener;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.retry.RetryPolicy;
import io.github.mongowriteguard.spring.data.GuardedMongoTemplate;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.mongodb.autoconfigure.DataMongoAutoConfiguration;
import org.springframework.boot.mongodb.autoconfigure.MongoAutoConfiguration;
import org.springframework.boot.mongodb.autoconfigure.MongoClientSettingsBuilderCustomizer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.mongodb.core.BulkOperations;
import org.springframework.data.mongodb.core.BulkOperations.BulkMode;
import org.springframework.data.mongodb.core.MongoTemplate;

class WriteGuardAutoConfigurationTest {
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
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        MongoAutoConfiguration.class,
                        DataMongoAutoConfiguration.class,
                        WriteGuardAutoConfiguration.class))
                .withPropertyValues(
                        "spring.mongodb.uri=" + cluster.connectionString()
                                + (cluster.connectionString().contains("?") ? "&" : "?")
                                + "socketTimeoutMS=900&serverSelectionTimeoutMS=3000",
                        "spring.mongodb.database=boot");
    }

    @Test
    void byDefault_theTemplateIsGuarded_andBulksRunThroughTheGuard() {
        runner().run(context -> {
            MongoTemplate template = context.getBean(MongoTemplate.class);
            assertThat(template).isInstanceOf(GuardedMongoTemplate.class);
            assertThat(((GuardedMongoTemplate) template).getWriteGuard()).isSameAs(context.getBean(WriteGuard.class));

            template.bulkOps(BulkMode.ORDERED, "items")
                    .insert(new Document("_id", 1))
                    .execute();

            assertThat(template.getCollection("items").countDocuments()).isEqualTo(1);
        });
    }

    @Test
    void applicationsOwnCommandAndPoolListeners_stillReceiveTheirEvents_besideTheGuards() {
        List<String> commands = new CopyOnWriteArrayList<>();
        List<ConnectionCheckedOutEvent> checkOuts = new CopyOnWriteArrayList<>();
        MongoClientSettingsBuilderCustomizer own = builder -> builder.addCommandListener(new CommandListener() {
                    @Override
                    public void commandStarted(CommandStartedEvent event) {
                        commands.add(event.getCommandName());
                    }
                })
                .applyToConnectionPoolSettings(pool -> pool.addConnectionPoolListener(new ConnectionPoolListener() {
                    @Override
                    public void connectionCheckedOut(ConnectionCheckedOutEvent event) {
                        checkOuts.add(event);
                    }
                }));
        runner().withBean(MongoClientSettingsBuilderCustomizer.class, () -> own).run(context -> {
            MongoTemplate template = context.getBean(MongoTemplate.class);
            assertThat(template).isInstanceOf(GuardedMongoTemplate.class);

            template.bulkOps(BulkMode.ORDERED, "listened")
                    .insert(new Document("_id", 1))
                    .execute();

            assertThat(commands).contains("insert");
            assertThat(checkOuts).isNotEmpty();
        });
    }

    @Test
    void lastWriteWinsProperty_mapsOntoTheCoreSetting() {
        runner().withPropertyValues("mongo.write-guard.last-write-wins=true")
                .run(context -> assertThat(
                                context.getBean(WriteGuard.class).getSettings().isLastWriteWins())
                        .isTrue());
    }

    @Test
    void settleHoldProperties_mapOntoTheCoreSetting_andABadValueStopsStartup() {
        runner().withPropertyValues(
                        "mongo.write-guard.settle-hold.max-copies=50", "mongo.write-guard.settle-hold.max-age=2m")
                .run(context -> {
                    WriteGuardSettings settings =
                            context.getBean(WriteGuard.class).getSettings();
                    assertThat(settings.getSettleHoldMaxCopies()).isEqualTo(50);
                    assertThat(settings.getSettleHoldMaxAge()).isEqualTo(java.time.Duration.ofMinutes(2));
                });
        runner().withPropertyValues("mongo.write-guard.settle-hold.max-age=30m")
                .run(context -> assertThat(context.getStartupFailure())
                        .hasStackTraceContaining("mongo.write-guard.settle-hold")
                        .hasStackTraceContaining("logicalSessionTimeoutMinutes"));
    }

    @Test
    void parallelShardCommandsProperty_mapsOntoTheCoreSetting_andABadValueStopsStartup() {
        runner().withPropertyValues("mongo.write-guard.parallel-shard-commands=1")
                .run(context -> assertThat(
                                context.getBean(WriteGuard.class).getSettings().getParallelShardCommands())
                        .isEqualTo(1));
        runner().withPropertyValues("mongo.write-guard.parallel-shard-commands=0")
                .run(context -> assertThat(context.getStartupFailure())
                        .hasStackTraceContaining("Invalid value '0' for mongo.write-guard.parallel-shard-commands")
                        .hasStackTraceContaining("must be from 1 to 64"));
    }

    @Test
    void properties_mapOntoTheCoreSettings() {
        runner().withPropertyValues(
                        "mongo.write-guard.server-deadline=500ms",
                        "mongo.write-guard.server-deadline-fraction=0.5",
                        "mongo.write-guard.default-server-deadline=3s",
                        "mongo.write-guard.strict-ordered=true",
                        "mongo.write-guard.retry.max-attempts=4",
                        "mongo.write-guard.retry.initial-backoff=200ms",
                        "mongo.write-guard.retry.multiplier=3",
                        "mongo.write-guard.retry.max-backoff=2s",
                        "mongo.write-guard.retry.jitter=0.25",
                        "mongo.write-guard.retry.gate-grace=20ms")
                .run(context -> assertThat(context.getBean(WriteGuard.class).getSettings())
                        .isEqualTo(WriteGuardSettings.builder()
                                .serverDeadline(Duration.ofMillis(500))
                                .serverDeadlineFraction(0.5)
                                .defaultServerDeadline(Duration.ofSeconds(3))
                                .strictOrdered(true)
                                .retryPolicy(RetryPolicy.builder()
                                        .maxAttempts(4)
                                        .initialBackoff(Duration.ofMillis(200))
                                        .multiplier(3)
                                        .maxBackoff(Duration.ofSeconds(2))
                                        .jitter(0.25)
                                        .gateGrace(Duration.ofMillis(20))
                                        .build())
                                .build()));
    }

    @Test
    void unsetProperties_keepTheCoreDefaults() {
        runner().run(context ->
                assertThat(context.getBean(WriteGuard.class).getSettings()).isEqualTo(WriteGuardSettings.defaults()));
    }

    @Test
    void invalidProperty_failsStartup_withTheCoresMessage() {
        runner().withPropertyValues("mongo.write-guard.retry.max-attempts=50").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure())
                    .rootCause()
                    .hasMessageContaining("maxAttempts (50) must be 1 to 10");
        });
    }

    @Test
    void disabled_givesThePlainTemplate() {
        runner().withPropertyValues("mongo.write-guard.enabled=false").run(context -> {
            assertThat(context).doesNotHaveBean(WriteGuard.class);
            assertThat(context.getBean(MongoTemplate.class)).isExactlyInstanceOf(MongoTemplate.class);
        });
    }

    @Test
    void applicationsOwnTemplate_isKept() {
        runner().withBean(
                        "mongoTemplate",
                        MongoTemplate.class,
                        () -> new MongoTemplate(
                                com.mongodb.client.MongoClients.create(cluster.connectionString()), "own"))
                .run(context ->
                        assertThat(context.getBean(MongoTemplate.class)).isExactlyInstanceOf(MongoTemplate.class));
    }

    @Test
    void meterRegistry_whenPresent_getsTheGuardsMeters() {
        runner().withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(context -> {
            context.getBean(MongoTemplate.class)
                    .bulkOps(BulkMode.UNORDERED, "metered")
                    .insert(new Document("_id", 1))
                    .execute();

            assertThat(context.getBean(MeterRegistry.class)
                            .find("mongodb.guard.writes")
                            .timers())
                    .isNotEmpty();
        });
    }

    @Test
    void roundTripEstimateShards_registersTheEstimateOfRoundTripsAvoided_forOrderedBulks() {
        runner().withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withPropertyValues("mongo.write-guard.round-trip-estimate-shards=5")
                .run(context -> {
                    BulkOperations bulk = context.getBean(MongoTemplate.class).bulkOps(BulkMode.ORDERED, "estimated");
                    for (int i = 0; i < 100; i++) {
                        bulk.insert(new Document("_id", i));
                    }
                    bulk.execute();

                    // the driver's ORDERED bulk: 1 + 99 x (1 - 1/5) = 80.2; the plan's one unordered round: 1
                    assertThat(context.getBean(MeterRegistry.class)
                                    .get("mongodb.guard.roundtrips.avoided")
                                    .counter()
                                    .count())
                            .isEqualTo(79.2, org.assertj.core.data.Offset.offset(1e-9));
                });
    }

    @Test
    void observationRegistry_whenPresent_observesEachGuardedCall() {
        runner().withBean(ObservationRegistry.class, TestObservationRegistry::create)
                .run(context -> {
                    context.getBean(MongoTemplate.class)
                            .bulkOps(BulkMode.ORDERED, "observed")
                            .insert(new Document("_id", 1))
                            .execute();

                    TestObservationRegistry registry =
                            (TestObservationRegistry) context.getBean(ObservationRegistry.class);
                    TestObservationRegistryAssert.assertThat(registry)
                            .hasObservationWithNameEqualTo("mongodb.guard.write")
                            .that()
                            .hasContextualNameEqualTo("guarded bulkWrite boot.observed")
                            .hasLowCardinalityKeyValue("db.namespace", "boot.observed")
                            .hasLowCardinalityKeyValue("mongodb.guard.outcome", "success")
                            .hasBeenStarted()
                            .hasBeenStopped();
                });
    }

    @Test
    void configurationMetadata_isGenerated_forEveryProperty() throws Exception {
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            String json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            for (String name : new String[] {
                "enabled",
                "server-deadline",
                "server-deadline-fraction",
                "default-server-deadline",
                "strict-ordered",
                "round-trip-estimate-shards",
                "retry.max-attempts",
                "retry.initial-backoff",
                "retry.multiplier",
                "retry.max-backoff",
                "retry.jitter",
                "retry.gate-grace"
            }) {
                assertThat(json).contains("\"mongo.write-guard." + name + "\"");
            }
        }
    }
}
