package io.github.mongowriteguard.benchmarks.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The soak under faults, for seconds: the instance JVM writes, every fault type is injected, every series is sampled
 * and checked, and the JSON and the report carry them. The growth check itself on series made up for it.
 */
class FaultSoakTest {

    @Test
    void aShortSoak_injectsEveryFault_samplesEverySeries_andReportsTheCurves() throws Exception {
        FaultSoak.Settings settings = new FaultSoak.Settings(0.75, 3, 3, 500, 50, 50, "256m", 7, 20);
        ByteArrayOutputStream log = new ByteArrayOutputStream();

        FaultSoak.Result result = FaultSoak.run(settings, new PrintStream(log, true, StandardCharsets.UTF_8));

        assertThat(result.faultErrors())
                .as(log.toString(StandardCharsets.UTF_8))
                .isEmpty();
        assertThat(result.faults().values())
                .as("every fault type at least once")
                .allMatch(n -> n >= 1);
        assertThat(result.samples().size()).isGreaterThanOrEqualTo(8);
        FaultSoak.Sample last = result.samples().get(result.samples().size() - 1);
        assertThat(last.writes()).isPositive();
        assertThat(last.settles()).as("the stalls left writes UNKNOWN, settled").isPositive();
        assertThat(last.multiDocument()).as("an opted-in updateMany per poll").isPositive();
        assertThat(last.values())
                .containsKeys(
                        "heapAfterGcBytes",
                        "threads",
                        "serverSessions",
                        "copies.tracked",
                        "copies.held",
                        "executors",
                        "catalog.chunks");
        assertThat(last.values().get("heapAfterGcBytes")).isPositive();
        assertThat(last.values().get("serverSessions")).isPositive();
        assertThat(result.bounds()).containsEntry("copies.held", 1_000L);
        assertThat(result.trends()).extracting(FaultSoak.Trend::series).contains("heapAfterGcBytes", "copies.held");
        assertThat(LabJson.write(result.toJson())).contains("\"trends\"", "\"samples\"", "\"flat\"");
        String html = SoakReport.render(result, "java -jar lab.jar soak --minutes 0.75");
        assertThat(html).contains("<table id=\"soak\"", "<polyline", "heap after GC, MiB");
        ByteArrayOutputStream table = new ByteArrayOutputStream();
        result.print(new PrintStream(table, true, StandardCharsets.UTF_8));
        assertThat(table.toString(StandardCharsets.UTF_8)).contains("copies.held", "flat");
    }

    @Test
    void growthCheck_flagsASeriesThatGrows_andNotOneThatOnlyMoves() {
        List<FaultSoak.Sample> samples = new ArrayList<>();
        for (int i = 0; i <= 40; i++) {
            Map<String, Double> values = new LinkedHashMap<>();
            // a heap that moves by 300 KiB from sample to sample around 40 MiB
            values.put("heapAfterGcBytes", 40.0 * 1_048_576 + (i % 2 == 0 ? 300_000 : -300_000));
            // a held structure that comes back to 0 after each fault
            values.put("copies.held", i % 6 == 0 ? 3.0 : 0.0);
            // one more session per sample: a leak
            values.put("serverSessions", 4.0 + i);
            samples.add(new FaultSoak.Sample(i * 10.0, values, i * 1_000L, 0, 0, 0, 0, 0, i / 6));
        }

        Map<String, Boolean> flat = new LinkedHashMap<>();
        FaultSoak.trends(samples).forEach(t -> flat.put(t.series(), t.flat()));

        assertThat(flat)
                .containsEntry("heapAfterGcBytes", true)
                .containsEntry("copies.held", true)
                .containsEntry("serverSessions", false);
    }

    @Test
    void growthCheck_flagsAHeapGrowingByAFewMegabytes() {
        List<FaultSoak.Sample> samples = new ArrayList<>();
        for (int i = 0; i <= 60; i++) {
            // 100 KiB per sample: 6 MiB over the run, 3 MiB between the halves' means
            samples.add(new FaultSoak.Sample(
                    i * 30.0, Map.of("heapAfterGcBytes", 40.0 * 1_048_576 + i * 102_400.0), 0, 0, 0, 0, 0, 0, 0));
        }

        assertThat(FaultSoak.trends(samples).get(0).flat()).isFalse();
    }
}
