package io.github.mongowriteguard.testkit.spec;

import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;

/**
 * One target's unified spec tests as JUnit dynamic tests, with the summary line {@code spec <target>: N passed, M
 * failed, K skipped} and the skip reasons printed on {@link #close()}. {@link UnifiedSpecTest} runs the driver's own
 * clients; other modules reach it through testkit's test jar with their own {@link SpecClients} (core's
 * {@code GuardedUnifiedSpecTest}: the guards).
 *
 * <pre>{@code
 * SpecSuite suite = SpecSuite.emulated("guarded", "replicaset", ServerVersion.V4_4,
 *         () -> EmulatedCluster.replicaSet().start(), clients);
 * return suite.tests(name -> name.startsWith("retryable-writes/"));   // in a @TestFactory; suite.close() in @AfterAll
 * }</pre>
 */
public final class SpecSuite implements AutoCloseable {
    private final SpecTarget target;
    private final SpecTally tally;
    private final UnifiedTestRunner runner;

    SpecSuite(SpecTarget target, SpecClients clients) {
        this.target = target;
        this.tally = new SpecTally(target.name());
        this.runner = new UnifiedTestRunner(target, clients);
    }

    /**
     * The spec tests on an emulated deployment, started when the first test runs.
     *
     * @param name     the target's name in the summary line
     * @param topology its {@code runOnRequirements} topology ({@code replicaset}, {@code sharded})
     * @param version  its server version
     * @param start    starts it
     * @param clients  makes the tests' clients and collections
     * @return the suite
     */
    public static SpecSuite emulated(
            String name,
            String topology,
            ServerVersion version,
            Supplier<? extends EmulatedCluster> start,
            SpecClients clients) {
        return new SpecSuite(SpecTargets.emulated(name, topology, version, start), clients);
    }

    /**
     * One container per spec file whose name (relative to the spec directory, e.g.
     * {@code retryable-writes/insertOne.json}) {@code files} accepts, one dynamic test per spec test; a single skipped
     * test when the spec directory ({@code -Dspec.dir}, else {@code ../shared/spec-tests}) is missing.
     *
     * @param files which files to run
     * @return the dynamic tests
     */
    public Stream<DynamicNode> tests(Predicate<String> files) {
        Path directory = SpecFile.directory();
        if (!Files.isDirectory(directory)) {
            String reason = "no spec tests directory at " + directory + " (set -Dspec.dir=...)";
            System.out.println("spec " + target.name() + ": SKIPPED, " + reason);
            return Stream.of(
                    DynamicTest.dynamicTest("spec " + target.name() + " (skipped)", () -> Assumptions.abort(reason)));
        }
        List<SpecFile> selected = SpecFile.load(directory).stream()
                .filter(file -> files.test(file.name()))
                .toList();
        return selected.stream()
                .map(file -> DynamicContainer.dynamicContainer(
                        file.name(),
                        file.path().toUri(),
                        file.document().getArray("tests").stream()
                                .map(BsonValue::asDocument)
                                .map(test -> dynamicTest(file, test))));
    }

    private DynamicNode dynamicTest(SpecFile file, BsonDocument test) {
        String description = test.getString("description").getValue();
        return DynamicTest.dynamicTest(description, () -> tally.run(() -> runner.run(file, test)));
    }

    /** Closes the runner's clients and the deployment; prints the skip reasons and the summary line. */
    @Override
    public void close() {
        runner.close();
        target.close();
        System.out.print(tally.skipReport());
        System.out.println(tally.summary());
    }
}
