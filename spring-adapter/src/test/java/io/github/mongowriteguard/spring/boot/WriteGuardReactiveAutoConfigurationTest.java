package io.github.mongowriteguard.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoClients;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.spring.data.GuardedMongoTemplate;
import io.github.mongowriteguard.spring.data.GuardedReactiveMongoTemplate;
import io.github.mongowriteguard.spring.data.TemplateWriteGroup;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.mongodb.autoconfigure.DataMongoAutoConfiguration;
import org.springframework.boot.data.mongodb.autoconfigure.DataMongoReactiveAutoConfiguration;
import org.springframework.boot.mongodb.autoconfigure.MongoAutoConfiguration;
import org.springframework.boot.mongodb.autoconfigure.MongoReactiveAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.mongodb.core.MongoTemplate;
import org.springframework.data.mongodb.core.ReactiveMongoTemplate;

/**
 * The auto-configuration in reactive applications: the reactive starter alone (Boot's reactive client and template
 * only), both starters, and the startup check of the guarded {@code ReactiveMongoTemplate}.
 */
class WriteGuardReactiveAutoConfigurationTest {
    private static EmulatedReplicaSet cluster;

    @BeforeAll
    static void start() {
        cluster = EmulatedCluster.replicaSet().start();
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    private static String uri() {
        return cluster.connectionString() + (cluster.connectionString().contains("?") ? "&" : "?")
                + "socketTimeoutMS=3000&serverSelectionTimeoutMS=3000";
    }

    private ApplicationContextRunner reactiveOnly() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        MongoReactiveAutoConfiguration.class,
                        DataMongoReactiveAutoConfiguration.class,
                        WriteGuardAutoConfiguration.class))
                .withPropertyValues("spring.mongodb.uri=" + uri(), "spring.mongodb.database=boot");
    }

    private ApplicationContextRunner bothStarters() {
        return reactiveOnly()
                .withConfiguration(
                        AutoConfigurations.of(MongoAutoConfiguration.class, DataMongoAutoConfiguration.class));
    }

    @Test
    void reactiveStarterAlone_theReactiveTemplateIsGuarded_andWrites_noSynchronousTemplate() {
        reactiveOnly().run(context -> {
            assertThat(context).hasNotFailed();
            ReactiveMongoTemplate template = context.getBean(ReactiveMongoTemplate.class);
            assertThat(template).isInstanceOf(GuardedReactiveMongoTemplate.class);
            assertThat(((GuardedReactiveMongoTemplate) template).getWriteGuard())
                    .isSameAs(context.getBean(WriteGuard.class));
            template.insert(new Document("_id", 1), "alone").block();
            assertThat(template.getCollection("alone")
                            .flatMap(c -> reactor.core.publisher.Mono.from(c.countDocuments()))
                            .block())
                    .isEqualTo(1);
            assertThat(context.getBean(WriteGuard.class).getClientDeadlines()).hasSize(1);
            assertThat(context).doesNotHaveBean(MongoTemplate.class);
        });
    }

    @Test
    void bothStarters_bothTemplatesAreGuarded_byOneGuard() {
        bothStarters().run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(MongoTemplate.class)).isInstanceOf(GuardedMongoTemplate.class);
            assertThat(context.getBean(ReactiveMongoTemplate.class)).isInstanceOf(GuardedReactiveMongoTemplate.class);
            assertThat(context.getBean(WriteGuard.class).getClientDeadlines()).hasSize(2);
        });
    }

    @Test
    void plainTemplateGroups_applyToTheReactiveTemplateToo() {
        bothStarters()
                .withPropertyValues("mongo.write-guard.template.update=plain")
                .run(context -> {
                    assertThat(context.getBean(GuardedReactiveMongoTemplate.class)
                                    .getPlainGroups())
                            .containsExactly(TemplateWriteGroup.UPDATE);
                    assertThat(context.getBean(GuardedMongoTemplate.class).getPlainGroups())
                            .containsExactly(TemplateWriteGroup.UPDATE);
                });
    }

    @Test
    void guardOff_springsOwnReactiveTemplate() {
        reactiveOnly().withPropertyValues("mongo.write-guard.enabled=false").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(ReactiveMongoTemplate.class).getClass()).isEqualTo(ReactiveMongoTemplate.class);
        });
    }

    @Test
    void applicationsOwnReactiveClient_notBuiltThroughTheGuard_failsStartup_namingTheSpringFix() {
        reactiveOnly()
                .withBean(MongoClient.class, () -> MongoClients.create(cluster.connectionString()))
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure())
                            .isInstanceOf(WriteGuardConfigurationException.class)
                            .hasMessageContaining(
                                    "guarded ReactiveMongoTemplate bean 'reactiveMongoTemplate' cannot write through"
                                            + " the guard")
                            .hasMessageContaining("configure(MongoClientSettings.Builder) was not called");
                    assertThat(((WriteGuardConfigurationException) context.getStartupFailure()).action())
                            .contains("writeGuard.configure(settingsBuilder)")
                            .contains("mongo.write-guard.enabled=false");
                });
    }

    @Test
    void applicationsOwnReactiveClient_builtThroughTheGuard_startsAndWrites() {
        reactiveOnly().withUserConfiguration(OwnClientConfiguration.class).run(context -> {
            assertThat(context).hasNotFailed();
            ReactiveMongoTemplate template = context.getBean(ReactiveMongoTemplate.class);
            assertThat(template).isInstanceOf(GuardedReactiveMongoTemplate.class);
            template.insert(new Document("_id", 1), "own").block();
        });
    }

    @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
    static class OwnClientConfiguration {
        @org.springframework.context.annotation.Bean
        MongoClient reactiveStreamsClient(WriteGuard writeGuard) {
            MongoClientSettings.Builder settings =
                    MongoClientSettings.builder().applyConnectionString(new ConnectionString(uri()));
            return MongoClients.create(writeGuard.configure(settings).build());
        }
    }
}
