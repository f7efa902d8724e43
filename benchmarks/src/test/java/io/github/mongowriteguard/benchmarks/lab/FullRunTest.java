package io.github.mongowriteguard.benchmarks.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * The full run, every scenario, at tiny parameters (a few seconds): it includes stale-reads, steps the progress bar
 * exactly as far as it planned, and prints a few phase lines when stderr is not a terminal.
 */
class FullRunTest {

    @Test
    void everyScenarioRuns_andTheProgressPlanMatchesTheSteps() throws Exception {
        Options.Config config = Options.Config.defaults();
        config.bulk().docs = 20;
        config.latency().rttMs = 0;
        config.latency().perDocMs = 0;
        config.latency().repetitions = 1;
        config.overhead().runs = 1;
        config.retries().appAttempts = 1;
        config.retries().socketTimeoutMs = 100;
        config.retries().stall = Options.StallKind.INTERRUPTIBLE;
        config.staleReads().refreshLimitMs = 200;
        config.staleReads().maxTimeMs = 400;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Progress progress = Progress.to(new PrintStream(err, true, StandardCharsets.UTF_8), Progress.Mode.LINES);
        Lab.Results results;
        try (progress) {
            results = Lab.runScenarios(
                    EnumSet.allOf(Lab.Scenario.class),
                    config,
                    Options.StallKind.BOTH,
                    Scale.Settings.DEFAULT,
                    CONNECT,
                    progress);
        }
        assertThat(progress.done()).isEqualTo(progress.planned());
        assertThat(results.roundTrips().rows()).hasSize(6);
        // Spring's bulkOps(ORDERED).upsert by _id through the guard: one round, the plain Spring bulk's documents.
        assertThat(results.roundTrips().rows())
                .filteredOn(row -> row.client().equals("guarded-spring-upsert"))
                .singleElement()
                .satisfies(row -> assertThat(row.rounds()).isEqualTo(1));
        assertThat(results.roundTrips().note())
                .isEqualTo("guarded-spring-upsert left the same documents as spring-upsert");
        assertThat(results.latency().rows()).hasSize(6);
        assertThat(results.retries().rows()).hasSize(3);
        assertThat(results.overhead().medianMillis()).containsOnlyKeys("driver-ordered", "guarded");
        assertThat(results.staleReads().rows()).hasSize(5);
        // counter: guard, driver ORDERED, driver UNORDERED; events-rs (replica set): the same three; events (5 shards):
        // guard exact (side by side), exact sequential, compaction, exact UNORDERED, driver ORDERED, driver UNORDERED
        // deduplicated.
        assertThat(results.hotKeys().rows()).hasSize(12);
        assertThat(results.scale().points())
                .singleElement()
                .satisfies(point -> assertThat(point.quietMinute().commands()).isEqualTo(2));
        assertConnectCounts(results.connect());
        String lines = err.toString(StandardCharsets.UTF_8);
        assertThat(lines.split("\n")).hasSizeBetween(12, 20);
        assertThat(lines).contains("stale-reads:").doesNotContain("\r");
    }

    /** The connect scenario small: 1,000 records over 50 keys, 6 lost update replies as each sink starts. */
    static final ConnectSinks.Settings CONNECT = new ConnectSinks.Settings(1_000, 50, 6);

    /**
     * Counts, never timings: the guarded sink loses nothing, applies nothing twice and dead-letters nothing under the
     * lost replies, in one mongos round per batch; the official sinks dead-letter batches whose writes applied.
     */
    static void assertConnectCounts(ConnectSinks.Result connect) {
        connect.print(System.out); // the table, in the test's report
        assertThat(connect.rows())
                .extracting(ConnectSinks.Row::sink)
                .containsExactly("official-ordered", "official-unordered", "guarded");
        ConnectSinks.Row officialOrdered = connect.rows().get(0);
        ConnectSinks.Row officialUnordered = connect.rows().get(1);
        ConnectSinks.Row guarded = connect.rows().get(2);
        assertThat(guarded.lost()).as("guarded: lost").isZero();
        assertThat(guarded.appliedTwice()).as("guarded: applied twice").isZero();
        assertThat(guarded.deadLettered()).as("guarded: dead-lettered").isZero();
        assertThat(guarded.appliedDeadLettered())
                .as("guarded: applied and dead-lettered")
                .isZero();
        assertThat(officialOrdered.appliedDeadLettered() + officialUnordered.appliedDeadLettered())
                .as("official: applied and dead-lettered")
                .isPositive();
        assertThat(guarded.roundTrips()).isLessThan(officialOrdered.roundTrips());
        assertThat(guarded.serverCopies()).isPositive();
    }

    @Test
    void oneScenario_printsOneJsonObject_andWritesTheSameToJsonOut(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("overhead.json");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Lab.commandLine(
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        new PrintStream(err, true, StandardCharsets.UTF_8))
                .execute(
                        "overhead",
                        "--docs",
                        "10",
                        "--runs",
                        "1",
                        "--json",
                        "--json-out",
                        file.toString(),
                        "--progress",
                        "lines");
        assertThat(code).isZero();
        String stdout = out.toString(StandardCharsets.UTF_8);
        assertThat(stdout.lines()).hasSize(1);
        JsonNode json = LabJson.MAPPER.readTree(stdout);
        assertThat(json.get("docs").asInt()).isEqualTo(10);
        assertThat(json.get("results")).hasSize(2);
        assertThat(Files.readString(file)).isEqualTo(stdout);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("overhead:", "JSON written to");
    }

    @Test
    void staleReads_onARealDeployment_isSkippedAndSaysWhy() throws Exception {
        Options.Config config = Options.Config.defaults();
        config.output().uri = "mongodb://127.0.0.1:1/";
        StaleReads.Result result = StaleReads.run(config, Progress.silent());
        assertThat(result.rows()).isEmpty();
        assertThat(result.note()).contains("skipped on a real deployment");
        assertThat(StaleReads.units(config)).isZero();
    }
}
