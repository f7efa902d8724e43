package io.github.mongowriteguard.benchmarks.lab;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.function.Supplier;

/**
 * {@code perf}'s warm-up pass: before the first case is measured, every case runs on both paths, interleaved, until
 * each path has written at least {@code --warmup-writes} writes in it (at least one call). Without it the first case
 * was measured while the guard's larger code path (its own code and the driver's {@code runCommand}) was still being
 * compiled: a single write's first case came out 1.22 where the same write in later cases was 1.02 to 1.03, and a
 * program alternating the two paths call by call saw the guard's ratio settle only after about 40,000 calls per path.
 * After the pass every case is measured in the same compiled code, whatever its place in the order, and the JIT's
 * profile of a method both paths share has seen every case before any is measured. Each case still gets its own
 * warm-up right before its pairs ({@link Perf.Settings#warmupsFor}), which also times the calls that size its runs.
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
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, (warmupWrites + (long) writes - 1) / writes));
    }

    /**
     * Runs the pass: each case in order, {@link #passCalls} calls of each path, driver and guard alternating call by
     * call, with the case's {@code beforePair} before it (the emulators forget their records, as before a pair).
     *
     * @return the calls each path made in the pass; none when {@code warmupWrites} is 0 (no pass)
     */
    static long run(List<Case> cases, int warmupWrites) {
        long calls = 0;
        if (warmupWrites == 0) {
            return calls;
        }
        for (Case c : cases) {
            c.beforePair().run();
            int n = passCalls(warmupWrites, c.writes());
            for (int i = 0; i < n; i++) {
                c.driver().get();
                c.guard().get();
            }
            calls += n;
        }
        return calls;
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
