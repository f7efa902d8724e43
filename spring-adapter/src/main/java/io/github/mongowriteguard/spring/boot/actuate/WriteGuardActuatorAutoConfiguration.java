package io.github.mongowriteguard.spring.boot.actuate;

import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.spring.boot.WriteGuardAutoConfiguration;
import io.github.mongowriteguard.spring.boot.WriteGuardBuilderCustomizer;
import org.springframework.boot.actuate.autoconfigure.info.ConditionalOnEnabledInfoContributor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Actuator support for the guard, when Spring Boot Actuator is on the class path (it is an optional dependency of
 * this module): {@link WriteGuardEventCounts} added to the auto-configured guard, the {@code mongoWriteGuard} health
 * indicator ({@code management.health.mongo-write-guard.enabled}) and the info contributor
 * ({@code management.info.mongo-write-guard.enabled}). Each backs off when the application declares its own bean.
 */
@AutoConfiguration(
        after = WriteGuardAutoConfiguration.class,
        afterName = {
            "org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration",
            "org.springframework.boot.actuate.autoconfigure.info.InfoContributorAutoConfiguration"
        })
@ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
@ConditionalOnBean(WriteGuard.class)
public class WriteGuardActuatorAutoConfiguration {

    /**
     * The counts of the guard's gate and deadline events.
     *
     * @return new counts
     */
    @Bean
    @ConditionalOnMissingBean
    public WriteGuardEventCounts writeGuardEventCounts() {
        return new WriteGuardEventCounts();
    }

    /**
     * Adds the counts to the auto-configured guard (a {@link WriteGuard} bean of the application is not built with
     * customizers: attach the counts yourself).
     *
     * @param counts the counts
     * @return the customizer
     */
    @Bean
    public WriteGuardBuilderCustomizer writeGuardEventCountsCustomizer(WriteGuardEventCounts counts) {
        return counts::attachTo;
    }

    /** The health indicator, unless turned off or declared by the application. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnEnabledHealthIndicator("mongo-write-guard")
    static class HealthConfiguration {
        @Bean
        @ConditionalOnMissingBean(name = "mongoWriteGuardHealthIndicator")
        WriteGuardHealthIndicator mongoWriteGuardHealthIndicator(WriteGuard guard, WriteGuardEventCounts counts) {
            return new WriteGuardHealthIndicator(guard, counts);
        }
    }

    /** The info contributor, when Actuator's info support is present, unless turned off or declared. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(
            name = {
                "org.springframework.boot.actuate.info.InfoContributor",
                "org.springframework.boot.actuate.autoconfigure.info.ConditionalOnEnabledInfoContributor"
            })
    @ConditionalOnEnabledInfoContributor("mongo-write-guard")
    static class InfoConfiguration {
        @Bean
        @ConditionalOnMissingBean(name = "mongoWriteGuardInfoContributor")
        WriteGuardInfoContributor mongoWriteGuardInfoContributor(WriteGuard guard, WriteGuardEventCounts counts) {
            return new WriteGuardInfoContributor(guard, counts);
        }
    }
}
