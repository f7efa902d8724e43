package io.github.mongowriteguard.benchmarks.lab;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.function.Supplier;
import javax.management.JMException;
import javax.management.ObjectName;

/**
 * {@code perf}'s warm-up pass: before the first case is measured, every case runs on both paths, interleaved, until
 * each path has written at least {@code --warmup-writes} writes in it (at least one call), then one pair as the
 * measurement makes it. Without it the first case
 * was measured while the guard's larger code path (its own code and the driver's {@code runCommand}) was still being
 * compiled: a single write's first case came out 1.22 where the same write in later cases was 1.02 to 1.03, and a
 * program alternating the two paths call by call saw the guard's ratio settle only after about 40,000 calls per path.
 * After the pass every case is measured in the same compiled code, whatever its place in the order, and the JIT's
 * profile of a method both paths share has seen every case before any is measured. Each case still gets its own
 * warm-up right before its pairs ({@link Perf.Settings#warmupsFor}), which also times the calls that size its runs.
 * After the pass, and after each case's own warm-up, the measurement waits until the JIT's queue has drained
 * ({@link #awaitQuietJit}).
 */
final class PerfWarmUp {
    private PerfWarmUp() {}

    /**
     * One measured case: its two paths, and what runs before each of its pairs.
     *
     * @param label      the row's label
     * @param writes     the writes of one call
     * @param driver     one call of the driver's path
     * @param guard      one call of the guard's path
     * @param beforePair run before each pair (and not timed)
     */
    record Case(String label, int writes, Supplier<?> driver, Supplier<?> guard, Runnable beforePair) {}

    /**
     * The calls of each path in a case's share of the pass: enough to write {@code warmupWrites} writes, at least one.
     * Bulks of 1 write: {@code warmupWrites} calls; bulks of at least {@code warmupWrites} writes: one call, the
     * large bulks' loops being hot after one call and their per-call code compiled by the smaller cases.
     */
    static int passCalls(int warmupWrites, int writes) {
        return Math.max(1, callsToWrite(warmupWrites, writes));
    }

    /** The calls of {@code writes} writes each that write at least {@code total} writes (capped at the int range). */
    static int callsToWrite(int total, int writes) {
        return (int) Math.min(Integer.MAX_VALUE, (total + (long) writes - 1) / writes);
    }

    /** How the pass warms one case: {@code calls} calls of each path, then one measured pair, discarded. */
    interface Step {
        void warm(Case c, int calls);
    }

    /**
     * Runs the pass: each case in order through {@code step}, with {@link #passCalls} calls of each path (driver and
     * guard alternating call by call) and then one pair as the measurement makes it, its figures discarded, so that
     * the measurement's own code (its blocks' loop and the clocks it reads) is compiled too; then
     * {@link #awaitQuietJit}. None when {@code warmupWrites} is 0.
     *
     * @return the calls each path made in the pass before the cases' pairs
     */
    static long run(List<Case> cases, int warmupWrites, Step step) {
        long calls = 0;
        if (warmupWrites == 0) {
            return calls;
        }
        for (Case c : cases) {
            int n = passCalls(warmupWrites, c.writes());
            step.warm(c, n);
            calls += n;
        }
        awaitQuietJit();
        return calls;
    }

    /**
     * {@code n} calls of {@code path}. The pass, each case's warm-up and the measured blocks all call through here, so
     * that the loop the blocks time was compiled, with every case's paths in its profile, before the first block.
     */
    static void calls(Supplier<?> path, int n) {
        for (int call = 0; call < n; call++) {
            path.get();
        }
    }

    /** How long the JIT must have finished no compilation for its queue to count as drained. */
    static final long QUIET_MILLIS = 500;
    /** The longest wait for a quiet JIT: on a machine that never lets it drain, measure anyway. */
    static final long MAX_WAIT_MILLIS = 20_000;

    /**
     * Waits, making no calls, until the JIT is idle: no method compiling or queued (the {@code Compiler.queue}
     * diagnostic command, where the JVM offers it) and no compilation finished for {@link #QUIET_MILLIS}; at most
     * {@link #MAX_WAIT_MILLIS}. Counting calls is not enough on a loaded machine: after the pass of 1-write cases the
     * C2 compiler's queue was seconds behind (driver and guard methods queued in the pass compiled during the first
     * measured case, 1 to 2 s of compilation in its pairs), and a long compilation on a starved compiler thread
     * finishes nothing for over 0.5 s, so the warm-up waits for the queue itself, as JMH's warm-up by time lets it
     * drain. Without a compilation-time clock it does not wait.
     *
     * @return the time waited, ms
     */
    static long awaitQuietJit() {
        long start = System.nanoTime();
        long last = jitMillis();
        if (last < 0) {
            return 0;
        }
        long lastChange = start;
        while (true) {
            long now = System.nanoTime();
            if (now - start >= MAX_WAIT_MILLIS * 1_000_000
                    || (now - lastChange >= QUIET_MILLIS * 1_000_000 && !compiling())) {
                return (now - start) / 1_000_000;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while perf waited for the JIT", e);
            }
            long jit = jitMillis();
            if (jit != last) {
                last = jit;
                lastChange = System.nanoTime();
            }
        }
    }

    /**
     * Whether the JIT is compiling or has methods queued: the {@code Compiler.queue} diagnostic command lists each
     * such method as {@code Class::method}; false when the JVM does not offer the command.
     */
    static boolean compiling() {
        try {
            Object queue = ManagementFactory.getPlatformMBeanServer()
                    .invoke(
                            new ObjectName("com.sun.management:type=DiagnosticCommand"),
                            "compilerQueue",
                            new Object[] {null},
                            new String[] {String[].class.getName()});
            return queue instanceof String text && text.contains("::");
        } catch (JMException | RuntimeException e) {
            return false;
        }
    }

    /**
     * The JIT compiler's accumulated compilation time, ms, or -1 when the JVM does not report it. The difference over
     * a case's measured pairs says whether the case was measured in compiled code (close to 0) or while the JIT was
     * still compiling (as the first case was before the pass).
     */
    static long jitMillis() {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : -1;
    }
}
