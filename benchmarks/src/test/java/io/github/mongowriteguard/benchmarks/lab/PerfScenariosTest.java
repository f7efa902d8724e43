package io.github.mongowriteguard.benchmarks.lab;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.mongowriteguard.benchmarks.jmh.PlanBenchmark;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
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
                "10",
                "--threads",
                "2",
                "--warmups",
                "1",
                "--runs",
                "1",
                "--rounds",
                "1",
                "--seconds",
                "1",
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
                        "2 threads");
        assertThat(run.out()).doesNotContain("NaN");
    }

    @Test
    void perf_withJsonAndNoProgress_printsOneJsonObjectAndNothingElse() throws Exception {
        LabCommandLineTest.Run run = LabCommandLineTest.execute(
                "perf",
                "--sizes",
                "10",
                "--threads",
                "1",
                "--warmups",
                "0",
                "--runs",
                "1",
                "--rounds",
                "1",
                "--seconds",
                "1",
                "--plan-writes",
                "100",
                "--json",
                "--progress",
                "none");

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.err()).isEmpty();
        tools.jackson.databind.JsonNode json = LabJson.MAPPER.readTree(run.out());
        assertThat(json.propertyNames()).containsExactly("warmups", "runs", "bulkWrite", "planAndEncode", "throughput");
        assertThat(json.get("bulkWrite")).hasSize(4);
        assertThat(json.get("bulkWrite").get(0).has("ratio")).isTrue();
        assertThat(json.get("planAndEncode").get(0).has("allocationTargetMet")).isTrue();
    }

    @Test
    void payloadsAndSoak_withJson_printOneJsonObject() throws Exception {
        LabCommandLineTest.Run payloads = LabCommandLineTest.execute(
                "payloads", "--case", "10x1024", "--runs", "1", "--json", "--progress", "none");
        LabCommandLineTest.Run soak = LabCommandLineTest.execute(
                "soak", "--writes", "200", "--batch", "100", "--every", "100", "--json", "--progress", "none");

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
