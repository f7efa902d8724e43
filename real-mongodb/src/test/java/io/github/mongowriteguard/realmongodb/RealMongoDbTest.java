package io.github.mongowriteguard.realmongodb;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TagFilter;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;
import org.testcontainers.DockerClientFactory;

import io.github.mongowriteguard.testkit.TestDeployment;

/**
 * {@code mvn verify -Preal-mongodb}: for MongoDB 4.4, 6.0 and 8.0, a replica set and a sharded cluster (each in one
 * container, {@code enableTestCommands=1}), and against each the tests of testkit and core tagged {@code deployment}
 * (those that honour {@code -Dmongo.uri}), launched here with {@code mongo.uri} set to the deployment. Where Docker is
 * absent it prints one line and skips.
 */
class RealMongoDbTest {
    private static final List<String> VERSIONS = List.of("4.4", "6.0", "8.0");

    @TestFactory
    Stream<DynamicTest> theSuiteAgainstRealMongoDb() {
        if (!dockerAvailable()) {
            System.out.println("real-mongodb: Docker is not available here; skipped the runs against MongoDB "
                + String.join(", ", VERSIONS) + " (replica set and sharded cluster).");
            Assumptions.abort("Docker is not available");
        }
        List<DynamicTest> runs = new ArrayList<>();
        for (String version : VERSIONS) {
            for (RealDeployment.Topology topology : RealDeployment.Topology.values()) {
                runs.add(DynamicTest.dynamicTest("MongoDB " + version + " " + topology, () -> runSuite(version, topology)));
            }
        }
        return runs.stream();
    }

    private static boolean dockerAvailable() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException | LinkageError e) {
            return false;
        }
    }

    private static void runSuite(String version, RealDeployment.Topology topology) throws Exception {
        try (RealDeployment deployment = RealDeployment.start(version, topology, Duration.ofMinutes(3))) {
            String previous = System.getProperty(TestDeployment.URI_PROPERTY);
            System.setProperty(TestDeployment.URI_PROPERTY, deployment.uri());
            try {
                LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                    .selectors(DiscoverySelectors.selectPackage("io.github.mongowriteguard"))
                    .filters(TagFilter.includeTags("deployment"))
                    .build();
                Launcher launcher = LauncherFactory.create();
                SummaryGeneratingListener listener = new SummaryGeneratingListener();
                launcher.execute(request, listener);
                TestExecutionSummary summary = listener.getSummary();
                System.out.printf("real-mongodb: MongoDB %s %s: %d passed, %d failed, %d skipped%n", version, topology,
                    summary.getTestsSucceededCount(), summary.getTotalFailureCount(),
                    summary.getTestsSkippedCount() + summary.getTestsAbortedCount());
                List<String> failures = summary.getFailures().stream()
                    .map(f -> f.getTestIdentifier().getDisplayName() + ": " + f.getException()).toList();
                assertThat(failures).as("tests failing against MongoDB %s %s", version, topology).isEmpty();
                assertThat(summary.getTestsSucceededCount()).as("tests run").isPositive();
            } finally {
                if (previous == null) {
                    System.clearProperty(TestDeployment.URI_PROPERTY);
                } else {
                    System.setProperty(TestDeployment.URI_PROPERTY, previous);
                }
            }
        }
    }
}
