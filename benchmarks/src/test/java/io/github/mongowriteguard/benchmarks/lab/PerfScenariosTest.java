package io.github.mongowriteguard.benchmarks.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.github.mongowriteguard.benchmarks.jmh.PlanBenchmark;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** Issue 18's scenarios run at a tiny size (no figure is asserted: speed is measured by the lab, not by tests). */
class PerfScenariosTest {

    @Test
    void soak_printsALinePerStep_andTheGuardKeepsNoCopyAfterItsCalls() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        List<Soak.Line> lines = Soak.run(3_000, 500, 1_000, new PrintStream(out, true, StandardCharsets.UTF_8));

        assertThat(lines).extracting(Soak.Line::writes).containsExactly(0L, 1_000L, 2_000L, 3_000L);
        assertThat(lines).allSatisfy(line -> {
            assertThat(line.ledgerTracked()).isZero(); // -1 would mean the ledger's map could not be read
            assertThat(line.possiblyRunning()).isZero();
            assertThat(line.heapAfterGc()).isPositive();
        });
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("heap after GC", "3,000");
    }

    @Test
    void payloads_countCommandsAndBytes_bothClientsCutAt16MiB() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        List<Payloads.Case> cases = Payloads.run(List.of(new int[] {20, 1 << 20}), 1, System.err);
        Payloads.print(cases, 1, new PrintStream(out, true, StandardCharsets.UTF_8));

        Payloads.Case c = cases.get(0);
        // Driver 5.6.5 cuts an OP_MSG document sequence past maxBsonObjectSize (CommandMessage.writeOpMsg), not at
        // 48 MB; the guard's command is one BSON document, at most 16 MiB.
        assertThat(c.driver().commands()).isEqualTo(2);
        assertThat(c.guard().commands()).isEqualTo(2);
        assertThat(c.driver().bytes()).isGreaterThan(20L << 20);
        assertThat(c.guard().bytes()).isGreaterThan(20L << 20);
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("20 x 1 MiB", "guard / driver");
    }

    @Test
    void perf_printsEveryTargetRow() {
        LabCommandLineTest.Run run = LabCommandLineTest.execute(
                "perf",
                "--sizes",
                "10,1000,2000",
                "--threads",
                "2,8",
                "--warmups",
                "1",
                "--warmup-writes",
                "0",
                "--runs",
                "1",
                "--rounds",
                "1",
                "--seconds",
                "0.2",
                "--plan-writes",
                "1000");

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out())
                .contains(
                        "10 replace-upsert ordered",
                        "10 replace-upsert unordered",
                        "10 insert ordered",
                        "10 insert unordered",
                        "1000 Filters.eq",
                        "1000 Document",
                        "2 threads",
                        "8 threads",
                        "target: time guard / driver <= 1.03 at every bulk size",
                        "guard / driver >= 0.97 at 8 and 64 threads",
                        "4. the series",
                        "Method: each case is measured in pairs of runs",
                        "95% interval");
        assertThat(run.out()).doesNotContain("NaN");
        // every bulkWrite row, the smallest included, carries its ratio's interval and its verdict
        assertThat(run.out().lines().filter(line -> line.startsWith("10 ")))
                .hasSize(4)
                .allSatisfy(line -> assertThat(line)
                        .containsPattern(" \\d+\\.\\d{3}-\\d+\\.\\d{3} ")
                        .containsPattern("(met|NOT met|too close to call)$"));
        // the series: the sizes from 1,000 up, per case, and the growth line with its verdict
        assertThat(run.out().lines().filter(line -> line.startsWith("replace-upsert ordered")))
                .hasSize(3)
                .anySatisfy(line -> assertThat(line).containsPattern("growth .*(flat|NOT flat)$"));
        assertThat(run.out().lines().filter(line -> line.startsWith("8 threads")))
                .singleElement()
                .satisfies(line -> assertThat(line).containsPattern("(met|NOT met|too close to call)$"));
    }

    @Test
    void perfSeries_growthFromTheFirstSizeOfAThousand_judgedOnTheGuardsCpuTime() {
        List<Perf.Row> rows = List.of(
                row("100 insert ordered", 100, 1, 1, 1, 1),
                row("1000 insert ordered", 1_000, 10, 10, 5, 5),
                row("10000 insert ordered", 10_000, 200, 300, 60, 50),
                row("100000 insert ordered", 100_000, 4_000, 5_000, 700, 800),
                row("1000 insert unordered", 1_000, 10, 10, 5, 5),
                row("10000 insert unordered", 10_000, 100, 100, 50, 70));

        List<PerfSeries.Series> series = PerfSeries.of(rows);

        assertThat(series).extracting(PerfSeries.Series::name).containsExactly("insert ordered", "insert unordered");
        PerfSeries.Series ordered = series.get(0);
        assertThat(ordered.points()).extracting(Perf.Row::writes).containsExactly(1_000, 10_000, 100_000);
        // per write: driver 10 us -> 40 us, guard 10 -> 50; CPU: driver 5 -> 7, guard 5 -> 8
        assertThat(ordered.driverGrowth()).isCloseTo(4.0, within(1e-9));
        assertThat(ordered.guardGrowth()).isCloseTo(5.0, within(1e-9));
        assertThat(ordered.driverCpuGrowth()).isCloseTo(1.4, within(1e-9));
        assertThat(ordered.guardCpuGrowth()).isCloseTo(1.6, within(1e-9));
        assertThat(ordered.flat()).isFalse(); // 1.6 > 1.10 and > 1.4 x 1.10
        assertThat(series.get(1).guardCpuGrowth()).isCloseTo(1.4, within(1e-9));
        assertThat(series.get(1).flat()).isFalse();
        assertThat(flatFromFiveMicros(70, 52))
                .as("guard CPU per write 1.04x: flat")
                .isTrue();
        assertThat(flatFromFiveMicros(100, 105))
                .as("guard CPU per write 2.1x where the driver's grew 2x: grows as the driver's does")
                .isTrue();
        assertThat(PerfSeries.of(List.of(row("1000 insert ordered", 1_000, 10, 10, 5, 5))))
                .as("one size is no series")
                .isEmpty();
    }

    /** Whether a series from 5 us of CPU per write at 1,000 writes to these CPU ms at 10,000 is flat. */
    private static boolean flatFromFiveMicros(double driverCpuMillis, double guardCpuMillis) {
        return PerfSeries.of(List.of(
                        row("1000 insert ordered", 1_000, 10, 10, 5, 5),
                        row("10000 insert ordered", 10_000, 100, 100, driverCpuMillis, guardCpuMillis)))
                .get(0)
                .flat();
    }

    private static Perf.Row row(
            String label, int writes, double driverMs, double guardMs, double driverCpu, double guardCpu) {
        return new Perf.Row(label, writes, driverMs, guardMs, writes, writes, driverCpu, guardCpu, 0, 0);
    }

    @Test
    void perf_withJsonAndNoProgress_printsOneJsonObjectAndNothingElse() throws Exception {
        LabCommandLineTest.Run run = LabCommandLineTest.execute(
                "perf",
                "--sizes",
                "10,1000",
                "--threads",
                "8",
                "--warmups",
                "0",
                "--warmup-writes",
                "0",
                "--runs",
                "2",
                "--run-ms",
                "1",
                "--rounds",
                "1",
                "--seconds",
                "0.2",
                "--plan-writes",
                "100",
                "--json",
                "--progress",
                "none");

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.err()).isEmpty();
        tools.jackson.databind.JsonNode json = LabJson.MAPPER.readTree(run.out());
        assertThat(json.propertyNames())
                .containsExactly(
                        "warmups",
                        "warmupWrites",
                        "runs",
                        "runMillis",
                        "method",
                        "runCalls",
                        "runMaxMillis",
                        "warmUpPass",
                        "driverVsDriver",
                        "bulkWrite",
                        "series",
                        "planAndEncode",
                        "throughput");
        assertThat(json.get("bulkWrite")).hasSize(8);
        assertThat(json.get("bulkWrite")).allSatisfy(row -> {
            assertThat(row.get("ratio").isNumber()).isTrue();
            assertThat(row.get("ratioLow").asDouble())
                    .isLessThanOrEqualTo(row.get("ratio").asDouble());
            assertThat(row.get("ratioHigh").asDouble())
                    .isGreaterThanOrEqualTo(row.get("ratio").asDouble());
            assertThat(row.get("pairs").asInt()).isEqualTo(2);
            assertThat(row.get("intervalConfidence").asDouble()).isEqualTo(0.5); // the range of 2 pairs: 1 - 2/4
            assertThat(row.get("callsPerRun").asInt()).isPositive();
            assertThat(row.get("jitMillis").isNumber()).isTrue();
            // every size has the target: met, NOT met, or too close to call (null), as the verdict says
            assertThat(row.get("timeVerdict").asString()).isIn("met", "NOT met", "too close to call");
            assertThat(row.get("timeTargetMet").isNull())
                    .isEqualTo(row.get("timeVerdict").asString().equals("too close to call"));
            assertThat(row.get("guardCpuMillis").isNumber()).isTrue();
            assertThat(row.get("cpuRatio").asDouble()).isPositive();
            assertThat(row.get("cpuRatioLow").asDouble())
                    .isLessThanOrEqualTo(row.get("cpuRatio").asDouble());
        });
        assertThat(json.get("series")).isEmpty(); // one size from 1,000 up: no series
        assertThat(json.get("runCalls").asInt()).isEqualTo(8);
        assertThat(json.get("runMaxMillis").asInt()).isEqualTo(500);
        assertThat(json.get("driverVsDriver").asBoolean()).isFalse();
        assertThat(json.get("throughput").get(0).get("verdict").asString()).isIn("met", "NOT met", "too close to call");
        assertThat(json.get("throughput").get(0).get("ratioLow").isNumber()).isTrue();
        assertThat(json.get("throughput").get(0).get("cpuRatio").isNumber()).isTrue();
        assertThat(json.get("planAndEncode").get(0).has("allocationTargetMet")).isTrue();
    }

    @Test
    void perf_driverVsDriver_saysSoInTheTablesAndTheJson() throws Exception {
        String[] args = ("perf --sizes 10 --threads 1 --warmup-writes 100 --runs 2 --run-ms 1 --rounds 1 --seconds 0.1"
                        + " --plan-writes 100 --driver-vs-driver --progress none")
                .split(" ");
        LabCommandLineTest.Run tables = LabCommandLineTest.execute(args);
        String[] withJson = java.util.Arrays.copyOf(args, args.length + 1);
        withJson[args.length] = "--json";
        LabCommandLineTest.Run json = LabCommandLineTest.execute(withJson);

        assertThat(tables.exitCode()).as(tables.err()).isZero();
        assertThat(tables.out()).contains("A/A check (--driver-vs-driver)", "10 insert unordered");
        assertThat(json.exitCode()).as(json.err()).isZero();
        assertThat(LabJson.MAPPER.readTree(json.out()).get("driverVsDriver").asBoolean())
                .isTrue();
    }

    @Test
    void perfWarmUps_coverTheWarmUpWritesForSmallBulks_andTheWarmUpRunsForLargeOnes() {
        Perf.Settings settings = settings(10, 10_000, 21, 20);

        assertThat(settings.warmupsFor(1)).isEqualTo(10_000);
        assertThat(settings.warmupsFor(3)).isEqualTo(3_334); // rounded up: at least 10,000 writes
        assertThat(settings.warmupsFor(1_000)).isEqualTo(10);
        assertThat(settings.warmupsFor(100_000)).isEqualTo(10);
        assertThat(settings(10, 0, 21, 20).warmupsFor(1))
                .as("--warmup-writes 0: the runs of --warmups only")
                .isEqualTo(10);
    }

    @Test
    void perfHelp_describesThePairedRunsAndTheInterval() {
        LabCommandLineTest.Run run = LabCommandLineTest.execute("perf", "--help");

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out().replaceAll("\\s+", " "))
                .contains(
                        "95% confidence interval",
                        "too close to call",
                        "--run-ms",
                        "--seconds",
                        "calls per run, at least, as long as they take at most --run-max-ms",
                        "first a pass over every case",
                        "until the JIT is idle: nothing queued and nothing finished for 0.5 s",
                        "A/A check")
                .doesNotContain("%%");
        assertThat(run.err()).doesNotContain("Could not format");
    }

    @Test
    void perfBlocks_ofAboutAMillisecond_makeARunOfTheRunsLength() {
        Supplier<Object> unused = () -> {
            throw new AssertionError("the warm-up's times are enough");
        };

        // 0.05 ms per call (the lower quartile: two slow calls at the end do not count): blocks of 20 calls, 20
        // blocks for 20 ms
        assertThat(Perf.Blocks.of(new double[] {0.05, 0.05, 0.05, 0.05, 0.05, 9, 9}, unused, 20, 1, 500))
                .isEqualTo(new Perf.Blocks(20, 20));
        // 12 ms per call: one call per block, 2 blocks for 20 ms (rounded), 1 for 5 ms (at least one)
        assertThat(Perf.Blocks.of(new double[] {12}, unused, 20, 1, 500)).isEqualTo(new Perf.Blocks(2, 1));
        assertThat(Perf.Blocks.of(new double[] {12}, unused, 5, 1, 500)).isEqualTo(new Perf.Blocks(1, 1));
        assertThat(Perf.Blocks.of(new double[] {12}, unused, 5, 1, 500).callsPerRun())
                .isEqualTo(1);
        // no warm-up: one call of the driver is timed
        int[] called = {0};
        assertThat(Perf.Blocks.of(new double[0], () -> called[0]++, 20, 1, 500).callsPerRun())
                .isPositive();
        assertThat(called[0]).isEqualTo(1);
    }

    @Test
    void perfRunLength_largeBulksGetSeveralCallsPerRun_withinTheBound_smallBulksAsBefore() {
        Supplier<Object> unused = () -> {
            throw new AssertionError("the warm-up's times are enough");
        };

        // 10,000 writes at 50 ms a call: 8 calls (400 ms), not the one call of a 40 ms run
        assertThat(Perf.Blocks.of(new double[] {50}, unused, 40, 8, 500)).isEqualTo(new Perf.Blocks(8, 1));
        // at 90 ms a call 8 calls would take 720 ms: the run stops at 500 ms, 6 calls (rounded)
        assertThat(Perf.Blocks.of(new double[] {90}, unused, 40, 8, 500).callsPerRun())
                .isEqualTo(6);
        // 100,000 writes at 1.5 s a call: one call per run, as before
        assertThat(Perf.Blocks.of(new double[] {1_500}, unused, 40, 8, 500).callsPerRun())
                .isEqualTo(1);
        // 1,000 writes at 5 ms: 40 ms already holds 8 calls; 1 write at 0.05 ms: blocks of 20 calls for 40 ms
        assertThat(Perf.Blocks.of(new double[] {5}, unused, 40, 8, 500)).isEqualTo(new Perf.Blocks(8, 1));
        assertThat(Perf.Blocks.of(new double[] {0.05}, unused, 40, 8, 500)).isEqualTo(new Perf.Blocks(40, 20));
        // a --run-ms longer than the bound is the run's length whatever --run-calls says
        assertThat(Perf.Blocks.of(new double[] {90}, unused, 2_000, 8, 500).callsPerRun())
                .isEqualTo(22);
        assertThat(Perf.Blocks.runMillis(90, 40, 8, 500)).isEqualTo(500);
        assertThat(Perf.Blocks.runMillis(50, 40, 8, 500)).isEqualTo(400);
        assertThat(Perf.Blocks.runMillis(0.05, 40, 8, 500)).isEqualTo(40);
    }

    @Test
    void perfWarmUpPass_everyCaseOnBothPathsBeforeTheFirstCaseIsMeasured() {
        List<String> events = new java.util.ArrayList<>();
        List<PerfWarmUp.Case> bulk = List.of(recording("1 w", 1, events), recording("10 w", 10, events));
        List<PerfWarmUp.Case> plan = List.of(recording("1000 w", 1_000, events));
        Perf.Settings settings = settings(2, 100, 2, 1);

        List<List<Perf.Row>> rows = Perf.warmUpAndMeasure(
                List.of(bulk, plan),
                settings,
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));

        assertThat(rows.get(0)).extracting(Perf.Row::label).containsExactly("1 w", "10 w");
        assertThat(rows.get(1)).extracting(Perf.Row::label).containsExactly("1000 w");
        // the pass: each case in order, driver and guard call by call, enough calls for 100 writes (100, 10, 1), then
        // one pair as the measurement makes it (its records forgotten first, then its blocks)
        assertThat(PerfWarmUp.passCalls(100, 1)).isEqualTo(100);
        assertThat(PerfWarmUp.passCalls(100, 10)).isEqualTo(10);
        assertThat(PerfWarmUp.passCalls(100, 1_000)).isEqualTo(1);
        int at = 0;
        for (PerfWarmUp.Case c : List.of(bulk.get(0), bulk.get(1), plan.get(0))) {
            at = expectCallByCall(events, at, c.label(), PerfWarmUp.passCalls(100, c.writes()));
            assertThat(events.get(at++)).isEqualTo(c.label() + " clean");
            int blocks = at;
            while (events.get(at).startsWith(c.label() + " ")) {
                at++;
            }
            assertThat(at).as("the pass's pair of " + c.label()).isGreaterThan(blocks);
        }
        // only then the first case's own warm-up (100 calls of each path, interleaved) and its first measured pair
        at = expectCallByCall(events, at, "1 w", 100);
        assertThat(events.get(at)).isEqualTo("1 w clean");

        events.clear();
        Perf.warmUpAndMeasure(
                List.of(bulk),
                settings(2, 0, 1, 1),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        assertThat(events.subList(0, 4))
                .as("--warmup-writes 0: no pass, the first case's --warmups runs first")
                .containsExactly("1 w driver", "1 w guard", "1 w driver", "1 w guard");
    }

    /** Checks {@code calls} driver and guard calls alternating from {@code at}; returns the position after them. */
    private static int expectCallByCall(List<String> events, int at, String label, int calls) {
        List<String> expected = new java.util.ArrayList<>();
        for (int i = 0; i < calls; i++) {
            expected.add(label + " driver");
            expected.add(label + " guard");
        }
        assertThat(events.subList(at, at + expected.size())).isEqualTo(expected);
        return at + expected.size();
    }

    /** A case whose two paths spin for about 20 us a call and record each call and each clean slate. */
    private static PerfWarmUp.Case recording(String label, int writes, List<String> events) {
        return new PerfWarmUp.Case(
                label,
                writes,
                () -> spin(events, label + " driver"),
                () -> spin(events, label + " guard"),
                () -> events.add(label + " clean"));
    }

    private static Object spin(List<String> events, String event) {
        events.add(event);
        long until = System.nanoTime() + 20_000;
        while (System.nanoTime() < until) {
            Thread.onSpinWait();
        }
        return event;
    }

    private static Perf.Settings settings(int warmups, int warmupWrites, int runs, int runMillis) {
        return new Perf.Settings(
                List.of(1), List.of(1), warmups, warmupWrites, runs, 1, 1, 0, runMillis, 8, 500, false);
    }

    @Test
    void payloadsAndSoak_withJson_printOneJsonObject() throws Exception {
        LabCommandLineTest.Run payloads = LabCommandLineTest.execute(
                "payloads", "--case", "10x1024", "--runs", "1", "--json", "--progress", "none");
        LabCommandLineTest.Run soak = LabCommandLineTest.execute(
                "soak",
                "--cost-free",
                "--writes",
                "200",
                "--batch",
                "100",
                "--every",
                "100",
                "--json",
                "--progress",
                "none");

        assertThat(payloads.exitCode()).as(payloads.err()).isZero();
        assertThat(payloads.err()).isEmpty();
        assertThat(LabJson.MAPPER.readTree(payloads.out()).get("cases").get(0).has("timeRatio"))
                .isTrue();
        assertThat(soak.exitCode()).as(soak.err()).isZero();
        assertThat(soak.err()).isEmpty();
        assertThat(LabJson.MAPPER.readTree(soak.out()).get("lines")).hasSize(3);
    }

    @Test
    void perfPayloadsAndSoak_refuseUri() {
        LabCommandLineTest.Run run = LabCommandLineTest.execute("payloads", "--uri", "mongodb://localhost:1/");

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("--uri: payloads measures the guard against the driver");
    }

    @Test
    void planAndEncode_andItsBaseline_encodeEveryWrite() {
        PlanBenchmark benchmark = new PlanBenchmark();
        benchmark.writes = 1_000;
        benchmark.filters = "Document";
        benchmark.prepare();

        long guard = benchmark.planAndEncode();
        long driver = benchmark.driverConvertAndEncode();

        // Same statements in both; the guard's commands add their headers, so its bytes are close to the driver's.
        assertThat(guard).isGreaterThan(driver / 2).isLessThan(driver * 2);
    }
}
