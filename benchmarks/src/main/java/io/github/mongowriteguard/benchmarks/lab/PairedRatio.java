package io.github.mongowriteguard.benchmarks.lab;

import java.util.Arrays;

/**
 * The guard / driver ratio of one {@code perf} row, from paired runs: each pair is one run of the driver and one of the
 * guard back to back, so that load from other processes, which changes over seconds, hits both runs of a pair alike;
 * the ratio of each pair is one sample. The row's ratio is the median of the pairs' ratios, and its spread is a
 * distribution-free confidence interval of that median: the order statistics {@code j} and {@code n + 1 - j} of the
 * {@code n} sorted ratios, {@code j} the largest rank with {@code P(Binomial(n, 1/2) < j) <= 2.5 %} (any continuous
 * distribution of the ratios, no normality assumed). With fewer than 6 pairs no rank reaches 95 %: the interval is then
 * the range of the ratios, and {@link #confidence} says how much less than 95 % it covers.
 *
 * @param median     the median of the pairs' ratios
 * @param low        the interval's lower end
 * @param high       the interval's upper end
 * @param confidence the interval's coverage of the true median, {@code 1 - 2 P(Binomial(n, 1/2) < j)}
 * @param pairs      the number of pairs
 */
record PairedRatio(double median, double low, double high, double confidence, int pairs) {

    /** The coverage the interval aims at. */
    static final double CONFIDENCE = 0.95;

    /** What one run can say of a ratio against its target. */
    enum Verdict {
        /** The whole interval is on the target's side. */
        MET("met"),
        /** The whole interval is on the other side. */
        NOT_MET("NOT met"),
        /** The interval contains the target: this run cannot tell. */
        TOO_CLOSE("too close to call");

        private final String text;

        Verdict(String text) {
            this.text = text;
        }

        /** {@return the verdict as the tables print it} */
        String text() {
            return text;
        }

        /** {@return true when met, false when not met, null when too close to call} */
        Boolean asBoolean() {
            return this == TOO_CLOSE ? null : this == MET;
        }
    }

    /**
     * The ratios {@code guard[i] / driver[i]} of paired runs.
     *
     * @param guard  the guard's figure of each pair
     * @param driver the driver's figure of the same pairs
     * @return their median and its interval
     */
    static PairedRatio of(double[] guard, double[] driver) {
        if (guard.length != driver.length || guard.length == 0) {
            throw new IllegalArgumentException(
                    "paired runs need as many guard figures as driver figures, at least one: " + guard.length + " and "
                            + driver.length);
        }
        double[] ratios = new double[guard.length];
        for (int i = 0; i < ratios.length; i++) {
            ratios[i] = guard[i] / driver[i];
        }
        return ofRatios(ratios);
    }

    /**
     * The median of these ratios and its interval.
     *
     * @param ratios one ratio per pair
     * @return their median and its interval
     */
    static PairedRatio ofRatios(double[] ratios) {
        double[] sorted = ratios.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        int rank = rank(n);
        double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        return new PairedRatio(median, sorted[rank - 1], sorted[n - rank], 1 - 2 * binomialBelow(n, rank), n);
    }

    /**
     * The rank (1-based) of the interval's lower end among {@code n} sorted ratios: the largest {@code j} with
     * {@code P(Binomial(n, 1/2) < j) <= (1 - CONFIDENCE) / 2}, and 1 (the range) when even {@code j = 1} exceeds it.
     */
    static int rank(int n) {
        int j = 1;
        while (j + 1 <= (n + 1) / 2 && binomialBelow(n, j + 1) <= (1 - CONFIDENCE) / 2) {
            j++;
        }
        return j;
    }

    /** {@code P(Binomial(n, 1/2) < j)}, summed in logarithms so that large {@code n} does not underflow. */
    static double binomialBelow(int n, int j) {
        double sum = 0;
        double logChoose = 0; // log C(n, 0)
        for (int i = 0; i < j; i++) {
            sum += Math.exp(logChoose - n * Math.log(2));
            logChoose += Math.log(n - i) - Math.log(i + 1.0);
        }
        return Math.min(1, sum);
    }

    /**
     * The verdict for a ratio that should be at most {@code target} (time).
     *
     * @param target the largest ratio that meets the target
     * @return met, NOT met, or too close to call
     */
    Verdict atMost(double target) {
        return high <= target ? Verdict.MET : low > target ? Verdict.NOT_MET : Verdict.TOO_CLOSE;
    }

    /**
     * The verdict for a ratio that should be at least {@code target} (throughput).
     *
     * @param target the smallest ratio that meets the target
     * @return met, NOT met, or too close to call
     */
    Verdict atLeast(double target) {
        return low >= target ? Verdict.MET : high < target ? Verdict.NOT_MET : Verdict.TOO_CLOSE;
    }

    /** {@return the interval as the tables print it, e.g. {@code 0.981-1.043}} */
    String interval() {
        return String.format("%.3f-%.3f", low, high);
    }
}
