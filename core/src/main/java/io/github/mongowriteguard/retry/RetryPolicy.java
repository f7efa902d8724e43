package io.github.mongowriteguard.retry;

import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.RetryConfig;
import java.time.Duration;
import java.util.Objects;

/**
 * How the guard retries a write that failed in a way that is safe and useful to retry (see
 * the README's table of what the guard retries): a small number of attempts with exponential backoff and jitter, never
 * {@code FixedBackOff(0, n)}. Every attempt of a single-document write resends the same server copy (same
 * {@code lsid} and {@code txnNumber}) right after the backoff, which the server serialises behind a send that still
 * runs and answers from its statement record, so retries never multiply copies; the overlap gate runs before each new
 * copy of a multi-document write retried by opt-in.
 *
 * <pre>{@code
 * RetryPolicy policy = RetryPolicy.builder().maxAttempts(4).initialBackoff(Duration.ofMillis(200)).build();
 * WriteGuard guard = WriteGuard.create(WriteGuardSettings.builder().retryPolicy(policy).build());
 * }</pre>
 *
 * <p>Defaults: 3 attempts, 100 ms initial backoff, multiplier 2, at most 5 s, jitter 0.5 (each wait is drawn from
 * [0.5, 1.5] x the exponential value), gate grace 100 ms. {@link #none()} sends every write once.
 */
public final class RetryPolicy {
    private static final RetryPolicy NONE = builder().maxAttempts(1).build();

    private final int maxAttempts;
    private final Duration initialBackoff;
    private final double multiplier;
    private final Duration maxBackoff;
    private final double jitter;
    private final Duration gateGrace;
    /** The interval function of a resilience4j config this policy was made from, or null. */
    private final java.util.function.@org.jspecify.annotations.Nullable Function<Integer, Long> intervals;

    private RetryPolicy(Builder builder) {
        this.maxAttempts = builder.maxAttempts;
        this.initialBackoff = builder.initialBackoff;
        this.multiplier = builder.multiplier;
        this.maxBackoff = builder.maxBackoff;
        this.jitter = builder.jitter;
        this.gateGrace = builder.gateGrace;
        this.intervals = builder.intervals;
    }

    /** {@return a builder with every default} */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * {@return a builder starting from {@code existing}'s values}
     *
     * @param existing the policy to start from
     */
    public static Builder builder(RetryPolicy existing) {
        return new Builder(existing);
    }

    /** {@return the default policy: 3 attempts, 100 ms doubling up to 5 s, jitter 0.5, gate grace 100 ms} */
    public static RetryPolicy defaults() {
        return builder().build();
    }

    /**
     * One attempt: nothing is retried.
     *
     * @return a policy of one attempt
     */
    public static RetryPolicy none() {
        return NONE;
    }

    /**
     * Takes the attempts and backoff of a resilience4j {@link RetryConfig}. What is retried stays the guard's
     * classification: the config's exception and result predicates are not used.
     *
     * @throws IllegalArgumentException if the config's backoff cannot be read (a result-dependent interval)
     * @param config a resilience4j retry configuration
     * @return a policy with its attempts and backoff
     */
    public static RetryPolicy from(RetryConfig config) {
        Objects.requireNonNull(config, "config");
        if (config.getIntervalFunction() == null) {
            throw new IllegalArgumentException(
                    "the RetryConfig has a result-dependent interval (intervalBiFunction); give the"
                            + " guard a config built with intervalFunction(IntervalFunction.ofExponentialRandomBackoff(...))");
        }
        Builder builder = builder().maxAttempts(config.getMaxAttempts());
        builder.intervals = config.getIntervalFunction();
        return builder.build();
    }

    /**
     * Attempts in all, the first one included; 1 means no retry.
     *
     * @return 1 to 10
     */
    public int getMaxAttempts() {
        return maxAttempts;
    }

    /** {@return the wait before the first retry} */
    public Duration getInitialBackoff() {
        return initialBackoff;
    }

    /** {@return the factor applied to the wait after each retry} */
    public double getMultiplier() {
        return multiplier;
    }

    /** {@return the longest wait between two attempts} */
    public Duration getMaxBackoff() {
        return maxBackoff;
    }

    /**
     * The randomization factor: each wait is drawn from [1 - jitter, 1 + jitter] x the exponential value.
     *
     * @return in [0, 1)
     */
    public double getJitter() {
        return jitter;
    }

    /**
     * How long after an attempt's server deadline the gate waits before checking that no copy still runs.
     *
     * @return the grace
     */
    public Duration getGateGrace() {
        return gateGrace;
    }

    /**
     * The longest wait before attempt {@code attempt + 1} (jitter at its top), for budgets. For a policy made from
     * a resilience4j config, the largest of 32 draws of its interval function.
     *
     * @param attempt the attempt that just failed, from 1
     * @return the longest wait
     */
    public Duration maxBackoffAfter(int attempt) {
        if (intervals != null) {
            long max = 0;
            for (int draw = 0; draw < 32; draw++) {
                max = Math.max(max, intervals.apply(attempt));
            }
            return Duration.ofMillis(max);
        }
        double value = initialBackoff.toMillis() * Math.pow(multiplier, Math.max(0, attempt - 1));
        return Duration.ofMillis((long) Math.min(maxBackoff.toMillis(), value * (1 + jitter)));
    }

    /**
     * The sum of the longest waits between all attempts.
     *
     * @return the sum, zero for one attempt
     */
    public Duration getMaxTotalBackoff() {
        Duration total = Duration.ZERO;
        for (int attempt = 1; attempt < maxAttempts; attempt++) {
            total = total.plus(maxBackoffAfter(attempt));
        }
        return total;
    }

    /**
     * The resilience4j configuration the guard drives its attempts with (results are retried, never exceptions).
     *
     * @param <T>         the result type
     * @param retryResult which results call for another attempt
     * @return the configuration
     */
    public <T> RetryConfig toRetryConfig(java.util.function.Predicate<T> retryResult) {
        IntervalFunction interval = intervals != null
                ? intervals::apply
                : jitter == 0
                        ? IntervalFunction.ofExponentialBackoff(
                                Math.max(1, initialBackoff.toMillis()), multiplier, Math.max(1, maxBackoff.toMillis()))
                        : IntervalFunction.ofExponentialRandomBackoff(
                                Math.max(1, initialBackoff.toMillis()),
                                multiplier,
                                jitter,
                                Math.max(1, maxBackoff.toMillis()));
        return RetryConfig.<T>custom()
                .maxAttempts(maxAttempts)
                .intervalFunction(interval)
                .retryOnResult(retryResult)
                .retryOnException(e -> false)
                .failAfterMaxAttempts(false)
                .build();
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof RetryPolicy)) {
            return false;
        }
        RetryPolicy that = (RetryPolicy) o;
        return maxAttempts == that.maxAttempts
                && Objects.equals(intervals, that.intervals)
                && Double.compare(multiplier, that.multiplier) == 0
                && Double.compare(jitter, that.jitter) == 0
                && initialBackoff.equals(that.initialBackoff)
                && maxBackoff.equals(that.maxBackoff)
                && gateGrace.equals(that.gateGrace);
    }

    @Override
    public int hashCode() {
        return Objects.hash(maxAttempts, initialBackoff, multiplier, maxBackoff, jitter, gateGrace, intervals);
    }

    @Override
    public String toString() {
        if (intervals != null) {
            return "RetryPolicy{maxAttempts=" + maxAttempts + ", intervals from a resilience4j RetryConfig, gateGrace="
                    + gateGrace.toMillis() + "ms}";
        }
        return "RetryPolicy{maxAttempts=" + maxAttempts + ", initialBackoff=" + initialBackoff.toMillis()
                + "ms, multiplier="
                + multiplier + ", maxBackoff=" + maxBackoff.toMillis() + "ms, jitter=" + jitter + ", gateGrace="
                + gateGrace.toMillis() + "ms}";
    }

    /** Builds a {@link RetryPolicy}; each setter checks its own value. */
    public static final class Builder {
        private int maxAttempts = 3;
        private Duration initialBackoff = Duration.ofMillis(100);
        private double multiplier = 2.0;
        private Duration maxBackoff = Duration.ofSeconds(5);
        private double jitter = 0.5;
        private Duration gateGrace = Duration.ofMillis(100);
        private java.util.function.@org.jspecify.annotations.Nullable Function<Integer, Long> intervals;

        private Builder() {}

        private Builder(RetryPolicy existing) {
            this.maxAttempts = existing.maxAttempts;
            this.initialBackoff = existing.initialBackoff;
            this.multiplier = existing.multiplier;
            this.maxBackoff = existing.maxBackoff;
            this.jitter = existing.jitter;
            this.gateGrace = existing.gateGrace;
            this.intervals = existing.intervals;
        }

        /**
         * Attempts in all, the first one included; default 3.
         *
         * @param maxAttempts 1 (no retry) to 10
         * @return this builder
         * @throws IllegalArgumentException below 1 or above 10
         */
        public Builder maxAttempts(int maxAttempts) {
            if (maxAttempts < 1 || maxAttempts > 10) {
                throw new IllegalArgumentException(
                        "maxAttempts (" + maxAttempts + ") must be 1 to 10; every attempt may hold a"
                                + " consumer for a whole server deadline, so keep it small (the default is 3)");
            }
            this.maxAttempts = maxAttempts;
            return this;
        }

        /**
         * The wait before the first retry; default 100 ms.
         *
         * @param initialBackoff a positive duration
         * @return this builder
         */
        public Builder initialBackoff(Duration initialBackoff) {
            this.initialBackoff = positive("initialBackoff", initialBackoff);
            return this;
        }

        /**
         * The factor applied to the wait after each retry; default 2.
         *
         * @param multiplier at least 1
         * @return this builder
         * @throws IllegalArgumentException below 1
         */
        public Builder multiplier(double multiplier) {
            if (!(multiplier >= 1.0)) {
                throw new IllegalArgumentException("multiplier (" + multiplier + ") must be at least 1; use e.g. 2");
            }
            this.multiplier = multiplier;
            return this;
        }

        /**
         * The longest wait between two attempts; default 5 s.
         *
         * @param maxBackoff a positive duration, not below the initial backoff
         * @return this builder
         */
        public Builder maxBackoff(Duration maxBackoff) {
            this.maxBackoff = positive("maxBackoff", maxBackoff);
            return this;
        }

        /**
         * The randomization factor of each wait; default 0.5.
         *
         * @param jitter in [0, 1): each wait is drawn from [1 - jitter, 1 + jitter] x the exponential value
         * @return this builder
         * @throws IllegalArgumentException outside [0, 1)
         */
        public Builder jitter(double jitter) {
            if (!(jitter >= 0 && jitter < 1)) {
                throw new IllegalArgumentException("jitter (" + jitter + ") must be in [0, 1); use e.g. 0.5 so that"
                        + " consumers that failed together do not retry together");
            }
            this.jitter = jitter;
            return this;
        }

        /**
         * How long after an attempt's server deadline the overlap gate waits before asking {@code currentOp}; default
         * 100 ms.
         *
         * @param gateGrace zero or more
         * @return this builder
         * @throws IllegalArgumentException if negative
         */
        public Builder gateGrace(Duration gateGrace) {
            Objects.requireNonNull(gateGrace, "gateGrace");
            if (gateGrace.isNegative()) {
                throw new IllegalArgumentException(
                        "gateGrace (" + gateGrace + ") must not be negative; use e.g. 100 ms");
            }
            this.gateGrace = gateGrace;
            return this;
        }

        /**
         * The policy.
         *
         * @return the policy
         * @throws IllegalStateException if maxBackoff is below initialBackoff
         */
        public RetryPolicy build() {
            if (maxBackoff.compareTo(initialBackoff) < 0) {
                throw new IllegalStateException(
                        "maxBackoff (" + maxBackoff.toMillis() + " ms) must not be below initialBackoff ("
                                + initialBackoff.toMillis() + " ms); raise maxBackoff or lower initialBackoff");
            }
            return new RetryPolicy(this);
        }

        private static Duration positive(String name, Duration value) {
            Objects.requireNonNull(value, name);
            if (value.isNegative() || value.isZero()) {
                throw new IllegalArgumentException(name + " (" + value + ") must be positive");
            }
            return value;
        }
    }
}
