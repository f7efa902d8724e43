package io.github.mongowriteguard.benchmarks.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/** The shape of --json and of the HTML report, from results built by hand (no cluster, no timing). */
class JsonAndReportTest {

    static RoundTrips.Result roundTrips() {
        return new RoundTrips.Result(
                5,
                1000,
                1,
                Formula.orderedRoundTrips(1000, 5),
                List.of(
                        new RoundTrips.Row("driver-ordered", 811, 811, 900.0),
                        new RoundTrips.Row("spring-ordered", 811, 811, 950.0),
                        new RoundTrips.Row("driver-unordered", 5, 1, 100.0),
                        new RoundTrips.Row("guarded", 5, 1, 110.0)),
                List.of(
                        new RoundTrips.SweepPoint(
                                2, 500.5, Map.of("driver-ordered", 508, "spring-ordered", 508, "guarded", 2)),
                        new RoundTrips.SweepPoint(
                                3, 667, Map.of("driver-ordered", 692, "spring-ordered", 692, "guarded", 3))),
                null);
    }

    static Latency.Result latency() {
        return new Latency.Result(
                5,
                1000,
                1,
                0.2,
                10,
                20,
                3,
                List.of(
                        new Latency.Row(
                                "spring-ordered", "normal", 1500, 30, 1000.2, Double.NaN, 1011, 811, List.of(1500.0)),
                        new Latency.Row(
                                "spring-ordered", "slow", 3500, 70, 2800.6, Double.NaN, 2820, 811, List.of(3500.0)),
                        new Latency.Row("guarded", "normal", 100, 2, 41, 42.4, 42.4, 5, List.of(100.0)),
                        new Latency.Row("guarded", "slow", 450, 9, 410, 410, 410, 5, List.of(450.0))),
                null);
    }

    static Retries.Result retries() {
        return new Retries.Result(
                4,
                300,
                List.of(
                        new Retries.Row(
                                "raw",
                                "uninterruptible",
                                true,
                                4,
                                8,
                                4,
                                4,
                                4,
                                "4 of 4 attempts failed",
                                List.of(
                                        new double[] {0, 1300},
                                        new double[] {600, 1300},
                                        new double[] {1200, 1300},
                                        new double[] {1800, 2500})),
                        new Retries.Row(
                                "guarded",
                                "interruptible",
                                true,
                                4,
                                4,
                                4,
                                1,
                                0,
                                "4 of 4 attempts failed",
                                List.of(new double[] {0, 200}, new double[] {200, 400}))),
                null);
    }

    static Overhead.Result overhead() {
        Map<String, Double> medians = new LinkedHashMap<>();
        medians.put("driver-ordered", 50.0);
        medians.put("guarded", 60.0);
        return new Overhead.Result(1000, 15, medians, 1.2, null);
    }

    static StaleReads.Result staleReads() {
        return new StaleReads.Result(
                1500,
                3000,
                List.of(
                        new StaleReads.Row(
                                "primary writes stalled",
                                "a1 (restarted)",
                                "failed: MongoExecutionTimeoutException (50)",
                                3008,
                                "a1 rejected 11 reads as stale"),
                        new StaleReads.Row("primary resumed", "a2 (not restarted)", "answered", 4, "")),
                null);
    }

    static HotKeys.Result hotKeys() {
        return new HotKeys.Result(
                5,
                5,
                3000,
                1000,
                100,
                List.of(
                        new HotKeys.Row("counter", "guard (exact)", 3000, 1, 1, null, null, 1500.0),
                        new HotKeys.Row("counter", "driver ORDERED", 3000, null, 1, null, null, 1600.0),
                        new HotKeys.Row("events", "guard (exact)", 1000, 10, 10, 10, 50, 540.0),
                        new HotKeys.Row("events", "guard (compaction)", 1000, 1, 1, 1, 5, 57.0),
                        new HotKeys.Row("events", "driver ORDERED", 1000, null, 1, 750, 750, 470.0),
                        new HotKeys.Row("events", "driver UNORDERED (deduplicated)", 100, null, 1, 1, 5, 14.0)));
    }

    static Lab.Results all() {
        return new Lab.Results(roundTrips(), latency(), retries(), overhead(), staleReads(), hotKeys());
    }

    @Test
    void hotKeysJson_hasTheDocumentedFields() {
        String json = LabJson.write(hotKeys().toJson());
        assertThat(json)
                .startsWith(
                        "{\"shards\":5,\"runs\":5,\"counterWrites\":3000,\"events\":1000,\"keys\":100,\"results\":[")
                .contains("{\"workload\":\"counter\",\"client\":\"guard (exact)\",\"writes\":3000,\"rounds\":1,"
                        + "\"commands\":1,\"mongosRounds\":null,\"childBatches\":null,\"medianMillis\":1500}")
                .contains("\"client\":\"driver ORDERED\",\"writes\":1000,\"rounds\":null,\"commands\":1,"
                        + "\"mongosRounds\":750");
    }

    @Test
    void roundTripsJson_hasTheDocumentedFields() {
        String json = LabJson.write(roundTrips().toJson());
        assertThat(json).startsWith("{\"shards\":5,\"docs\":1000,\"seed\":1,\"formula\":800.2,\"results\":[");
        assertThat(json).contains("{\"client\":\"guarded\",\"roundTrips\":5,\"rounds\":1,\"millis\":110}");
        assertThat(json).contains("{\"client\":\"spring-ordered\",\"roundTrips\":811,\"rounds\":811,\"millis\":950}");
    }

    @Test
    void latencyJson_hasClientShardMillisAndInFlight() {
        String json = LabJson.write(latency().toJson());
        assertThat(json)
                .contains(
                        "\"results\":[{\"client\":\"spring-ordered\",\"shard\":\"normal\",\"millis\":1500,\"inFlight\":30,");
        assertThat(json).contains("{\"client\":\"guarded\",\"shard\":\"slow\",\"millis\":450,\"inFlight\":9,");
        assertThat(json).contains("\"slowestShardBoundMillis\":null");
    }

    @Test
    void retriesJson_hasTheServerSideCounts() {
        String json = LabJson.write(retries().toJson());
        assertThat(json)
                .contains("{\"client\":\"raw\",\"stall\":\"uninterruptible\",\"retryWrites\":true,\"appAttempts\":4,"
                        + "\"sends\":8,\"copies\":4,\"maxConcurrentCopies\":4,\"documents\":4,");
        assertThat(json).contains("\"copyIntervalsMs\":[[0,200],[200,400]]");
    }

    @Test
    void staleReadsJson_keepsItsShape() {
        String json = LabJson.write(staleReads().toJson());
        assertThat(json)
                .startsWith("{\"scenario\":\"stale-reads\",\"refreshLimitMs\":1500,\"maxTimeMs\":3000,\"rows\":[")
                .contains(
                        "{\"step\":\"primary resumed\",\"node\":\"a2 (not restarted)\",\"outcome\":\"answered\",\"ms\":4,\"detail\":\"\"}")
                .doesNotContain("\"note\"");
    }

    @Test
    void fullRunJson_isOneObjectWithAFieldPerScenario() {
        String json = LabJson.write(Lab.json(EnumSet.allOf(Lab.Scenario.class), all(), "lab-report.html"));
        assertThat(json).startsWith("{\"roundtrips\":{").endsWith("\"report\":\"lab-report.html\"}");
        assertThat(json)
                .contains(
                        "\"latency\":{",
                        "\"retries\":{",
                        "\"overhead\":{\"docs\":1000,\"runs\":15,",
                        "\"staleReads\":{\"scenario\":\"stale-reads\",");
        assertThat(json.chars().filter(c -> c == '\n')).isEmpty();
        JsonNode tree = LabJson.MAPPER.readTree(json);
        assertThat(tree.propertyNames())
                .containsExactly(
                        "roundtrips",
                        "latency",
                        "retries",
                        "overhead",
                        "staleReads",
                        "hotKeys",
                        "scale",
                        "connect",
                        "report");
        assertThat(tree.get("connect").get("note").asString()).contains("not run with --uri");
    }

    @Test
    void connectJsonAndReport_onePerSink() {
        ConnectSinks.Result connect = new ConnectSinks.Result(
                new ConnectSinks.Settings(1_000, 50, 6),
                List.of(
                        new ConnectSinks.Row(
                                "official-ordered",
                                "com.mongodb.kafka.connect.MongoSinkConnector",
                                true,
                                1640,
                                8.0,
                                125,
                                2,
                                1,
                                0,
                                0,
                                500,
                                500),
                        new ConnectSinks.Row(
                                "guarded",
                                "io.github.mongowriteguard.kafka.connect.GuardedMongoSinkConnector",
                                true,
                                12,
                                2.0,
                                500,
                                10,
                                1,
                                0,
                                0,
                                0,
                                0)));
        JsonNode tree = LabJson.MAPPER.readTree(
                LabJson.write(Lab.json(EnumSet.of(Lab.Scenario.CONNECT), results(connect), null)));
        assertThat(tree.get("records").asInt()).isEqualTo(1_000);
        JsonNode guarded = tree.get("sinks").get(1);
        assertThat(guarded.get("sink").asString()).isEqualTo("guarded");
        assertThat(guarded.get("roundTrips").asLong()).isEqualTo(12);
        assertThat(guarded.get("recordsPerSecond").asLong()).isEqualTo(500);
        assertThat(guarded.get("lost").asInt()).isZero();
        assertThat(guarded.get("appliedTwice").asInt()).isZero();
        assertThat(guarded.get("maxCopiesAtOnce").asInt()).isEqualTo(1);
        assertThat(tree.get("sinks").get(0).get("appliedDeadLettered").asInt()).isEqualTo(500);
        assertThat(HtmlReport.render(results(connect), "java -jar lab.jar connect"))
                .contains("<table id=\"connect\">", "<td>official-ordered</td><td>1640</td><td>125</td>");
    }

    private static Lab.Results results(ConnectSinks.Result connect) {
        return new Lab.Results(null, null, null, null, null, null, null, connect);
    }

    @Test
    void oneScenarioJson_isThatScenariosObject() {
        assertThat(Lab.json(EnumSet.of(Lab.Scenario.OVERHEAD), all(), null))
                .isEqualTo(overhead().toJson());
        assertThat(Lab.json(EnumSet.of(Lab.Scenario.STALE_READS), all(), null))
                .isEqualTo(staleReads().toJson());
    }

    @Test
    void json_escapesStringsAndWritesNonFiniteAsNull() {
        Map<String, Object> value = new LinkedHashMap<>();
        value.put("text", "a \"quoted\"\\ line\n\u0001");
        value.put("nan", Double.NaN);
        value.put("list", List.of(1, 2.5, true));
        value.put("none", null);
        value.put("decimals", List.of(800.2, 1000.0, 0.000001, 1e20, Double.POSITIVE_INFINITY));
        assertThat(LabJson.write(value))
                .isEqualTo(
                        "{\"text\":\"a \\\"quoted\\\"\\\\ line\\n\\u0001\",\"nan\":null,\"list\":[1,2.5,true],\"none\":null,"
                                + "\"decimals\":[800.2,1000,0.000001,100000000000000000000,null]}");
    }

    @Test
    void report_isSelfContainedAndHasTheThreeCharts() {
        String html = HtmlReport.render(all(), "java -jar lab.jar");
        assertThat(html).startsWith("<!DOCTYPE html>").endsWith("</html>\n");
        assertThat(html)
                .contains("<svg id=\"chart-roundtrips\"", "<svg id=\"chart-latency\"", "<svg id=\"chart-retries\"");
        assertThat(html)
                .contains(
                        "class=\"series-formula\"",
                        "class=\"series-driver-ordered\"",
                        "class=\"series-spring-ordered\"",
                        "class=\"series-guarded\"");
        assertThat(html).contains("class=\"bar-measured\"", "class=\"bar-article\"", "class=\"timeline\"");
        assertThat(html).contains("<h2 id=\"stale-reads\">", "failed: MongoExecutionTimeoutException (50)");
        assertThat(html).contains("<table id=\"hot-keys\">", "driver UNORDERED (deduplicated)");
        assertThat(html).doesNotContain("<script", "http://cdn", "https://", "<link");
    }

    @Test
    void report_leavesOutScenariosThatDidNotRun() {
        String html =
                HtmlReport.render(new Lab.Results(null, null, retries(), null, null), "java -jar lab.jar retries");
        assertThat(html)
                .contains("chart-retries")
                .doesNotContain("chart-roundtrips", "chart-latency", "stale-reads", "hot-keys");
    }

    @Test
    void timelineSteps_countCopiesRunningAtOnce() {
        List<double[]> steps =
                HtmlReport.steps(List.of(new double[] {0, 10}, new double[] {5, 20}, new double[] {10, 15}));
        assertThat(steps.stream().mapToInt(s -> (int) s[1]).max().orElse(0)).isEqualTo(2);
        assertThat(steps.get(steps.size() - 1)[1]).isZero();
    }
}
