package io.github.mongowriteguard.benchmarks.lab;

import java.lang.management.ManagementFactory;

/**
 * The CPU time of the JVM's Java threads, read in nanoseconds: in {@code perf}, the calling thread (client), the
 * emulators' threads and the drivers' monitors. The process's CPU time ({@code OperatingSystemMXBean}) counts in
 * clock ticks of 10 ms on Linux ({@code times(2)}), too coarse for a block of a millisecond; the threads' clocks are
 * exact. Not counted: the collector's and the JIT compiler's threads, which the management interface does not list
 * (the allocation columns stand for the garbage), and threads started after {@link #now}.
 */
final class JavaThreadsCpu {
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private final long[] ids;

    private JavaThreadsCpu(long[] ids) {
        this.ids = ids;
    }

    /** {@return the Java threads alive now} */
    static JavaThreadsCpu now() {
        return new JavaThreadsCpu(THREADS.getAllThreadIds());
    }

    /** {@return each thread's CPU time now, ns; -1 for one that has ended} */
    long[] read() {
        return THREADS.getThreadCpuTime(ids);
    }

    /**
     * The CPU time the threads used since {@code before}, ns; a thread that ended in between is left out.
     *
     * @param before a {@link #read} of these threads
     * @return the sum of the threads' CPU time since then
     */
    long since(long[] before) {
        long[] after = read();
        long sum = 0;
        for (int i = 0; i < ids.length; i++) {
            if (before[i] >= 0 && after[i] >= before[i]) {
                sum += after[i] - before[i];
            }
        }
        return sum;
    }
}
