package io.github.mongowriteguard.testkit.spec;

import java.util.List;
import org.opentest4j.TestAbortedException;

/**
 * Spec tests the Java driver itself does not pass, as its own unified runner records them
 * ({@code UnifiedRetryableWritesTest}, {@code UnifiedTestModifications} in mongodb/mongo-java-driver). These are
 * driver gaps, not emulator gaps; each entry names the driver ticket and when it applies.
 */
final class KnownDriverIssues {
    private record Issue(String test, String ticket, String reason, String belowVersion, String topology) {}

    private static final List<Issue> ISSUES = List.of(new Issue(
            "RetryableWriteError label is added based on writeConcernError in pre-4.4 mongod response",
            "JAVA-5341",
            "the driver does not add RetryableWriteError to a pre-4.4 replica set's writeConcernError",
            "4.4",
            "replicaset"));

    private KnownDriverIssues() {}

    static void skipIfKnown(String testDescription, SpecTarget target) {
        for (Issue issue : ISSUES) {
            if (issue.test().equals(testDescription)
                    && issue.topology().equals(target.topology())
                    && RunOnRequirements.compare(target.serverVersion(), issue.belowVersion()) < 0) {
                throw new TestAbortedException("known Java driver issue " + issue.ticket() + ": " + issue.reason());
            }
        }
    }
}
