package io.github.mongowriteguard.benchmarks.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The paired ratio of a {@code perf} row: the median of the pairs' ratios, its interval, and the verdict. */
class PairedRatioTest {

    @Test
    void ratiosOfPairs_medianOfTheRatios_notTheRatioOfTheMedians() {
        // A slow second half hits both paths of each pair: the pairs' ratios are all 1.1.
        double[] driver = {1, 1, 1, 2, 2, 2};
        double[] guard = {1.1, 1.1, 1.1, 2.2, 2.2, 2.2};

        PairedRatio ratio = PairedRatio.of(guard, driver);

        assertThat(ratio.median()).isCloseTo(1.1, within(1e-12));
        assertThat(ratio.low()).isCloseTo(1.1, within(1e-12));
        assertThat(ratio.high()).isCloseTo(1.1, within(1e-12));
        assertThat(ratio.pairs()).isEqualTo(6);
    }

    @Test
    void interval_isTheOrderStatisticsOfABinomialOfOneHalf() {
        // P(Binomial(21, 1/2) <= 5) = 0.0133 <= 0.025 < P(<= 6) = 0.0392: the 6th and the 16th of 21 sorted ratios
        assertThat(PairedRatio.rank(21)).isEqualTo(6);
        assertThat(PairedRatio.binomialBelow(21, 6)).isCloseTo(0.01330, within(1e-5));
        // 6 pairs: P(<= 0) = 1/64 <= 0.025 < P(<= 1) = 7/64: the range, 96.9 %
        assertThat(PairedRatio.rank(6)).isEqualTo(1);
        assertThat(PairedRatio.rank(10)).isEqualTo(2); // P(<= 1) = 11/1024, P(<= 2) = 56/1024
        assertThat(PairedRatio.rank(1_000)).isEqualTo(469); // about n/2 - 0.98 sqrt(n), in logarithms

        double[] ratios =
                IntStream.rangeClosed(1, 21).mapToDouble(i -> i / 10.0).toArray();
        PairedRatio ratio = PairedRatio.ofRatios(ratios);

        assertThat(ratio.median()).isCloseTo(1.1, within(1e-12));
        assertThat(ratio.low()).isCloseTo(0.6, within(1e-12));
        assertThat(ratio.high()).isCloseTo(1.6, within(1e-12));
        assertThat(ratio.confidence()).isCloseTo(1 - 2 * 0.01330, within(1e-5));
    }

    @Test
    void fewerThanSixPairs_theRangeWithItsLowerCoverage() {
        PairedRatio five = PairedRatio.ofRatios(new double[] {1.3, 0.9, 1.0, 1.1, 1.2});
        PairedRatio one = PairedRatio.ofRatios(new double[] {1.05});

        assertThat(five.low()).isEqualTo(0.9);
        assertThat(five.high()).isEqualTo(1.3);
        assertThat(five.median()).isEqualTo(1.1);
        assertThat(five.confidence()).isCloseTo(1 - 2 / 32.0, within(1e-12));
        assertThat(one.low()).isEqualTo(1.05);
        assertThat(one.high()).isEqualTo(1.05);
        assertThat(one.confidence()).isZero();
    }

    @Test
    void verdict_metOnlyWhenTheWholeIntervalIsOnTheTargetsSide() {
        PairedRatio below = new PairedRatio(1.00, 0.98, 1.02, 0.95, 21);
        PairedRatio straddles = new PairedRatio(1.02, 0.99, 1.05, 0.95, 21);
        PairedRatio above = new PairedRatio(1.10, 1.05, 1.15, 0.95, 21);

        assertThat(below.atMost(1.03)).isEqualTo(PairedRatio.Verdict.MET);
        assertThat(straddles.atMost(1.03)).isEqualTo(PairedRatio.Verdict.TOO_CLOSE);
        assertThat(above.atMost(1.03)).isEqualTo(PairedRatio.Verdict.NOT_MET);
        assertThat(new PairedRatio(0.98, 0.97, 0.99, 0.95, 21).atLeast(0.97)).isEqualTo(PairedRatio.Verdict.MET);
        assertThat(new PairedRatio(0.97, 0.95, 0.99, 0.95, 21).atLeast(0.97)).isEqualTo(PairedRatio.Verdict.TOO_CLOSE);
        assertThat(new PairedRatio(0.93, 0.92, 0.96, 0.95, 21).atLeast(0.97)).isEqualTo(PairedRatio.Verdict.NOT_MET);
        assertThat(PairedRatio.Verdict.TOO_CLOSE.asBoolean()).isNull();
        assertThat(PairedRatio.Verdict.NOT_MET.text()).isEqualTo("NOT met");
    }

    @Test
    void unpairedFigures_refused() {
        assertThatThrownBy(() -> PairedRatio.of(new double[] {1, 2}, new double[] {1}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("as many guard figures as driver figures");
    }
}
