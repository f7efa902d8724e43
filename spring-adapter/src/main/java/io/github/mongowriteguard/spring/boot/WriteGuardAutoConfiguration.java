package io.github.mongowriteguard.spring.boot;

import com.mongodb.MongoClientSettings;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.spring.data.GuardedMongoTemplate;
import io.github.mongowriteguard.spring.data.GuardedReactiveMongoTemplate;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.mongodb.autoconfigure.MongoClientSettingsBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.data.mongodb.MongoDatabaseFactory;
import org.springframework.data.mongodb.ReactiveMongoDatabaseFactory;
import org.springframework.data.mongodb.core.MongoOperations;
import org.springframework.data.mongodb.core.MongoTemplate;
import org.springframework.data.mongodb.core.ReactiveMongoOperations;
import org.springframework.data.mongodb.core.ReactiveMongoTemplate;
import org.springframework.data.mongodb.core.convert.MongoConverter;
import reactor.core.publisher.Flux;

/**
 * Guards Spring Boot's MongoDB client and template: a {@link WriteGuard} from {@code mongo.write-guard.*}, applied to
 * the Boot-built client through a {@link MongoClientSettingsBuilderCustomizer}, and a {@link GuardedMongoTemplate}
 * as the {@code MongoTemplate} bean, so its writes run through the guard; with the reactive starter (alone or beside the
 * synchronous one) a {@link GuardedReactiveMongoTemplate} as the {@code reactiveMongoTemplate} bean, on Boot's reactive
 * client, which the same customizer configures. The guard's meters go to the
 * application's {@link MeterRegistry} when there is one, and each guarded call is an Observation
 * ({@code mongodb.guard.write}) of the application's {@link ObservationRegistry} when there is one.
 *
 * <p>Backs off: {@code mongo.write-guard.enabled=false} leaves Boot's plain configuration; a {@link WriteGuard} bean
 * of the application replaces the auto-configured one; a {@code MongoOperations} bean of the application is kept
 * (wrap it yourself with {@link GuardedMongoTemplate}). A {@code MongoClient} bean of the application is not built by
 * Boot, so the customizer does not reach it: call {@code guard.configure(builder)} where it is built (the startup check
 * refuses a guarded template on a client the guard did not configure).
 */
@AutoConfiguration(
        afterName = {
            "org.springframework.boot.mongodb.autoconfigure.MongoAutoConfiguration",
            "org.springframework.boot.mongodb.autoconfigure.MongoReactiveAutoConfiguration"
        },
        beforeName = {
            "org.springframework.boot.data.mongodb.autoconfigure.DataMongoAutoConfiguration",
            "org.springframework.boot.data.mongodb.autoconfigure.DataMongoReactiveAutoConfiguration"
        })
@ConditionalOnClass({MongoTemplate.class, MongoClientSettingsBuilderCustomizer.class, WriteGuard.class})
@ConditionalOnProperty(prefix = "mongo.write-guard", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(WriteGuardProperties.class)
public class WriteGuardAutoConfiguration {

    /**
     * The guard, from {@code mongo.write-guard.*} and every {@link WriteGuardBuilderCustomizer} bean in order.
     *
     * @param properties  the {@code mongo.write-guard.*} properties
     * @param customizers the application's customizers (and the meter-registry binding)
     * @return the guard
     */
    @Bean
    @ConditionalOnMissingBean
    public WriteGuard writeGuard(
            WriteGuardProperties properties, ObjectProvider<WriteGuardBuilderCustomizer> customizers) {
        WriteGuard.Builder builder = WriteGuard.builder().settings(properties.toSettings());
        customizers.orderedStream().forEach(customizer -> customizer.customize(builder));
        return builder.build();
    }

    /**
     * Registers the guard's pool and server listeners on the client Boot builds; the guard reads its socket timeout there, once,
     * so this customizer runs after every other one ({@link Ordered#LOWEST_PRECEDENCE}).
     *
     * @param guard the guard
     * @return a customizer that calls {@link WriteGuard#configure} on Boot's client settings
     */
    @Bean
    public MongoClientSettingsBuilderCustomizer writeGuardMongoClientSettingsBuilderCustomizer(WriteGuard guard) {
        return new ConfigureLast(guard);
    }

    /** {@link WriteGuard#configure}, after the application's and Boot's own customizers. */
    private record ConfigureLast(WriteGuard guard) implements MongoClientSettingsBuilderCustomizer, Ordered {
        @Override
        public void customize(MongoClientSettings.Builder builder) {
            guard.configure(builder);
            ClientSettingsCheck.check(guard.getSettings(), builder); // refused now, not on the first write
        }

        @Override
        public int getOrder() {
            return Ordered.LOWEST_PRECEDENCE;
        }
    }

    /**
     * The {@code MongoTemplate} bean, guarded: its {@code bulkOps(...)} run through the guard.
     *
     * @param factory   Boot's database factory
     * @param converter Boot's converter
     * @param guard     the guard configured on Boot's client
     * @return the guarded template
     * @param properties the {@code mongo.write-guard.*} properties; {@code template.<group>=plain} groups skip the guard
     */
    @Bean
    @ConditionalOnMissingBean(MongoOperations.class)
    @Conditional(SynchronousMongo.class)
    public GuardedMongoTemplate mongoTemplate(
            MongoDatabaseFactory factory, MongoConverter converter, WriteGuard guard, WriteGuardProperties properties) {
        GuardedMongoTemplate template = new GuardedMongoTemplate(factory, converter, guard);
        template.setPlainGroups(properties.plainTemplateGroups()); // mongo.write-guard.template.<group>=plain
        return template;
    }

    /**
     * A synchronous client or database factory to build the template on, as Spring Boot's own template needs (its
     * factory needs a single {@code MongoClient}, or is the application's): a reactive application whose synchronous
     * client Boot does not build (the reactive starter with {@code MongoAutoConfiguration} excluded) gets no
     * synchronous template, as without the guard.
     */
    static final class SynchronousMongo extends AnyNestedCondition {
        SynchronousMongo() {
            super(ConfigurationPhase.REGISTER_BEAN);
        }

        @ConditionalOnBean(com.mongodb.client.MongoClient.class)
        static final class Client {}

        @ConditionalOnBean(MongoDatabaseFactory.class)
        static final class Factory {}
    }

    /**
     * Checks at startup that every guarded template can write through its guard (its client configured by the guard,
     * the deadline below the socket timeout), so a misconfiguration stops the application with a failure report.
     *
     * @param beans the application's beans
     * @return the check, run once every singleton exists
     */
    @Bean
    static SmartInitializingSingleton writeGuardStartupCheck(ListableBeanFactory beans) {
        return GuardedTemplateStartupCheck.synchronous(beans);
    }

    /**
     * The {@code ReactiveMongoTemplate} bean, guarded, for an application with the reactive starter (alone or beside
     * the synchronous one): Spring Boot builds its reactive client from the same customizers, so the guard configures
     * it too, and the template writes through the guard's reactive collections. Reactive repositories use it.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({ReactiveMongoTemplate.class, com.mongodb.reactivestreams.client.MongoClient.class, Flux.class})
    static class WriteGuardReactiveConfiguration {
        /**
         * The guarded reactive template, on Boot's reactive database factory and client.
         *
         * @param factory   Boot's reactive database factory
         * @param converter Boot's converter
         * @param guard     the guard configured on Boot's reactive client
         * @param client    Boot's reactive client
         * @param properties the {@code mongo.write-guard.*} properties; {@code template.<group>=plain} groups skip the
         *                   guard, as in the synchronous template
         * @return the guarded template
         */
        @Bean
        @ConditionalOnMissingBean(ReactiveMongoOperations.class)
        @ConditionalOnBean(com.mongodb.reactivestreams.client.MongoClient.class)
        GuardedReactiveMongoTemplate reactiveMongoTemplate(
                ReactiveMongoDatabaseFactory factory,
                MongoConverter converter,
                WriteGuard guard,
                com.mongodb.reactivestreams.client.MongoClient client,
                WriteGuardProperties properties) {
            GuardedReactiveMongoTemplate template = new GuardedReactiveMongoTemplate(factory, converter, guard, client);
            template.setPlainGroups(properties.plainTemplateGroups()); // mongo.write-guard.template.<group>=plain
            return template;
        }

        /** As {@link WriteGuardAutoConfiguration#writeGuardStartupCheck}, for the guarded reactive templates. */
        @Bean
        static SmartInitializingSingleton writeGuardReactiveStartupCheck(ListableBeanFactory beans) {
            return new GuardedTemplateStartupCheck<>(
                    beans, GuardedReactiveMongoTemplate.class, GuardedReactiveMongoTemplate::checkGuardable);
        }
    }

    /** Binds the guard's meters ({@code mongodb.guard.*}) to the application's registry, when Micrometer is present. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    static class WriteGuardMetricsConfiguration {
        @Bean
        WriteGuardBuilderCustomizer writeGuardMeterRegistryCustomizer(
                ObjectProvider<MeterRegistry> registries, WriteGuardProperties properties) {
            return builder -> {
                registries.ifAvailable(builder::meterRegistry);
                try {
                    builder.roundTripEstimateShards(properties.getRoundTripEstimateShards());
                } catch (IllegalArgumentException refused) {
                    throw WriteGuardConfigurationException.invalidProperty(
                            WriteGuardProperties.PREFIX + "round-trip-estimate-shards",
                            properties.getRoundTripEstimateShards(),
                            refused);
                }
            };
        }
    }

    /**
     * Runs each guarded call inside an Observation ({@code mongodb.guard.write}) of the application's
     * {@link ObservationRegistry}, when there is one, so traces show guarded writes beside the driver's commands.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(ObservationRegistry.class)
    static class WriteGuardObservationConfiguration {
        @Bean
        WriteGuardBuilderCustomizer writeGuardObservationRegistryCustomizer(
                ObjectProvider<ObservationRegistry> registries) {
            return builder -> registries.ifAvailable(builder::observationRegistry);
        }
    }
}
