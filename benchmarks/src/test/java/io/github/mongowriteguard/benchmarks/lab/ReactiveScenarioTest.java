package io.github.mongowriteguard.benchmarks.lab;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * The {@code reactive} scenario run tiny through the command line: every row is there, and the round trips of an
 * ORDERED bulk on 5 hashed shards are the emulated mongos' counts (no time is asserted: the lab measures speed).
 */
class ReactiveScenarioTest {

    @Test
    void reactive_tiny_printsEveryRow_andCountsTheOrderedBulksRoundTrips() {
        LabCommandLineTest.Run run = LabCommandLineTest.execute(
                "reactive",
                "--sizes",
                "1,10",
                "--runs",
                "1",
                "--run-ms",
                "0",
                "--subscribers",
                "4",
                "--throughput-writes",
                "10",
                "--rounds",
                "1",
                "--window-ms",
                "20",
                "--warmup-ms",
                "0",
                "--progress",
                "none",
                "--json");

        assertThat(run.exitCode()).as(run.err()).isZero();
        JsonNode json = LabJson.MAPPER.readTree(run.out());
        assertThat(json.get("time")).hasSize(4);
        assertThat(json.get("warmupMillis").asInt()).isZero();
        assertThat(json.get("time").get(0).get("server").asString()).isEqualTo("cost-free");
        assertThat(json.get("time").get(3).get("server").asString()).isEqualTo("5 shards");
        assertThat(json.get("time").get(3).get("writes").asInt()).isEqualTo(10);
        JsonNode roundTrips = json.get("orderedRoundTrips");
        assertThat(roundTrips.get("writes").asInt()).isEqualTo(1_000);
        // The guard: one child batch per shard. The driver ORDERED: a new batch at every change of shard, about
        // 1 + 999 x (1 - 1/5) = 800 (Formula.orderedRoundTrips).
        assertThat(roundTrips.get("guard").asInt()).isEqualTo(5);
        assertThat(roundTrips.get("driver").asInt()).isBetween(700, 900);
        assertThat(json.get("throughput").get("subscribers").asInt()).isEqualTo(4);
        assertThat(json.get("throughput").get("guardBulksPerSecond").asDouble()).isPositive();
        assertThat(json.get("throughput").get("driverBulksPerSecond").asDouble())
                .isPositive();
    }

    @Test
    void reactive_refusesUri_andABulkOfNoWrites() {
        LabCommandLineTest.Run uri = LabCommandLineTest.execute("reactive", "--uri", "mongodb://localhost:1/");
        LabCommandLineTest.Run empty = LabCommandLineTest.execute("reactive", "--sizes", "0");

        assertThat(uri.exitCode()).isEqualTo(2);
        assertThat(uri.err()).contains("--uri: reactive");
        assertThat(empty.exitCode()).isEqualTo(2);
        assertThat(empty.err()).contains("--sizes");
    }
}
