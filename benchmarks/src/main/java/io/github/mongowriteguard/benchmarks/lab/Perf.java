package io.github.mongowriteguard.benchmarks.lab;

import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.benchmarks.jmh.CostFreeBenchmark;
import io.github.mongowriteguard.benchmarks.jmh.CostFreeClients;
import io.github.mongowriteguard.benchmarks.jmh.PlanBenchmark;
import java.io.PrintStream;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.bson.Document;

/**
 * The performance targets in one table, guard and driver side by side in one JVM, their runs interleaved (the order
 * alternating) and the medians compared, so that load from other processes on a shared machine hits both alike:
 * <ol>
 *   <li>{@code bulkWrite} on the cost-free server ({@code Storage.NONE}): median time per bulk and the client's
 *       allocation per write (bytes the calling thread allocated: the sync driver encodes and decodes on it, the
 *       emulator runs on its own threads, so the emulator's share is not in it);</li>
 *   <li>planning plus encoding ({@link PlanBenchmark#planAndEncode}) against the driver's conversion plus encoding
 *       ({@link PlanBenchmark#driverConvertAndEncode}), no server;</li>
 *   <li>throughput of threads sharing one client (and one guard), rounds of a fixed time, alternating.</li>
 * </ol>
 * The same cases run under JMH ({@code CostFreeBenchmark}, {@code PlanBenchmark}, {@code ConcurrencyBenchmark}), where
 * the two paths run in separate forks one after the other.
 */
final class Perf {
    /** The command's options. */
    record Settings(
            List<Integer> sizes,
            List<Integer> threads,
            int warmups,
            int warmupWrites,
            int runs,
            int rounds,
            int seconds,
            int planWrites) {
        /**
         * The warm-up runs of a case whose runs write {@code writes} each: at least {@link #warmups}, and enough that
         * each path has written at least {@link #warmupWrites} before its first measured run, so that a case of small
         * bulks is measured in compiled code as a case of large ones is (as JMH warms up for a time, not a number of
         * calls). The same number for both paths.
         */
        int warmupsFor(int writes) {
            long byWrites = (warmupWrites + (long) writes - 1) / writes;
            return (int) Math.max(warmups, Math.min(Integer.MAX_VALUE, byWrites));
        }
    }

    /**
     * One row: median time (ms, or operations per second) and median allocation per operation, driver then guard; the
     * medians of the calling thread's CPU time (ms; for throughput: the process's CPU ms per bulk) and of the JVM's GC
     * time per run (ms; NaN where not measured). {@code writes} is the row's bulk size (0 for other rows).
     */
    record Row(
            String label,
            int writes,
            double driver,
            double guard,
            double driverAlloc,
            double guardAlloc,
            double driverCpu,
            double guardCpu,
            double driverGc,
            double guardGc) {
        Row(String label, double driver, double guard, double driverAlloc, double guardAlloc) {
            this(label, 0, driver, guard, driverAlloc, guardAlloc, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
        }

        double ratio() {
            return guard / driver;
        }

        double allocRatio() {
            return guardAlloc / driverAlloc;
        }

        double cpuRatio() {
            return guardCpu / driverCpu;
        }

        /** This row with its bulk size. */
        Row withWrites(int n) {
            return new Row(label, n, driver, guard, driverAlloc, guardAlloc, driverCpu, guardCpu, driverGc, guardGc);
        }
    }

    /** The bulkWrite target: guard / driver time at most this, at every bulk size, ordered and unordered. */
    static final double BULK_TIME_TARGET = 1.03;
    /** The throughput target: guard / driver at least this at the thread counts of {@link #THROUGHPUT_TARGETED}. */
    static final double THROUGHPUT_TARGET = 0.97;

    static final List<Integer> THROUGHPUT_TARGETED = List.of(8, 64);

    private Perf() {}

    /** What one {@code perf} run measured: the tables. */
    record Result(Settings settings, List<Row> writes, List<Row> plan, List<Row> threads) {
        void print(PrintStream out) {
            Perf.print(settings, writes, plan, threads, out);
            PerfSeries.print(writes, out);
            out.println();
            out.println("not in this table: java -jar benchmarks/target/lab.jar soak | payloads | latency");
            out.flush();
        }

        /** The tables as JSON: each row's medians, ratios, and whether its target is met (null: no target). */
        Map<String, Object> toJson() {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("warmups", settings.warmups());
            json.put("warmupWrites", settings.warmupWrites());
            json.put("runs", settings.runs());
            List<Object> bulk = new ArrayList<>();
            for (Row r : writes) {
                Map<String, Object> row = row(r, "Millis", r.writes());
                row.put("writes", r.writes());
                row.put("driverCpuMillis", r.driverCpu());
                row.put("guardCpuMillis", r.guardCpu());
                row.put("driverGcMillis", r.driverGc());
                row.put("guardGcMillis", r.guardGc());
                row.put("timeTargetMet", r.ratio() <= BULK_TIME_TARGET);
                bulk.add(row);
            }
            json.put("bulkWrite", bulk);
            json.put("series", PerfSeries.toJson(writes));
            List<Object> planning = new ArrayList<>();
            for (Row r : plan) {
                Map<String, Object> row = row(r, "Millis", settings.planWrites());
                row.put("timeTargetMet", r.ratio() <= 1.10);
                row.put("allocationTargetMet", r.allocRatio() <= 1.05);
                planning.add(row);
            }
            json.put("planAndEncode", planning);
            List<Object> throughput = new ArrayList<>();
            for (Row r : threads) {
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("label", r.label());
                row.put("threads", r.writes());
                row.put("driverPerSecond", r.driver());
                row.put("guardPerSecond", r.guard());
                row.put("ratio", r.ratio());
                row.put("driverCpuMillisPerBulk", r.driverCpu());
                row.put("guardCpuMillisPerBulk", r.guardCpu());
                row.put("cpuRatio", r.cpuRatio());
                row.put("targetMet", THROUGHPUT_TARGETED.contains(r.writes()) ? r.ratio() >= THROUGHPUT_TARGET : null);
                throughput.add(row);
            }
            json.put("throughput", throughput);
            return json;
        }

        private static Map<String, Object> row(Row r, String unit, int writes) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("label", r.label());
            row.put("driver" + unit, r.driver());
            row.put("guard" + unit, r.guard());
            row.put("ratio", r.ratio());
            row.put("driverBytesPerWrite", r.driverAlloc() / writes);
            row.put("guardBytesPerWrite", r.guardAlloc() / writes);
            row.put("allocationRatio", r.allocRatio());
            return row;
        }
    }

    static Result run(Settings settings, PrintStream log) {
        List<Row> writes = new ArrayList<>();
        try (CostFreeClients driver = CostFreeClients.start("driver");
                CostFreeClients guard = CostFreeClients.start("guard")) {
            for (int docs : settings.sizes()) {
                for (String kind : List.of("replace-upsert", "insert")) {
                    List<WriteModel<Document>> models = CostFreeBenchmark.models(kind, docs);
                    for (boolean ordered : List.of(true, false)) {
                        BulkWriteOptions options = new BulkWriteOptions().ordered(ordered);
                        String label = docs + " " + kind + (ordered ? " ordered" : " unordered");
                        log.println("perf: " + label);
                        forgetRecords(driver, guard);
                        writes.add(interleave(
                                        label,
                                        () -> driver.bulkWrite(models, options),
                                        () -> guard.bulkWrite(models, options),
                                        settings.warmupsFor(docs),
                                        settings.runs())
                                .withWrites(docs));
                    }
                }
            }
            List<Row> plan = new ArrayList<>();
            if (settings.planWrites() > 0) {
                for (String filters : List.of("Filters.eq", "Document")) {
                    PlanBenchmark benchmark = new PlanBenchmark();
                    benchmark.writes = settings.planWrites();
                    benchmark.filters = filters;
                    benchmark.prepare();
                    log.println("perf: plan and encode, " + filters);
                    plan.add(interleave(
                            settings.planWrites() + " " + filters,
                            benchmark::driverConvertAndEncode,
                            benchmark::planAndEncode,
                            settings.warmupsFor(settings.planWrites()),
                            settings.runs()));
                }
            }
            List<Row> threads = new ArrayList<>();
            List<WriteModel<Document>> models = CostFreeBenchmark.models("replace-upsert", 100);
            BulkWriteOptions unordered = new BulkWriteOptions().ordered(false);
            for (int t : settings.threads()) {
                log.println("perf: " + t + " threads");
                forgetRecords(driver, guard);
                double[][] perSecond = new double[2][settings.rounds()];
                double[][] cpuPerBulk = new double[2][settings.rounds()];
                throughput(driver, models, unordered, t, settings.seconds());
                throughput(guard, models, unordered, t, settings.seconds());
                for (int round = 0; round < settings.rounds(); round++) {
                    boolean driverFirst = round % 2 == 0;
                    for (int at : driverFirst ? new int[] {0, 1} : new int[] {1, 0}) {
                        double[] measured =
                                throughput(at == 0 ? driver : guard, models, unordered, t, settings.seconds());
                        perSecond[at][round] = measured[0];
                        cpuPerBulk[at][round] = measured[1];
                    }
                }
                threads.add(new Row(
                        t + " threads",
                        t,
                        median(perSecond[0]),
                        median(perSecond[1]),
                        Double.NaN,
                        Double.NaN,
                        median(cpuPerBulk[0]),
                        median(cpuPerBulk[1]),
                        Double.NaN,
                        Double.NaN));
            }
            return new Result(settings, writes, plan, threads);
        }
    }

    /** The emulator keeps a small record per command it received: forgotten between cases, so they do not pile up. */
    private static void forgetRecords(CostFreeClients driver, CostFreeClients guard) {
        driver.cluster().truth().reset();
        guard.cluster().truth().reset();
    }

    /**
     * Warm-up runs of both, then {@code runs} of each, the order alternating; medians of time, allocation and CPU time
     * of the calling thread, and of the JVM's GC time during the run.
     */
    static Row interleave(String label, Supplier<?> driver, Supplier<?> guard, int warmups, int runs) {
        for (int i = 0; i < warmups; i++) {
            driver.get();
            guard.get();
        }
        double[][] millis = new double[2][runs];
        double[][] allocated = new double[2][runs];
        double[][] cpu = new double[2][runs];
        double[][] gc = new double[2][runs];
        com.sun.management.ThreadMXBean thread = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        for (int run = 0; run < runs; run++) {
            for (int at : run % 2 == 0 ? new int[] {0, 1} : new int[] {1, 0}) {
                Supplier<?> path = at == 0 ? driver : guard;
                long gcBefore = gcMillis();
                long bytes = thread.getCurrentThreadAllocatedBytes();
                long cpuBefore = thread.getCurrentThreadCpuTime();
                long start = System.nanoTime();
                path.get();
                millis[at][run] = (System.nanoTime() - start) / 1e6;
                cpu[at][run] = (thread.getCurrentThreadCpuTime() - cpuBefore) / 1e6;
                allocated[at][run] = thread.getCurrentThreadAllocatedBytes() - bytes;
                gc[at][run] = gcMillis() - gcBefore;
            }
        }
        return new Row(
                label,
                0,
                median(millis[0]),
                median(millis[1]),
                median(allocated[0]),
                median(allocated[1]),
                median(cpu[0]),
                median(cpu[1]),
                median(gc[0]),
                median(gc[1]));
    }

    /** The JVM's collectors' accumulated collection time, ms. */
    private static long gcMillis() {
        long total = 0;
        for (GarbageCollectorMXBean collector : ManagementFactory.getGarbageCollectorMXBeans()) {
            total += Math.max(0, collector.getCollectionTime());
        }
        return total;
    }

    /**
     * Bulks per second of {@code threads} threads sharing {@code clients} for {@code seconds}, and the process's CPU
     * time per bulk (ms): on a machine with fewer cores than threads the throughput is bounded by it, and it moves much
     * less than the throughput when other processes take the cores.
     */
    static double[] throughput(
            CostFreeClients clients,
            List<WriteModel<Document>> models,
            BulkWriteOptions options,
            int threads,
            int seconds) {
        AtomicLong done = new AtomicLong();
        AtomicReference<RuntimeException> failure = new AtomicReference<>();
        CountDownLatch start = new CountDownLatch(1);
        long[] window = new long[1];
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            Thread worker = new Thread(
                    () -> {
                        try {
                            start.await();
                            while (System.nanoTime() < window[0]) {
                                clients.bulkWrite(models, options);
                                done.incrementAndGet();
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        } catch (RuntimeException e) {
                            failure.compareAndSet(null, e);
                        }
                    },
                    "perf-" + i);
            worker.start();
            workers.add(worker);
        }
        long cpuBefore = processCpuNanos();
        long began = System.nanoTime();
        window[0] = began + seconds * 1_000_000_000L;
        start.countDown();
        for (Thread worker : workers) {
            try {
                worker.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while the perf threads ran", e);
            }
        }
        if (failure.get() != null) {
            throw failure.get();
        }
        double elapsed = (System.nanoTime() - began) / 1e9;
        double cpuMillis = (processCpuNanos() - cpuBefore) / 1e6;
        return new double[] {done.get() / elapsed, done.get() == 0 ? Double.NaN : cpuMillis / done.get()};
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    static String met(boolean met) {
        return met ? "met" : "NOT met";
    }

    static void print(Settings settings, List<Row> writes, List<Row> plan, List<Row> threads, PrintStream out) {
        out.printf(
                "%nperf: the performance targets; guard and driver in one JVM, runs interleaved, medians (warm-up: at least"
                        + " %d runs and %,d writes per path and case; %d measured runs each; throughput: %d rounds of %d s"
                        + " each). On a shared machine read the ratios.%n",
                settings.warmups(), settings.warmupWrites(), settings.runs(), settings.rounds(), settings.seconds());
        out.printf(
                "%n1. bulkWrite on the cost-free server (Storage.NONE); target: time guard / driver <= %.2f at every bulk"
                        + " size, ordered and unordered%n   B/write: what the calling thread allocated per write (the"
                        + " client's share; the emulator runs on its own threads)%n",
                BULK_TIME_TARGET);
        out.printf(
                "%-30s %10s %10s %7s %10s %10s %7s %s%n",
                "writes", "driver ms", "guard ms", "ratio", "driver B/w", "guard B/w", "ratio", "target (time)");
        for (Row r : writes) {
            out.printf(
                    "%-30s %10.3f %10.3f %7.3f %10.0f %10.0f %7.3f %s%n",
                    r.label(),
                    r.driver(),
                    r.guard(),
                    r.ratio(),
                    r.driverAlloc() / r.writes(),
                    r.guardAlloc() / r.writes(),
                    r.allocRatio(),
                    met(r.ratio() <= BULK_TIME_TARGET));
        }
        if (!plan.isEmpty()) {
            out.printf(
                    "%n2. planning + encoding vs the driver's conversion + encoding, no server; targets: time <= 1.10,"
                            + " allocation per write <= 1.05%n");
            out.printf(
                    "%-30s %10s %10s %7s %10s %10s %7s %s%n",
                    "writes, filters",
                    "driver ms",
                    "guard ms",
                    "ratio",
                    "driver B/w",
                    "guard B/w",
                    "ratio",
                    "target (time / alloc)");
            for (Row r : plan) {
                out.printf(
                        "%-30s %10.3f %10.3f %7.3f %10.0f %10.0f %7.3f %s / %s%n",
                        r.label(),
                        r.driver(),
                        r.guard(),
                        r.ratio(),
                        r.driverAlloc() / settings.planWrites(),
                        r.guardAlloc() / settings.planWrites(),
                        r.allocRatio(),
                        met(r.ratio() <= 1.10),
                        met(r.allocRatio() <= 1.05));
            }
        }
        out.printf(
                "%n3. throughput of threads sharing one client (and one guard): bulks of 100 unordered upserts per"
                        + " second; target: guard / driver >= %.2f at %s threads%n   CPU ms/bulk: the process's CPU time"
                        + " (client, emulator, GC) per bulk; the throughput is bound by it once the threads outnumber the"
                        + " cores%n",
                THROUGHPUT_TARGET,
                THROUGHPUT_TARGETED.stream().map(String::valueOf).collect(Collectors.joining(" and ")));
        out.printf(
                "%-30s %10s %10s %7s %10s %10s %7s %s%n",
                "threads", "driver/s", "guard/s", "ratio", "driver CPU", "guard CPU", "ratio", "target");
        for (Row r : threads) {
            out.printf(
                    "%-30s %10.1f %10.1f %7.3f %10.3f %10.3f %7.3f %s%n",
                    r.label(),
                    r.driver(),
                    r.guard(),
                    r.ratio(),
                    r.driverCpu(),
                    r.guardCpu(),
                    r.cpuRatio(),
                    THROUGHPUT_TARGETED.contains(r.writes()) ? met(r.ratio() >= THROUGHPUT_TARGET) : "-");
        }
        out.flush();
    }
}
