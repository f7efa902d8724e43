package io.github.mongowriteguard.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.spring.data.GuardedMongoTemplate;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.data.mongodb.autoconfigure.DataMongoAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.mongodb.autoconfigure.MongoAutoConfiguration;
import org.springframework.boot.mongodb.autoconfigure.MongoClientSettingsBuilderCustomizer;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.data.mongodb.core.MongoTemplate;

/**
 * Misconfigurations that used to pass startup and fail on the first write stop the application at startup, and
 * Spring Boot's failure report names the fix (through the analyzer registered in {@code META-INF/spring.factories}).
 */
@ExtendWith(OutputCaptureExtension.class)
class WriteGuardStartupFailureTest {
    private static EmulatedReplicaSet cluster;

    @BeforeAll
    static void start() {
        cluster = EmulatedCluster.replicaSet().start();
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    private static String uri(String options) {
        return cluster.connectionString() + (cluster.connectionString().contains("?") ? "&" : "?") + options;
    }

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        MongoAutoConfiguration.class,
                        DataMongoAutoConfiguration.class,
                        WriteGuardAutoConfiguration.class))
                .withPropertyValues(
                        "spring.mongodb.uri=" + uri("socketTimeoutMS=900&serverSelectionTimeoutMS=3000"),
                        "spring.mongodb.database=boot");
    }

    /** The analysis Spring Boot prints, from the analyzers it loads (ours among them). */
    private static FailureAnalysis analysis(AssertableApplicationContext context) {
        assertThat(context).hasFailed();
        // Boot's other analyzers need a bean factory to be built; only ours matters here.
        List<FailureAnalyzer> analyzers = SpringFactoriesLoader.forDefaultResourceLocation()
                .load(
                        FailureAnalyzer.class,
                        SpringFactoriesLoader.FailureHandler.handleMessage((message, failure) -> {}));
        return analyzers.stream()
                .filter(WriteGuardFailureAnalyzer.class::isInstance)
                .map(analyzer -> analyzer.analyze(context.getStartupFailure()))
                .filter(java.util.Objects::nonNull)
                .findFirst()
                .orElseThrow(() -> new AssertionError("no analysis for " + context.getStartupFailure()));
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "mongo.write-guard.retry.max-attempts=50 | mongo.write-guard.retry.max-attempts | maxAttempts (50) must be 1 to 10",
                "mongo.write-guard.retry.initial-backoff=0ms | mongo.write-guard.retry.initial-backoff | must be positive",
                "mongo.write-guard.retry.multiplier=0.5 | mongo.write-guard.retry.multiplier | multiplier (0.5) must be at least 1",
                "mongo.write-guard.retry.max-backoff=50ms | mongo.write-guard.retry.max-backoff | must not be below initialBackoff",
                "mongo.write-guard.retry.jitter=1.5 | mongo.write-guard.retry.jitter | jitter (1.5) must be in [0, 1)",
                "mongo.write-guard.retry.gate-grace=-1ms | mongo.write-guard.retry.gate-grace | gateGrace",
                "mongo.write-guard.server-deadline=0ms | mongo.write-guard.server-deadline | serverDeadline (0",
                "mongo.write-guard.server-deadline-fraction=1.5 | mongo.write-guard.server-deadline-fraction | serverDeadlineFraction",
                "mongo.write-guard.default-server-deadline=0s | mongo.write-guard.default-server-deadline | defaultServerDeadline"
            })
    void invalidProperty_failsStartup_withAnAnalysisNamingTheProperty(String setting, String property, String rule) {
        runner().withPropertyValues(setting).run(context -> {
            FailureAnalysis analysis = analysis(context);
            assertThat(analysis.getDescription())
                    .startsWith("Invalid value")
                    .contains(property)
                    .contains(rule);
            assertThat(analysis.getAction()).contains("Change " + property).contains("mongo.write-guard.enabled=false");
            assertThat(context.getStartupFailure())
                    .hasRootCauseInstanceOf(
                            rule.contains("initialBackoff")
                                    ? IllegalStateException.class
                                    : IllegalArgumentException.class);
        });
    }

    @Test
    void serverDeadlineAtTheSocketTimeout_failsStartup_namingTheDeadlineAndTheSocketTimeout() {
        runner().withPropertyValues("mongo.write-guard.server-deadline=900ms").run(context -> {
            FailureAnalysis analysis = analysis(context);
            assertThat(analysis.getDescription())
                    .contains("server deadline (900 ms) is not below")
                    .contains("socket read timeout (900 ms)");
            assertThat(analysis.getAction())
                    .contains("Lower mongo.write-guard.server-deadline below 900 ms")
                    .contains("socketTimeoutMS")
                    .contains("mongo.write-guard.enabled=false");
        });
    }

    @Test
    void strictOrderedWithLastWriteWins_failsStartup_namingBothProperties() {
        runner().withPropertyValues("mongo.write-guard.strict-ordered=true", "mongo.write-guard.last-write-wins=true")
                .run(context -> {
                    FailureAnalysis analysis = analysis(context);
                    assertThat(analysis.getDescription())
                            .contains("mongo.write-guard.strict-ordered=true")
                            .contains("mongo.write-guard.last-write-wins=true")
                            .contains("cannot be combined");
                    assertThat(analysis.getAction())
                            .contains("Set only one of mongo.write-guard.strict-ordered and"
                                    + " mongo.write-guard.last-write-wins")
                            .contains("mongo.write-guard.enabled=false");
                });
    }

    @ParameterizedTest
    @CsvSource({
        "mongo.write-guard.retry.max-attemps=5, mongo.write-guard.retry.max-attemps",
        "mongo.write-guard.server-deadline-ms=5000, mongo.write-guard.server-deadline-ms",
        "mongo.write-guard.strictOrdered2=true, mongo.write-guard.strictordered2"
    })
    void misspeltProperty_failsStartup_namingIt(String setting, String property) {
        runner().withPropertyValues(setting).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure())
                    .rootCause()
                    .isInstanceOf(UnboundConfigurationPropertiesException.class)
                    .hasMessageContaining(property);
        });
    }

    @Test
    void everyDocumentedProperty_binds_andStarts() {
        runner().withPropertyValues(
                        "mongo.write-guard.enabled=true",
                        "mongo.write-guard.server-deadline-fraction=0.5",
                        "mongo.write-guard.default-server-deadline=5s",
                        "mongo.write-guard.strict-ordered=false",
                        "mongo.write-guard.last-write-wins=true",
                        "mongo.write-guard.parallel-shard-commands=4",
                        "mongo.write-guard.settle-hold.max-copies=100",
                        "mongo.write-guard.settle-hold.max-age=5m",
                        "mongo.write-guard.retry.max-attempts=4",
                        "mongo.write-guard.retry.initial-backoff=200ms",
                        "mongo.write-guard.retry.multiplier=3",
                        "mongo.write-guard.retry.max-backoff=2s",
                        "mongo.write-guard.retry.jitter=0.2",
                        "mongo.write-guard.retry.gate-grace=50ms",
                        "mongo.write-guard.template.update=plain",
                        "mongo.write-guard.template.find-and-modify=guarded")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    WriteGuardProperties bound = context.getBean(WriteGuardProperties.class);
                    assertThat(bound.getParallelShardCommands()).isEqualTo(4);
                    assertThat(bound.getRetry().getGateGrace()).hasMillis(50);
                    assertThat(bound.plainTemplateGroups())
                            .containsExactly(io.github.mongowriteguard.spring.data.TemplateWriteGroup.UPDATE);
                });
    }

    @Test
    void serverDeadlineBelowTheSocketTimeout_starts() {
        runner().withPropertyValues("mongo.write-guard.server-deadline=899ms")
                .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void clientSideOperationTimeout_failsStartup_namingTimeoutMS() {
        runner().withPropertyValues("spring.mongodb.uri=" + uri("socketTimeoutMS=900&timeoutMS=500"))
                .run(context -> {
                    FailureAnalysis analysis = analysis(context);
                    assertThat(analysis.getDescription()).contains("timeoutMS=500");
                    assertThat(analysis.getAction()).contains("Remove timeoutMS");
                });
    }

    @Test
    void unacknowledgedWriteConcern_failsStartup_namingW0AndTheFix() {
        runner().withPropertyValues("spring.mongodb.uri=" + uri("socketTimeoutMS=900&w=0"))
                .run(context -> {
                    FailureAnalysis analysis = analysis(context);
                    assertThat(analysis.getDescription())
                            .contains("write concern is unacknowledged")
                            .contains("w=0")
                            .contains("refuses every write");
                    assertThat(analysis.getAction())
                            .contains("Remove w=0 from spring.mongodb.uri")
                            .contains("w=majority")
                            .contains("mongo.write-guard.enabled=false");
                });
    }

    @Test
    void retryWritesFalse_starts_withAWarningSayingWhatTheGuardThenDoes(CapturedOutput output) {
        runner().withPropertyValues("spring.mongodb.uri=" + uri("socketTimeoutMS=1500&retryWrites=false"))
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output.getErr())
                .contains("retryWrites=false: the guard sends no transaction number, so a lost reply leaves"
                        + " writes UNKNOWN");
    }

    @Test
    void shortSocketTimeout_starts_withAWarningNamingTheDeadlineAndTheFix(CapturedOutput output) {
        runner().withPropertyValues("spring.mongodb.uri=" + uri("socketTimeoutMS=100"))
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output.getErr())
                .contains("The guard's server deadline is 67 ms (socket read timeout 100 ms)")
                .contains("Raise socketTimeoutMS in spring.mongodb.uri")
                .contains("at least 1500 ms");
    }

    @Test
    void socketTimeoutOfAFewSeconds_startsWithoutWarnings(CapturedOutput output) {
        runner().withPropertyValues("spring.mongodb.uri=" + uri("socketTimeoutMS=1500"))
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output.getErr()).doesNotContain("server deadline is").doesNotContain("retryWrites=false");
    }

    @Test
    void applicationsOwnMongoClient_notBuiltThroughTheGuard_failsStartup_namingTheSpringFix() {
        runner().withBean(MongoClient.class, () -> MongoClients.create(cluster.connectionString()))
                .run(context -> {
                    FailureAnalysis analysis = analysis(context);
                    assertThat(analysis.getDescription())
                            .contains("guarded MongoTemplate bean 'mongoTemplate' cannot write through the guard")
                            .contains("configure(MongoClientSettings.Builder) was not called");
                    assertThat(analysis.getAction())
                            .contains("writeGuard.configure(settingsBuilder)")
                            .contains("MongoClientSettingsBuilderCustomizer")
                            .contains("mongo.write-guard.enabled=false");
                });
    }

    @Test
    void applicationsOwnMongoClient_builtThroughTheGuard_startsAndWrites() {
        runner().withUserConfiguration(OwnClientConfiguration.class).run(context -> {
            assertThat(context).hasNotFailed();
            MongoTemplate template = context.getBean(MongoTemplate.class);
            assertThat(template).isInstanceOf(GuardedMongoTemplate.class);
            template.insert(new Document("_id", 1), "own");
            assertThat(template.getCollection("own").countDocuments()).isEqualTo(1);
        });
    }

    @Test
    void applicationsOwnMongoClient_withTheGuardOff_starts() {
        runner().withPropertyValues("mongo.write-guard.enabled=false")
                .withBean(MongoClient.class, () -> MongoClients.create(cluster.connectionString()))
                .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void applicationsCustomizer_isConfiguredByTheGuard_andStarts() {
        runner().withBean(
                        MongoClientSettingsBuilderCustomizer.class,
                        () -> builder -> builder.applyToSocketSettings(
                                s -> s.readTimeout(2, java.util.concurrent.TimeUnit.SECONDS)))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    context.getBean(MongoTemplate.class).insert(new Document("_id", 1), "customized");
                });
    }

    @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
    static class OwnClientConfiguration {
        @org.springframework.context.annotation.Bean
        MongoClient mongoClient(WriteGuard writeGuard) {
            MongoClientSettings.Builder settings = MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(uri("socketTimeoutMS=900")));
            return MongoClients.create(writeGuard.configure(settings).build());
        }
    }
}
