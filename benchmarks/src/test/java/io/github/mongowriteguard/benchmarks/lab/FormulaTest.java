package io.github.mongowriteguard.benchmarks.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The article's numbers (write-path.md section 1), reproduced by the lab's arithmetic. */
class FormulaTest {

    @Test
    void orderedRoundTrips_matchTheArticlesTable() {
        assertThat(Formula.orderedRoundTrips(1000, 2)).isCloseTo(500.5, within(1e-9));
        assertThat(Formula.orderedRoundTrips(1000, 3)).isCloseTo(667, within(1e-9));
        assertThat(Formula.orderedRoundTrips(1000, 4)).isCloseTo(750.25, within(1e-9));
        assertThat(Formula.orderedRoundTrips(1000, 5)).isCloseTo(800.2, within(1e-9));
        assertThat(Formula.orderedRoundTrips(1000, 6)).isCloseTo(833.5, within(1e-9));
        assertThat(Formula.orderedRoundTrips(1000, 8)).isCloseTo(875.125, within(1e-9));
        assertThat(Formula.orderedRoundTrips(1, 5)).isEqualTo(1);
        assertThat(Formula.orderedRoundTrips(1000, 1)).isEqualTo(1);
    }

    @Test
    void littlesLawTable_matchesTheArticle() {
        assertThat(Formula.orderedMillis(1000, 5, 1, 0.2, 1)).isCloseTo(1000, within(0.5));
        assertThat(Formula.orderedMillis(1000, 5, 1, 0.2, 10)).isCloseTo(2800, within(1.0));
        assertThat(Formula.unorderedMillis(1000, 5, 1, 0.2, 1)).isCloseTo(41, within(1e-9));
        assertThat(Formula.unorderedMillis(1000, 5, 1, 0.2, 10)).isCloseTo(410, within(1e-9));
        assertThat(Formula.inFlight(20, 1000)).isEqualTo(20);
        assertThat(Formula.inFlight(20, 2800)).isCloseTo(56, within(1e-9));
        assertThat(Formula.inFlight(20, 41)).isCloseTo(0.82, within(1e-9));
        assertThat(Formula.inFlight(20, 410)).isCloseTo(8.2, within(1e-9));
    }

    @Test
    void slowestShardBound_takesTheWorstShardWithItsFactor() {
        Map<String, Integer> placement = Map.of("shard00", 210, "shard01", 190, "shard02", 200);
        assertThat(Formula.slowestShardMillis(placement, null, 1, 0.2, 10)).isCloseTo(43, within(1e-9));
        assertThat(Formula.slowestShardMillis(placement, "shard01", 1, 0.2, 10)).isCloseTo(390, within(1e-9));
    }

    @Test
    void median_ofOddAndEvenCounts() {
        assertThat(Formula.median(List.of(3.0, 1.0, 2.0))).isEqualTo(2.0);
        assertThat(Formula.median(List.of(4.0, 1.0, 2.0, 3.0))).isEqualTo(2.5);
        assertThat(Formula.median(List.of())).isNaN();
    }
}
