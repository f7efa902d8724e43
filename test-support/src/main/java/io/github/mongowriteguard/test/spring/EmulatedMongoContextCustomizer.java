package io.github.mongowriteguard.test.spring;

import io.github.mongowriteguard.test.EmulatedMongoCluster;
import io.github.mongowriteguard.test.EmulatedMongoSpec;
import java.util.Objects;
import org.springframework.boot.mongodb.autoconfigure.MongoConnectionDetails;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.MergedContextConfiguration;

/**
 * Starts the deployment of one {@link EmulatedMongoSpec} with the test's application context and registers it as
 * the beans {@code emulatedMongoCluster} ({@link EmulatedMongoCluster}) and {@code emulatedMongoConnectionDetails}
 * (Spring Boot's {@link MongoConnectionDetails}); the deployment stops with the context. Equal specs give equal
 * customizers, so Spring's context cache shares one context (and one deployment) between tests that ask for the same.
 */
final class EmulatedMongoContextCustomizer implements ContextCustomizer {
    private final EmulatedMongoSpec spec;

    EmulatedMongoContextCustomizer(EmulatedMongoSpec spec) {
        this.spec = Objects.requireNonNull(spec, "spec");
    }

    @Override
    public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration mergedConfig) {
        EmulatedMongoBeans.register(context, spec.start());
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof EmulatedMongoContextCustomizer that && spec.equals(that.spec);
    }

    @Override
    public int hashCode() {
        return spec.hashCode();
    }
}
