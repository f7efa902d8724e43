package io.github.mongowriteguard.read;

import com.mongodb.ReadPreference;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Immutable options of {@link GuardedReads}. Degraded (approximate) reads are off unless asked for.
 *
 * <pre>{@code
 * ReadGuardOptions options = ReadGuardOptions.builder()
 *     .degradedReads(true)                          // inventory screens may show approximate stock
 *     .normalReadTimeout(Duration.ofSeconds(2))     // maxTimeMS of the exact read
 *     .build();
 * }</pre>
 */
public final class ReadGuardOptions {
    private static final ReadGuardOptions DEFAULTS = builder().build();

    private final boolean degradedReads;
    private final Duration normalReadTimeout;
    private final Duration degradedReadTimeout;
    private final @Nullable ReadPreference degradedReadPreference;
    private final Duration expectFailureFor;
    private final ReadGuardListener listener;
    private final Clock clock;

    private ReadGuardOptions(Builder builder) {
        this.degradedReads = builder.degradedReads;
        this.normalReadTimeout = builder.normalReadTimeout;
        this.degradedReadTimeout = builder.degradedReadTimeout;
        this.degradedReadPreference = builder.degradedReadPreference;
        this.expectFailureFor = builder.expectFailureFor;
        this.listener = builder.listener;
        this.clock = builder.clock;
    }

    /**
     * Degraded reads off, 5 s for each read, 30 s of expected failure after a stale signal.
     *
     * @return the default options
     */
    public static ReadGuardOptions defaults() {
        return DEFAULTS;
    }

    /** {@return a builder with every default} */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * {@return a builder starting from {@code existing}'s values}
     *
     * @param existing the options to start from
     */
    public static Builder builder(ReadGuardOptions existing) {
        return new Builder(existing);
    }

    /**
     * Whether reads may fall back to approximate answers, default false.
     *
     * @return true when approximate answers are allowed
     */
    public boolean isDegradedReads() {
        return degradedReads;
    }

    /**
     * The server deadline ({@code maxTimeMS}) of the normal, exact read, default 5 s.
     *
     * @return the deadline of the exact read
     */
    public Duration getNormalReadTimeout() {
        return normalReadTimeout;
    }

    /**
     * The server deadline of the degraded read, default 5 s.
     *
     * @return the deadline of the degraded read
     */
    public Duration getDegradedReadTimeout() {
        return degradedReadTimeout;
    }

    /**
     * Where degraded reads go; null (the default) means the collection's own read preference when it is not
     * {@code primary}, else {@code secondaryPreferred}.
     *
     * @return the read preference of degraded reads, or null
     */
    public @Nullable ReadPreference getDegradedReadPreference() {
        return degradedReadPreference;
    }

    /**
     * After a normal read of a collection failed with a stale signal, how long reads of it go straight to the
     * degraded path before the normal read is tried again, default 30 s (the refresh limit of a secondary).
     *
     * @return how long a stale signal sends reads straight to the degraded path
     */
    public Duration getExpectFailureFor() {
        return expectFailureFor;
    }

    /** {@return the listener told of stale signals and degraded reads (a no-op by default)} */
    public ReadGuardListener getListener() {
        return listener;
    }

    /** {@return the clock for {@link #getExpectFailureFor()}} */
    public Clock getClock() {
        return clock;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof ReadGuardOptions other)) {
            return false;
        }
        return degradedReads == other.degradedReads
                && normalReadTimeout.equals(other.normalReadTimeout)
                && degradedReadTimeout.equals(other.degradedReadTimeout)
                && Objects.equals(degradedReadPreference, other.degradedReadPreference)
                && expectFailureFor.equals(other.expectFailureFor)
                && listener.equals(other.listener)
                && clock.equals(other.clock);
    }

    @Override
    public int hashCode() {
        return Objects.hash(
                degradedReads,
                normalReadTimeout,
                degradedReadTimeout,
                degradedReadPreference,
                expectFailureFor,
                listener,
                clock);
    }

    @Override
    public String toString() {
        return "ReadGuardOptions{degradedReads=" + degradedReads + ", normalReadTimeout=" + normalReadTimeout
                + ", degradedReadTimeout=" + degradedReadTimeout + ", degradedReadPreference=" + degradedReadPreference
                + ", expectFailureFor=" + expectFailureFor + ", listener=" + listener + "}";
    }

    /** Builds {@link ReadGuardOptions}. */
    public static final class Builder {
        private boolean degradedReads;
        private Duration normalReadTimeout = Duration.ofSeconds(5);
        private Duration degradedReadTimeout = Duration.ofSeconds(5);
        private @Nullable ReadPreference degradedReadPreference;
        private Duration expectFailureFor = Duration.ofSeconds(30);
        private ReadGuardListener listener = ReadGuardListener.NONE;
        private Clock clock = Clock.systemUTC();

        private Builder() {}

        private Builder(ReadGuardOptions existing) {
            this.degradedReads = existing.degradedReads;
            this.normalReadTimeout = existing.normalReadTimeout;
            this.degradedReadTimeout = existing.degradedReadTimeout;
            this.degradedReadPreference = existing.degradedReadPreference;
            this.expectFailureFor = existing.expectFailureFor;
            this.listener = existing.listener;
            this.clock = existing.clock;
        }

        /**
         * Opt in to approximate answers for reads that can accept them.
         *
         * @param enabled true to allow approximate answers
         * @return this builder
         */
        public Builder degradedReads(boolean enabled) {
            this.degradedReads = enabled;
            return this;
        }

        /**
         * The server deadline of the normal, exact read; default 5 s.
         *
         * @param timeout a positive duration
         * @return this builder
         * @throws IllegalArgumentException unless positive
         */
        public Builder normalReadTimeout(Duration timeout) {
            this.normalReadTimeout = positive("normalReadTimeout", timeout);
            return this;
        }

        /**
         * The server deadline of the degraded read; default 5 s.
         *
         * @param timeout a positive duration
         * @return this builder
         * @throws IllegalArgumentException unless positive
         */
        public Builder degradedReadTimeout(Duration timeout) {
            this.degradedReadTimeout = positive("degradedReadTimeout", timeout);
            return this;
        }

        /**
         * Where degraded reads go (the driver's class, immutable); default: the collection's own read preference when it
         * is not {@code primary}, else {@code secondaryPreferred}.
         *
         * @param preference a read preference other than {@code primary}, or null for the default
         * @return this builder
         * @throws IllegalArgumentException for {@code primary}: degraded reads are for secondaries
         */
        public Builder degradedReadPreference(@Nullable ReadPreference preference) {
            if (preference != null && preference.equals(ReadPreference.primary())) {
                throw new IllegalArgumentException(
                        "degradedReadPreference (primary) must name secondaries: degraded"
                                + " reads use readConcern \"available\" on secondaries; use secondary() or secondaryPreferred()");
            }
            this.degradedReadPreference = preference;
            return this;
        }

        /**
         * After a stale signal, how long reads go straight to the degraded path; default 30 s.
         *
         * @param duration zero to always try the normal read first
         * @return this builder
         * @throws IllegalArgumentException if negative
         */
        public Builder expectFailureFor(Duration duration) {
            Objects.requireNonNull(duration, "expectFailureFor");
            if (duration.isNegative()) {
                throw new IllegalArgumentException("expectFailureFor (" + duration + ") must not be negative; use"
                        + " Duration.ZERO to always try the normal read first");
            }
            this.expectFailureFor = duration;
            return this;
        }

        /**
         * Who is told of stale signals, timeouts and degraded reads, e.g. {@link MicrometerReadMetrics}.
         *
         * @param listener the listener
         * @return this builder
         */
        public Builder listener(ReadGuardListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * The clock for {@link #expectFailureFor}, default the system clock.
         *
         * @param clock the clock
         * @return this builder
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * The options.
         *
         * @return the options
         * @throws IllegalStateException when a degraded read preference is set but degraded reads are off
         */
        public ReadGuardOptions build() {
            if (degradedReadPreference != null && !degradedReads) {
                throw new IllegalStateException("degradedReadPreference (" + degradedReadPreference + ") is set but"
                        + " degradedReads is off; turn degradedReads on or drop the preference");
            }
            return new ReadGuardOptions(this);
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
