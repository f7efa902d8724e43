package io.github.mongowriteguard.testkit.spec;

import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.TestFactory;

/**
 * The MongoDB drivers' specification tests (unified format, read from {@code ../shared/spec-tests} or
 * {@code -Dspec.dir}) run by {@link UnifiedTestRunner} against each target: the emulated replica set (4.4), or
 * the real deployment {@code -Dmongo.uri}. Each spec test is one dynamic test; after a target's tests, one
 * line {@code spec <target>: N passed, M failed, K skipped} is printed.
 *
 * <p>A target is one {@code @TestFactory} method calling {@link #specTests(SpecTarget)}: the emulated replica set
 * and the emulated sharded cluster run by default.
 */
@org.junit.jupiter.api.Tag("deployment") // runs against -Dmongo.uri (the real-mongodb profile)
class UnifiedSpecTest {
    private static final List<SpecSuite> SUITES = new ArrayList<>();

    @TestFactory
    Stream<DynamicNode> replicaset() {
        SpecTarget real = SpecTargets.realOrNull("replicaset");
        return specTests(
                real != null
                        ? real
                        : SpecTargets.emulated(
                                "replicaset",
                                "replicaset",
                                ServerVersion.V4_4,
                                () -> EmulatedCluster.replicaSet()
                                        .serverVersion(ServerVersion.V4_4)
                                        .start()));
    }

    /**
     * The emulated sharded cluster: 2 shards behind 2 mongos (so {@code useMultipleMongoses} gets two). A real
     * deployment given with {@code -Dmongo.uri} runs once, as the replicaset target, with its own topology.
     */
    @TestFactory
    Stream<DynamicNode> sharded() {
        Assumptions.assumeTrue(
                SpecTargets.realOrNull("sharded") == null,
                "a real deployment runs as the replicaset target, which reads its topology from the server");
        return specTests(SpecTargets.emulated(
                "sharded",
                "sharded",
                ServerVersion.V4_4,
                () -> EmulatedCluster.sharded()
                        .shards(2)
                        .mongos(2)
                        .serverVersion(ServerVersion.V4_4)
                        .start()));
    }

    /**
     * Opt-in: the emulated replica set at other server versions, {@code -Dspec.serverVersions=4.2,6.0}; each is a
     * target of its own ({@code spec replicaset-4.2: ...}). Not run against a real deployment.
     */
    @TestFactory
    Stream<DynamicNode> replicasetAtOtherVersions() {
        String versions = System.getProperty("spec.serverVersions", "").trim();
        Assumptions.assumeFalse(
                versions.isEmpty(), "set -Dspec.serverVersions=4.2,6.0 to run the replica set at other versions");
        Assumptions.assumeTrue(
                SpecTargets.realOrNull("replicaset") == null, "other versions are for the emulator only");
        return Stream.of(versions.split(","))
                .map(String::trim)
                .filter(v -> !v.isEmpty())
                .map(ServerVersion::parse)
                .map(version -> DynamicContainer.dynamicContainer(
                        "replicaset " + version.versionString(),
                        specTests(SpecTargets.emulated(
                                "replicaset-" + version.major() + "." + version.minor(),
                                "replicaset",
                                version,
                                () -> EmulatedCluster.replicaSet()
                                        .serverVersion(version)
                                        .start()))));
    }

    static Stream<DynamicNode> specTests(SpecTarget target) {
        SpecSuite suite = new SpecSuite(target, SpecClients.DRIVER);
        synchronized (SUITES) {
            SUITES.add(suite);
        }
        return suite.tests(name -> true);
    }

    @AfterAll
    static void summaries() {
        synchronized (SUITES) {
            SUITES.forEach(SpecSuite::close);
            SUITES.clear();
        }
    }
}
