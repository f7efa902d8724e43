package io.github.mongowriteguard.testkit.spec;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.opentest4j.TestAbortedException;

/** Counts one target's spec tests as they end, for the summary line {@code spec <target>: N passed, M failed, K skipped}. */
final class SpecTally {
    private final String target;
    private final AtomicInteger passed = new AtomicInteger();
    private final AtomicInteger failed = new AtomicInteger();
    private final AtomicInteger skipped = new AtomicInteger();
    private final Map<String, Integer> skipReasons = new TreeMap<>();

    SpecTally(String target) {
        this.target = target;
    }

    /** Runs one test, counting how it ended; the outcome is rethrown for JUnit. */
    void run(Runnable test) {
        try {
            test.run();
            passed.incrementAndGet();
        } catch (TestAbortedException e) {
            skipped.incrementAndGet();
            synchronized (skipReasons) {
                skipReasons.merge(String.valueOf(e.getMessage()), 1, Integer::sum);
            }
            throw e;
        } catch (RuntimeException | Error e) {
            failed.incrementAndGet();
            throw e;
        }
    }

    int total() {
        return passed.get() + failed.get() + skipped.get();
    }

    String summary() {
        return "spec " + target + ": " + passed.get() + " passed, " + failed.get() + " failed, " + skipped.get()
                + " skipped";
    }

    /** The reasons tests were skipped, with counts, one per line. */
    String skipReport() {
        StringBuilder builder = new StringBuilder();
        synchronized (skipReasons) {
            skipReasons.forEach((reason, count) -> builder.append("  skipped ")
                    .append(count)
                    .append(": ")
                    .append(reason)
                    .append('\n'));
        }
        return builder.toString();
    }
}
