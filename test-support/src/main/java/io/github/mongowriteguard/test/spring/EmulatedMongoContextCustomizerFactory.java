package io.github.mongowriteguard.test.spring;

import io.github.mongowriteguard.test.EmulatedMongo;
import io.github.mongowriteguard.test.EmulatedMongoSpec;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.TestContextAnnotationUtils;

/**
 * Finds {@link EmulatedMongo} on a Spring test class (or an enclosing class) and adds the emulated deployment to its
 * application context. Registered in {@code META-INF/spring.factories}: the annotation is all a test needs.
 */
public final class EmulatedMongoContextCustomizerFactory implements ContextCustomizerFactory {
    /** Created by Spring's test context framework. */
    public EmulatedMongoContextCustomizerFactory() {}

    @Override
    public @Nullable ContextCustomizer createContextCustomizer(
            Class<?> testClass, List<ContextConfigurationAttributes> configAttributes) {
        EmulatedMongo annotation = TestContextAnnotationUtils.findMergedAnnotation(testClass, EmulatedMongo.class);
        return annotation == null ? null : new EmulatedMongoContextCustomizer(EmulatedMongoSpec.of(annotation));
    }
}
