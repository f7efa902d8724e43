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
 * The performance targets in one table, guard and driver side by side in one JVM, measured in paired runs (one run of
 * each path back to back, the order alternating) and judged on the median of the pairs' ratios and its confidence
 * interval ({@link PairedRatio}), so that load from other processes on a shared machine hits both runs of a pair
 * alike and a verdict says when one run cannot tell ({@link #METHOD}):
 * <ol>
 *   <li>{@code bulkWrite} on the cost-free server ({@code Storage.NONE}): median time per bulk and the client's
 *       allocation per write (bytes the calling thread allocated: the sync driver encodes and decodes on it, the
 *       emulator runs on its own threads, so the emulator's share is not in it);</li>
 *   <li>planning plus encoding ({@link PlanBenchmark#planAndEncode}) against the driver's conversion plus encoding
 *       ({@link PlanBenchmark#driverConvertAndEncode}), no server;</li>
 *   <li>throughput of threads sharing one client (and one guard), paired rounds of a fixed time.</li>
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
            double seconds,
            int planWrites,
            int runMillis,
            int runCalls,
            int runMaxMillis,
            boolean driverVsDriver) {
        /**
         * The warm-up runs of a case whose runs write {@code writes} each: at least {@link #warmups}, and enough that
         * each path has written at least {@link #warmupWrites} before its first measured run, so that a case of small
         * bulks is measured in compiled code as a case of large ones is (as JMH warms up for a time, not a number of
         * calls). The same number for both paths.
         */
        int warmupsFor(int writes) {
            return Math.max(warmups, PerfWarmUp.callsToWrite(warmupWrites, writes));
        }
    }

    /**
     * One row: each path's median time per call (ms, or operations per second) and median allocation per call, driver
     * then guard; the medians of the calling thread's CPU time per call (ms; for throughput: the process's CPU ms per
     * bulk) and of the JVM's GC time per call (ms; NaN where not measured). {@code writes} is the row's bulk size (0
     * for other rows). {@code paired} is the guard / driver time ratio of the paired runs, with its interval;
     * {@code pairedCpu} their ratio of CPU time (bulkWrite and planning rows: of the JVM's Java threads, that is the
     * client and the emulator without GC, see {@link JavaThreadsCpu}; throughput rows: of the process, GC included):
     * the work, without the waits for a core that make the time noisy on a loaded machine; {@code callsPerRun} how
     * many calls each run made (0 for throughput rounds); {@code jitMillis} the JIT's compilation time during the
     * row's measured pairs, ms (close to 0 when the case was measured in compiled code; NaN where not measured).
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
            double guardGc,
            PairedRatio paired,
            PairedRatio pairedCpu,
            int callsPerRun,
            double jitMillis) {

        /** A row of one pair (or of medians compared as one pair): its ratio is {@code guard / driver}, no interval. */
        Row(
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
            this(
                    label,
                    writes,
                    driver,
                    guard,
                    driverAlloc,
                    guardAlloc,
                    driverCpu,
                    guardCpu,
                    driverGc,
                    guardGc,
                    PairedRatio.ofRatios(new double[] {guard / driver}),
                    PairedRatio.ofRatios(new double[] {guardCpu / driverCpu}),
                    1,
                    Double.NaN);
        }

        /** The median of the pairs' ratios guard / driver (time, or throughput). */
        double ratio() {
            return paired.median();
        }

        double allocRatio() {
            return guardAlloc / driverAlloc;
        }

        double cpuRatio() {
            return guardCpu / driverCpu;
        }

        /** This row with its bulk size. */
        Row withWrites(int n) {
            return new Row(
                    label,
                    n,
                    driver,
                    guard,
                    driverAlloc,
                    guardAlloc,
                    driverCpu,
                    guardCpu,
                    driverGc,
                    guardGc,
                    paired,
                    pairedCpu,
                    callsPerRun,
                    jitMillis);
        }
    }

    /** The bulkWrite target: guard / driver time at most this, at every bulk size, ordered and unordered. */
    static final double BULK_TIME_TARGET = 1.03;
    /** The planning and encoding targets: guard / driver time and allocation at most these. */
    static final double PLAN_TIME_TARGET = 1.10;

    static final double PLAN_ALLOCATION_TARGET = 1.05;
    /** The throughput target: guard / driver at least this at the thread counts of {@link #THROUGHPUT_TARGETED}. */
    static final double THROUGHPUT_TARGET = 0.97;

    static final List<Integer> THROUGHPUT_TARGETED = List.of(8, 64);

    /** How every ratio is measured and judged: printed above the tables and in the JSON. */
    static final String METHOD = "Method: each case is measured in pairs of runs, one run of the driver and one of the"
            + " guard with the same calls, cut into blocks of about 1 ms that alternate driver, guard, guard, driver,"
            + " ... (the first path alternating from pair to pair), so that load from other processes falls on both"
            + " alike. A run lasts at least --run-ms and holds at least --run-calls calls when these take at most"
            + " --run-max-ms (one call at least). Before the first case is measured, a warm-up pass runs every case on"
            + " both paths (at least --warmup-writes writes each, one call at least), so that every case is measured in"
            + " compiled code whatever its place in the order; each case then warms up again right before its pairs. After"
            + " the pass and each case's warm-up, perf waits until the JIT is idle."
            + " Before each pair, outside the time, the emulators forget their"
            + " command records and a full GC runs; within a pair a young GC falls in whichever block fills the young"
            + " generation. ratio: the median of the pairs' guard / driver time ratios (throughput: of paired rounds,"
            + " the order alternating); 95% interval: a distribution-free confidence interval of that median (order"
            + " statistics of the pairs' ratios; with fewer than 6 pairs their range, less sure). Verdict: met when the"
            + " whole interval is on the target's side, NOT met when the whole interval misses it, too close to call"
            + " when the target lies in the interval (this run cannot tell: more --runs or a quieter machine). CPU: the"
            + " same pairs' ratio of CPU time, with its interval. ms, B/w: each path's median per call over the pairs;"
            + " the allocation ratio is of those medians.";

    /** The warm-up pass, as the JSON states it. */
    static final String WARM_UP_PASS = "before the first case is measured, every case (bulkWrite and planning) on both"
            + " paths, interleaved call by call, until each path has written --warmup-writes writes in it (one call"
            + " at least)";

    private Perf() {}

    /** What one {@code perf} run measured: the tables. */
    record Result(Settings settings, List<Row> writes, List<Row> plan, List<Row> threads) {
        void print(PrintStream out) {
            Perf.print(settings, writes, plan, threads, out);
            PerfSeries.print(writes, out);
            out.println();
            out.println(
                    "not in this table: java -jar benchmarks/target/lab.jar soak [--cost-free] | payloads | latency");
            out.flush();
        }

        /**
         * The tables as JSON: each row's medians, its ratio (the median of the pairs' ratios) with its interval, the
         * verdict, and whether its target is met (true, false; null when the interval contains the target, or the row
         * has no target).
         */
        Map<String, Object> toJson() {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("warmups", settings.warmups());
            json.put("warmupWrites", settings.warmupWrites());
            json.put("runs", settings.runs());
            json.put("runMillis", settings.runMillis());
            json.put("method", METHOD);
            json.put("runCalls", settings.runCalls());
            json.put("runMaxMillis", settings.runMaxMillis());
            json.put("warmUpPass", WARM_UP_PASS);
            json.put("driverVsDriver", settings.driverVsDriver());
            List<Object> bulk = new ArrayList<>();
            for (Row r : writes) {
                Map<String, Object> row = row(r, "Millis", r.writes());
                row.put("writes", r.writes());
                row.put("driverCpuMillis", r.driverCpu());
                row.put("guardCpuMillis", r.guardCpu());
                row.put("driverGcMillis", r.driverGc());
                row.put("guardGcMillis", r.guardGc());
                PairedRatio.Verdict verdict = r.paired().atMost(BULK_TIME_TARGET);
                row.put("timeVerdict", verdict.text());
                row.put("timeTargetMet", verdict.asBoolean());
                bulk.add(row);
            }
            json.put("bulkWrite", bulk);
            json.put("series", PerfSeries.toJson(writes));
            List<Object> planning = new ArrayList<>();
            for (Row r : plan) {
                Map<String, Object> row = row(r, "Millis", settings.planWrites());
                PairedRatio.Verdict verdict = r.paired().atMost(PLAN_TIME_TARGET);
                row.put("timeVerdict", verdict.text());
                row.put("timeTargetMet", verdict.asBoolean());
                row.put("allocationTargetMet", r.allocRatio() <= PLAN_ALLOCATION_TARGET);
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
                ratio(r, row);
                row.put("driverCpuMillisPerBulk", r.driverCpu());
                row.put("guardCpuMillisPerBulk", r.guardCpu());
                cpuRatio(r, row);
                PairedRatio.Verdict verdict = r.paired().atLeast(THROUGHPUT_TARGET);
                boolean targeted = THROUGHPUT_TARGETED.contains(r.writes());
                row.put("verdict", targeted ? verdict.text() : null);
                row.put("targetMet", targeted ? verdict.asBoolean() : null);
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
            ratio(r, row);
            row.put("callsPerRun", r.callsPerRun());
            row.put("jitMillis", r.jitMillis());
            row.put("driverBytesPerWrite", r.driverAlloc() / writes);
            row.put("guardBytesPerWrite", r.guardAlloc() / writes);
            row.put("allocationRatio", r.allocRatio());
            cpuRatio(r, row);
            return row;
        }

        /** The paired ratio of CPU time: its median and interval. */
        private static void cpuRatio(Row r, Map<String, Object> row) {
            row.put("cpuRatio", r.pairedCpu().median());
            row.put("cpuRatioLow", r.pairedCpu().low());
            row.put("cpuRatioHigh", r.pairedCpu().high());
        }

        /** The paired ratio: its median, its interval and the interval's coverage, and the number of pairs. */
        private static void ratio(Row r, Map<String, Object> row) {
            row.put("ratio", r.ratio());
            row.put("ratioLow", r.paired().low());
            row.put("ratioHigh", r.paired().high());
            row.put("intervalConfidence", r.paired().confidence());
            row.put("pairs", r.paired().pairs());
        }
    }

    static Result run(Settings settings, PrintStream log) {
        try (CostFreeClients driver = CostFreeClients.start("driver");
                CostFreeClients guard = CostFreeClients.start(settings.driverVsDriver() ? "driver" : "guard")) {
            Runnable beforePair = () -> cleanSlate(driver, guard);
            List<PerfWarmUp.Case> bulkCases = new ArrayList<>();
            for (int docs : settings.sizes()) {
                for (String kind : List.of("replace-upsert", "insert")) {
                    List<WriteModel<Document>> models = CostFreeBenchmark.models(kind, docs);
                    for (boolean ordered : List.of(true, false)) {
                        BulkWriteOptions options = new BulkWriteOptions().ordered(ordered);
                        bulkCases.add(new PerfWarmUp.Case(
                                docs + " " + kind + (ordered ? " ordered" : " unordered"),
                                docs,
                                () -> driver.bulkWrite(models, options),
                                () -> guard.bulkWrite(models, options),
                                beforePair));
                    }
                }
            }
            List<PerfWarmUp.Case> planCases = new ArrayList<>();
            if (settings.planWrites() > 0) {
                for (String filters : List.of("Filters.eq", "Document")) {
                    PlanBenchmark benchmark = new PlanBenchmark();
                    benchmark.writes = settings.planWrites();
                    benchmark.filters = filters;
                    benchmark.prepare();
                    planCases.add(new PerfWarmUp.Case(
                            settings.planWrites() + " " + filters,
                            settings.planWrites(),
                            benchmark::driverConvertAndEncode,
                            settings.driverVsDriver() ? benchmark::driverConvertAndEncode : benchmark::planAndEncode,
                            System::gc));
                }
            }
            List<List<Row>> measured = warmUpAndMeasure(List.of(bulkCases, planCases), settings, log);
            List<Row> writes = measured.get(0);
            List<Row> plan = measured.get(1);
            List<Row> threads = new ArrayList<>();
            List<WriteModel<Document>> models = CostFreeBenchmark.models("replace-upsert", 100);
            BulkWriteOptions unordered = new BulkWriteOptions().ordered(false);
            for (int t : settings.threads()) {
                log.println("perf: " + t + " threads");
                threads.add(throughputPairs(driver, guard, models, unordered, t, settings, beforePair));
            }
            return new Result(settings, writes, plan, threads);
        }
    }

    /**
     * The warm-up pass over the cases of every group ({@link PerfWarmUp}), then each case measured in paired runs
     * ({@link #pairs}), in order, each after its own warm-up.
     *
     * @return the rows of each group, in the groups' order
     */
    static List<List<Row>> warmUpAndMeasure(List<List<PerfWarmUp.Case>> groups, Settings settings, PrintStream log) {
        List<PerfWarmUp.Case> all = groups.stream().flatMap(List::stream).toList();
        if (settings.warmupWrites() > 0) {
            log.println("perf: warm-up pass over the " + all.size() + " cases");
        }
        PerfWarmUp.run(
                all,
                settings.warmupWrites(),
                (c, calls) -> pairs(c.label(), c.driver(), c.guard(), calls, 1, false, settings, c.beforePair()));
        List<List<Row>> measured = new ArrayList<>();
        for (List<PerfWarmUp.Case> cases : groups) {
            measured.add(measure(cases, settings, log));
        }
        return measured;
    }

    /** Each case measured in paired runs ({@link #pairs}), in order, after its own warm-up. */
    private static List<Row> measure(List<PerfWarmUp.Case> cases, Settings settings, PrintStream log) {
        List<Row> rows = new ArrayList<>();
        for (PerfWarmUp.Case c : cases) {
            log.println("perf: " + c.label());
            rows.add(pairs(c.label(), c.driver(), c.guard(), settings.warmupsFor(c.writes()), settings, c.beforePair())
                    .withWrites(c.writes()));
        }
        return rows;
    }

    /**
     * Before each pair of runs (and each throughput round): the emulators' records of the commands they received
     * forgotten (they would pile up over a case, a larger heap for the later pairs), and a full collection, so that
     * each pair starts from the same heap and no pair collects garbage left by the ones before it. Within a pair a
     * young collection falls in whichever block fills the young generation, so on average each path pays for the
     * garbage it makes.
     */
    private static void cleanSlate(CostFreeClients driver, CostFreeClients guard) {
        driver.cluster().truth().reset();
        guard.cluster().truth().reset();
        System.gc();
    }

    /**
     * One case measured in paired runs. Warm-up calls of both, interleaved; then {@code settings.runs()} pairs, with
     * {@code beforePair} before each, outside the time. A pair is one run of each path, a run {@link Blocks#blocks}
     * blocks of {@link Blocks#calls} calls, the two paths' blocks interleaved in the order driver, guard, guard,
     * driver, driver, guard, ... (the first path alternating from pair to pair): load from other processes, which
     * changes within milliseconds on a shared machine, falls on both runs of a pair alike, and neither path always
     * runs right after the other's garbage or cache misses. The row holds each path's medians per call over the pairs
     * (time, allocation and CPU time of the calling thread, the JVM's GC time) and the ratio of the pairs' times
     * ({@link PairedRatio}).
     */
    static Row pairs(
            String label, Supplier<?> driver, Supplier<?> guard, int warmups, Settings settings, Runnable beforePair) {
        return pairs(label, driver, guard, warmups, settings.runs(), true, settings, beforePair);
    }

    /**
     * {@link #pairs} with {@code runs} pairs, waiting for a quiet JIT after the warm-up calls when {@code settle} (not
     * in the warm-up pass, which waits once after all cases).
     */
    private static Row pairs(
            String label,
            Supplier<?> driver,
            Supplier<?> guard,
            int warmups,
            int runs,
            boolean settle,
            Settings settings,
            Runnable beforePair) {
        double[] driverWarmup = new double[warmups];
        for (int i = 0; i < warmups; i++) {
            long start = System.nanoTime();
            PerfWarmUp.calls(driver, 1);
            driverWarmup[i] = (System.nanoTime() - start) / 1e6;
            PerfWarmUp.calls(guard, 1);
        }
        if (settle && warmups > 0) {
            PerfWarmUp.awaitQuietJit();
        }
        Blocks blocks =
                Blocks.of(driverWarmup, driver, settings.runMillis(), settings.runCalls(), settings.runMaxMillis());
        double[][] millis = new double[2][runs];
        double[][] allocated = new double[2][runs];
        double[][] cpu = new double[2][runs];
        double[][] gc = new double[2][runs];
        double[][] threadsCpu = new double[2][runs];
        com.sun.management.ThreadMXBean thread = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long jitBefore = PerfWarmUp.jitMillis();
        for (int run = 0; run < runs; run++) {
            beforePair.run();
            JavaThreadsCpu javaThreads = JavaThreadsCpu.now();
            for (int block = 0; block < blocks.blocks(); block++) {
                for (int at : (run + block) % 2 == 0 ? new int[] {0, 1} : new int[] {1, 0}) {
                    Supplier<?> path = at == 0 ? driver : guard;
                    long gcBefore = gcMillis();
                    long bytes = thread.getCurrentThreadAllocatedBytes();
                    long cpuBefore = thread.getCurrentThreadCpuTime();
                    long[] threadsBefore = javaThreads.read();
                    long start = System.nanoTime();
                    PerfWarmUp.calls(path, blocks.calls());
                    millis[at][run] += (System.nanoTime() - start) / 1e6;
                    threadsCpu[at][run] += javaThreads.since(threadsBefore) / 1e6;
                    cpu[at][run] += (thread.getCurrentThreadCpuTime() - cpuBefore) / 1e6;
                    allocated[at][run] += thread.getCurrentThreadAllocatedBytes() - bytes;
                    gc[at][run] += gcMillis() - gcBefore;
                }
            }
            int calls = blocks.callsPerRun();
            for (double[][] measure : List.of(millis, allocated, cpu, gc, threadsCpu)) {
                measure[0][run] /= calls;
                measure[1][run] /= calls;
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
                median(gc[1]),
                PairedRatio.of(millis[1], millis[0]),
                PairedRatio.of(threadsCpu[1], threadsCpu[0]),
                blocks.callsPerRun(),
                jitBefore < 0 ? Double.NaN : PerfWarmUp.jitMillis() - jitBefore);
    }

    /**
     * How a run is cut: {@code blocks} blocks of {@code calls} calls each, the same for both paths.
     *
     * @param blocks the blocks of one path in a pair
     * @param calls  the calls of one block
     */
    record Blocks(int blocks, int calls) {
        /** A block's length: long enough that reading the clocks around it costs nothing next to it. */
        static final double BLOCK_MILLIS = 1.0;

        /**
         * Blocks of about {@link #BLOCK_MILLIS} (at least one call) that make a run of {@link #runMillis} (at least one
         * block), the time of a call judged by the lower quartile of the driver's last (up to 100) warm-up calls, or by
         * one call when there was no warm-up: a burst of load during the last warm-up calls would otherwise make the
         * runs of the whole case a few calls long (a slow estimate only makes the runs longer).
         */
        static Blocks of(double[] driverWarmupMillis, Supplier<?> driver, int runMillis, int runCalls, int maxMillis) {
            double[] last = Arrays.copyOfRange(
                    driverWarmupMillis, Math.max(0, driverWarmupMillis.length - 100), driverWarmupMillis.length);
            double perCall;
            if (last.length > 0) {
                Arrays.sort(last);
                perCall = last[(last.length - 1) / 4];
            } else {
                long start = System.nanoTime();
                driver.get();
                perCall = (System.nanoTime() - start) / 1e6;
            }
            perCall = Math.max(perCall, 1e-6);
            int calls = (int) Math.max(1, Math.min(100_000, Math.ceil(BLOCK_MILLIS / perCall)));
            double run = runMillis(perCall, runMillis, runCalls, maxMillis);
            int blocks = (int) Math.max(1, Math.min(100_000, Math.round(run / (calls * perCall))));
            return new Blocks(blocks, calls);
        }

        /**
         * A run's length, ms, for calls of {@code perCall} ms: at least {@code runMillis} ({@code --run-ms}), and
         * long enough for {@code runCalls} calls ({@code --run-calls}) as long as that is at most {@code maxMillis}
         * ({@code --run-max-ms}). With runs of a fixed 40 ms a bulk of 10,000 writes (50 to 180 ms a call) was one
         * call per run, and a young collection, falling in one path's call, decided the pair (intervals 0.3 to 1.0
         * wide); several calls per run spread the collections over both paths. Small bulks are not changed (40 ms
         * already holds 8 calls of up to 5 ms), and the bound keeps the largest bulks at one call per run.
         */
        static double runMillis(double perCall, int runMillis, int runCalls, int maxMillis) {
            return Math.max(runMillis, Math.min(runCalls * perCall, maxMillis));
        }

        /** {@return the calls of one path in one pair} */
        int callsPerRun() {
            return blocks * calls;
        }
    }

    /**
     * The throughput of {@code threads} threads in paired rounds: a warm-up round of each path, then
     * {@code settings.rounds()} pairs of rounds of {@code settings.seconds()} each, the order alternating, with
     * {@code beforeRound} before each round. The row's figures are each path's median bulks per second and CPU ms per
     * bulk, its ratio the pairs' ({@link PairedRatio}).
     */
    private static Row throughputPairs(
            CostFreeClients driver,
            CostFreeClients guard,
            List<WriteModel<Document>> models,
            BulkWriteOptions options,
            int threads,
            Settings settings,
            Runnable beforeRound) {
        int rounds = settings.rounds();
        double[][] perSecond = new double[2][rounds];
        double[][] cpuPerBulk = new double[2][rounds];
        beforeRound.run();
        throughput(driver, models, options, threads, settings.seconds());
        beforeRound.run();
        throughput(guard, models, options, threads, settings.seconds());
        for (int round = 0; round < rounds; round++) {
            for (int at : round % 2 == 0 ? new int[] {0, 1} : new int[] {1, 0}) {
                beforeRound.run();
                double[] measured = throughput(at == 0 ? driver : guard, models, options, threads, settings.seconds());
                perSecond[at][round] = measured[0];
                cpuPerBulk[at][round] = measured[1];
            }
        }
        return new Row(
                threads + " threads",
                threads,
                median(perSecond[0]),
                median(perSecond[1]),
                Double.NaN,
                Double.NaN,
                median(cpuPerBulk[0]),
                median(cpuPerBulk[1]),
                Double.NaN,
                Double.NaN,
                PairedRatio.of(perSecond[1], perSecond[0]),
                PairedRatio.of(cpuPerBulk[1], cpuPerBulk[0]),
                0,
                Double.NaN);
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
            double seconds) {
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
        window[0] = began + (long) (seconds * 1e9);
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
                "%nperf: the performance targets; guard and driver in one JVM on their own emulators (warm-up: a pass"
                        + " over every case first, then at least %d runs and %,d writes per path and case; %d pairs of"
                        + " runs per case, a run at least %d ms and %d calls within %d ms; throughput: %d pairs of"
                        + " rounds of %.1f s each, after a warm-up round each).%n",
                settings.warmups(),
                settings.warmupWrites(),
                settings.runs(),
                settings.runMillis(),
                settings.runCalls(),
                settings.runMaxMillis(),
                settings.rounds(),
                settings.seconds());
        if (settings.driverVsDriver()) {
            out.println(
                    "   A/A check (--driver-vs-driver): the guard's columns measure a second driver client on its own"
                            + " emulator; every interval should contain 1.");
        }
        out.println(wrap(METHOD, "   "));
        out.printf(
                "%n1. bulkWrite on the cost-free server (Storage.NONE); target: time guard / driver <= %.2f at every bulk"
                        + " size, ordered and unordered%n   ms: median time per call; B/write: what the calling thread"
                        + " allocated per write (the client's share; the emulator runs on its own threads); calls: each"
                        + " path's calls per pair; CPU: the pairs' ratio of the Java threads' CPU time (client and"
                        + " emulator, no GC), which waiting for a core on a loaded machine does not move%n",
                BULK_TIME_TARGET);
        pairedHeader(out, "writes", "verdict (time)");
        for (Row r : writes) {
            out.printf(
                    "%-30s %10.3f %10.3f %7.3f %13s %6d %10.0f %10.0f %7.3f %7.3f %13s %s%n",
                    r.label(),
                    r.driver(),
                    r.guard(),
                    r.ratio(),
                    r.paired().interval(),
                    r.callsPerRun(),
                    r.driverAlloc() / r.writes(),
                    r.guardAlloc() / r.writes(),
                    r.allocRatio(),
                    r.pairedCpu().median(),
                    r.pairedCpu().interval(),
                    r.paired().atMost(BULK_TIME_TARGET).text());
        }
        if (!plan.isEmpty()) {
            out.printf(
                    "%n2. planning + encoding vs the driver's conversion + encoding, no server; targets: time <= %.2f,"
                            + " allocation per write <= %.2f%n",
                    PLAN_TIME_TARGET, PLAN_ALLOCATION_TARGET);
            pairedHeader(out, "writes, filters", "verdict (time / alloc)");
            for (Row r : plan) {
                out.printf(
                        "%-30s %10.3f %10.3f %7.3f %13s %6d %10.0f %10.0f %7.3f %7.3f %13s %s / %s%n",
                        r.label(),
                        r.driver(),
                        r.guard(),
                        r.ratio(),
                        r.paired().interval(),
                        r.callsPerRun(),
                        r.driverAlloc() / settings.planWrites(),
                        r.guardAlloc() / settings.planWrites(),
                        r.allocRatio(),
                        r.pairedCpu().median(),
                        r.pairedCpu().interval(),
                        r.paired().atMost(PLAN_TIME_TARGET).text(),
                        met(r.allocRatio() <= PLAN_ALLOCATION_TARGET));
            }
        }
        out.printf(
                "%n3. throughput of threads sharing one client (and one guard): bulks of 100 unordered upserts per"
                        + " second; target: guard / driver >= %.2f at %s threads%n   CPU ms/bulk: the process's CPU time"
                        + " (client, emulator, GC) per bulk, medians, and the pairs' ratio with its interval; the"
                        + " throughput is bound by it once the threads outnumber the cores%n",
                THROUGHPUT_TARGET,
                THROUGHPUT_TARGETED.stream().map(String::valueOf).collect(Collectors.joining(" and ")));
        out.printf(
                "%-30s %10s %10s %7s %13s %10s %10s %7s %13s %s%n",
                "threads",
                "driver/s",
                "guard/s",
                "ratio",
                "95% interval",
                "driver CPU",
                "guard CPU",
                "ratio",
                "95% interval",
                "verdict");
        for (Row r : threads) {
            out.printf(
                    "%-30s %10.1f %10.1f %7.3f %13s %10.3f %10.3f %7.3f %13s %s%n",
                    r.label(),
                    r.driver(),
                    r.guard(),
                    r.ratio(),
                    r.paired().interval(),
                    r.driverCpu(),
                    r.guardCpu(),
                    r.pairedCpu().median(),
                    r.pairedCpu().interval(),
                    THROUGHPUT_TARGETED.contains(r.writes())
                            ? r.paired().atLeast(THROUGHPUT_TARGET).text()
                            : "-");
        }
        out.flush();
    }

    /** {@code text} in lines of at most 116 characters, each after {@code indent}. */
    static String wrap(String text, String indent) {
        StringBuilder lines = new StringBuilder();
        StringBuilder line = new StringBuilder(indent);
        for (String word : text.split(" ")) {
            if (line.length() > indent.length() && line.length() + 1 + word.length() > 116) {
                lines.append(line).append(System.lineSeparator());
                line = new StringBuilder(indent);
            }
            if (line.length() > indent.length()) {
                line.append(' ');
            }
            line.append(word);
        }
        return lines.append(line).toString();
    }

    /** The header of a table of paired rows: the first column's name, then the same columns, then the verdict's. */
    private static void pairedHeader(PrintStream out, String first, String verdict) {
        out.printf(
                "%-30s %10s %10s %7s %13s %6s %10s %10s %7s %7s %13s %s%n",
                first,
                "driver ms",
                "guard ms",
                "ratio",
                "95% interval",
                "calls",
                "driver B/w",
                "guard B/w",
                "ratio",
                "CPU",
                "95% interval",
                verdict);
    }
}
