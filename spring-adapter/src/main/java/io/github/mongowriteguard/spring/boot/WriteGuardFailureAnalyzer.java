package io.github.mongowriteguard.spring.boot;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Spring Boot's failure report for a {@link WriteGuardConfigurationException}, however deep Spring wrapped it: the
 * problem as the "Description", the fix as the "Action", instead of a stack trace nine causes deep.
 */
public final class WriteGuardFailureAnalyzer extends AbstractFailureAnalyzer<WriteGuardConfigurationException> {
    /** Created by Spring Boot from {@code META-INF/spring.factories}. */
    public WriteGuardFailureAnalyzer() {}

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, WriteGuardConfigurationException cause) {
        return new FailureAnalysis(cause.problem(), cause.action(), cause);
    }
}
