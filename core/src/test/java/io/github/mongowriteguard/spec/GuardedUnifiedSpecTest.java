package io.github.mongowriteguard.spec;

import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import io.github.mongowriteguard.testkit.spec.SpecSuite;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.TestFactory;

/**
 * The drivers' unified spec tests of CRUD and retryable writes ({@code crud/}, {@code retryable-writes/} under the spec
 * directory, {@code -Dspec.dir} or {@code ../shared/spec-tests}), their writes sent through the synchronous guard and
 * through the reactive guard, on the emulated replica set and sharded cluster (4.4): the results, errors and final
 * documents the driver gets, and its command events where the guard promises the driver's commands
 * ({@link GuardSpecCases}). testkit's runner ({@code SpecSuite}, through its test jar) with the guard's clients
 * ({@link GuardSpecClients}); one line {@code spec <target>: N passed, M failed, K skipped} per target.
 */
class GuardedUnifiedSpecTest {
    private static final Predicate<String> FILES =
            name -> name.startsWith("crud/") || name.startsWith("retryable-writes/");
    private static final List<SpecSuite> SUITES = new ArrayList<>();

    @TestFactory
    Stream<DynamicNode> replicaset() {
        return bothGuards(
                "replicaset",
                () -> EmulatedCluster.replicaSet()
                        .serverVersion(ServerVersion.V4_4)
                        .start());
    }

    @TestFactory
    Stream<DynamicNode> sharded() {
        return bothGuards(
                "sharded",
                () -> EmulatedCluster.sharded()
                        .shards(2)
                        .mongos(2)
                        .serverVersion(ServerVersion.V4_4)
                        .start());
    }

    private static Stream<DynamicNode> bothGuards(
            String topology, java.util.function.Supplier<? extends EmulatedCluster> start) {
        return Stream.of(GuardSpecClients.values()).map(clients -> {
            String name = topology + " " + clients.name().toLowerCase(java.util.Locale.ROOT) + " guard";
            SpecSuite suite = SpecSuite.emulated(name, topology, ServerVersion.V4_4, start, clients);
            synchronized (SUITES) {
                SUITES.add(suite);
            }
            return DynamicContainer.dynamicContainer(name, suite.tests(FILES));
        });
    }

    @AfterAll
    static void summaries() {
        synchronized (SUITES) {
            SUITES.forEach(SpecSuite::close);
            SUITES.clear();
        }
    }
}
