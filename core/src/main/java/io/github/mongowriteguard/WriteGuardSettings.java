package io.github.mongowriteguard;

import io.github.mongowriteguard.internal.CommonTags;
import io.github.mongowriteguard.internal.Durations;
import io.github.mongowriteguard.internal.copies.SettleHold;
import io.github.mongowriteguard.retry.RetryPolicy;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The guard's settings: how long the server may work on one write, and whether ordered bulks keep the driver's
 * strict ORDERED semantics.
 *
 * <p>Immutable and thread-safe. Build one with {@link #builder()}, derive a variant with {@link #builder(WriteGuardSettings)}:
 * <pre>{@code
 * WriteGuardSettings settings = WriteGuardSettings.builder()
 *         .serverDeadlineFraction(0.5)          // maxTimeMS = half the socket read timeout
 *         .build();
 * Duration deadline = settings.resolveServerDeadline(Duration.ofSeconds(30));   // 15 s
 * }</pre>
 *
 * <h2>Why a server deadline</h2>
 * A socket read timeout is the client's clock only: when it fires, the write goes on running on the server, and the
 * driver's retry sends a second copy. A server deadline ({@code maxTimeMS}) below the socket read timeout stops the
 * write on the server first, with an error the driver does not retry. See {@link #resolveServerDeadline(Duration)}.
 */
public final class WriteGuardSettings {

    /** Default of {@link #getParallelShardCommands()}: 8 per-shard commands of one call side by side. */
    public static final int DEFAULT_PARALLEL_SHARD_COMMANDS = 8;

    /** Most {@link #getParallelShardCommands()} accepts: 64. */
    public static final int MAX_PARALLEL_SHARD_COMMANDS = 64;

    /** Default of {@link #getSettleHoldMaxCopies()}: the copies of 1,000 unsettled commands. */
    public static final int DEFAULT_SETTLE_HOLD_MAX_COPIES = SettleHold.DEFAULT_MAX_COPIES;

    /** Most {@link #getSettleHoldMaxCopies()} accepts: 100,000. */
    public static final int MAX_SETTLE_HOLD_COPIES = 100_000;

    /**
     * Default of {@link #getSettleHoldMaxAge()}: 10 minutes, well inside the server's session lifetime
     * ({@code logicalSessionTimeoutMinutes}, 30 by default).
     */
    public static final Duration DEFAULT_SETTLE_HOLD_MAX_AGE = SettleHold.DEFAULT_MAX_AGE;

    /**
     * Longest {@link #getSettleHoldMaxAge()} accepts: 25 minutes, below the server's default session lifetime of 30
     * minutes, after which the server may forget the session and its statement record.
     */
    public static final Duration MAX_SETTLE_HOLD_AGE = Duration.ofMinutes(25);

    /** Default share of the socket read timeout given to the server: 2/3, i.e. 20 s for a 30 s socket timeout. */
    public static final double DEFAULT_SERVER_DEADLINE_FRACTION = 2.0 / 3.0;

    /** Server deadline used when the client has no socket read timeout and no explicit deadline is set: 10 s. */
    public static final Duration DEFAULT_SERVER_DEADLINE = Duration.ofSeconds(10);

    @Nullable
    private final Duration serverDeadline;

    private final double serverDeadlineFraction;
    private final Duration defaultServerDeadline;
    private final boolean strictOrdered;
    private final boolean lastWriteWins;
    private final int parallelShardCommands;
    private final int settleHoldMaxCopies;
    private final Duration settleHoldMaxAge;
    private final RetryPolicy retryPolicy;
    private final Map<String, String> commonTags;

    private WriteGuardSettings(Builder builder) {
        this.commonTags = builder.commonTags;
        this.lastWriteWins = builder.lastWriteWins;
        this.parallelShardCommands = builder.parallelShardCommands;
        this.settleHoldMaxCopies = builder.settleHoldMaxCopies;
        this.settleHoldMaxAge = builder.settleHoldMaxAge;
        this.serverDeadline = builder.serverDeadline;
        this.serverDeadlineFraction = builder.serverDeadlineFraction;
        this.defaultServerDeadline = builder.defaultServerDeadline;
        this.strictOrdered = builder.strictOrdered;
        this.retryPolicy = builder.retryPolicy;
    }

    /**
     * A builder with every default: deadline derived as 2/3 of the socket read timeout, 10 s without one, not strict.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * A builder starting from {@code existing}'s values.
     *
     * @param existing the settings to start from
     * @return a new builder
     */
    public static Builder builder(WriteGuardSettings existing) {
        Objects.requireNonNull(existing, "existing");
        return new Builder(existing);
    }

    /**
     * Settings with every default.
     *
     * @return the default settings
     */
    public static WriteGuardSettings defaults() {
        return builder().build();
    }

    /**
     * The explicit server deadline, if one was set; otherwise it is derived, see {@link #resolveServerDeadline}.
     *
     * @return the explicit deadline, or empty when it is derived
     */
    public Optional<Duration> getServerDeadline() {
        return Optional.ofNullable(serverDeadline);
    }

    /**
     * Share of the socket read timeout given to the server when no explicit deadline is set; default 2/3.
     *
     * @return a share strictly between 0 and 1
     */
    public double getServerDeadlineFraction() {
        return serverDeadlineFraction;
    }

    /**
     * Server deadline when there is neither an explicit deadline nor a socket read timeout; default 10 s.
     *
     * @return the fallback deadline
     */
    public Duration getDefaultServerDeadline() {
        return defaultServerDeadline;
    }

    /**
     * Whether an ordered bulk runs as the driver's ORDERED bulk, exactly as given (no rounds); default
     * {@code false}. Unordered bulks are not affected.
     *
     * @return true for the driver's ORDERED meaning
     */
    public boolean isStrictOrdered() {
        return strictOrdered;
    }

    /**
     * Whether replacements that a later full replacement or delete of their {@code _id} in the same bulk makes
     * unnecessary are left out (last write wins, see {@link Builder#lastWriteWins(boolean)}); default {@code false}.
     *
     * @return true when superseded replacements are not sent
     */
    public boolean isLastWriteWins() {
        return lastWriteWins;
    }

    /**
     * How many per-shard ORDERED commands of one call's key runs (an ordered bulk that repeats keys, on a collection
     * sharded on {@code _id}) the guard sends side by side, each on a session of its own; default
     * {@value #DEFAULT_PARALLEL_SHARD_COMMANDS}; 1 sends them one after another, as one call of the driver does.
     *
     * @return the most commands of one call in flight at once, from 1
     */
    public int getParallelShardCommands() {
        return parallelShardCommands;
    }

    /**
     * How many commands whose outcome is UNKNOWN the guard holds for {@code settle} at most, across the guard: each
     * keeps its session open (so that the server keeps its statement record) and its command's bytes. Past it the
     * oldest is released, and its writes can no longer be settled.
     *
     * @return from 0 (nothing is held: nothing can be settled) to {@value #MAX_SETTLE_HOLD_COPIES}
     */
    public int getSettleHoldMaxCopies() {
        return settleHoldMaxCopies;
    }

    /**
     * How long after its last send a command whose outcome is UNKNOWN stays held for {@code settle}; then it is
     * released and its writes can no longer be settled. Below the server's session lifetime
     * ({@code logicalSessionTimeoutMinutes}): a session the server forgot has no statement record, and a settle could
     * then apply a write a second time. With a server whose {@code logicalSessionTimeoutMinutes} is lower than 30, set
     * it well below that.
     *
     * @return the hold's age limit
     */
    public Duration getSettleHoldMaxAge() {
        return settleHoldMaxAge;
    }

    /**
     * Tags added to every meter the guard registers ({@code mongodb.guard.*}), after the guard's own; default none.
     *
     * @return the common tags, unmodifiable, in the order given
     */
    public Map<String, String> getCommonTags() {
        return commonTags;
    }

    /**
     * How writes that failed in a way that is safe to retry are retried.
     *
     * @return the retry policy
     */
    public RetryPolicy getRetryPolicy() {
        return retryPolicy;
    }

    /**
     * The server deadline ({@code maxTimeMS}) to attach to a write sent over a connection with the given socket read
     * timeout.
     *
     * <ol>
     *   <li>An explicit {@link Builder#serverDeadline(Duration) serverDeadline} is used as is; with a socket read
     *       timeout it must be below it, or the socket would time out first and the driver would resend the write
     *       while the first copy still runs.</li>
     *   <li>Otherwise, with a socket read timeout: {@code serverDeadlineFraction x socketReadTimeout}, rounded to whole
     *       milliseconds (the unit of {@code maxTimeMS}) and kept at least 1 ms below the socket read timeout.</li>
     *   <li>Otherwise {@link #getDefaultServerDeadline() defaultServerDeadline}.</li>
     * </ol>
     *
     * @param socketReadTimeout the client's socket read timeout; {@code null} or zero mean none (the driver's
     *                          {@code socketTimeoutMS=0})
     * @return a deadline of at least 1 ms
     * @throws IllegalArgumentException if {@code socketReadTimeout} is negative
     * @throws IllegalStateException    if the explicit deadline is not below the socket read timeout, or the socket read
     *                                  timeout is too short (under 2 ms) to fit a deadline below it
     */
    public Duration resolveServerDeadline(@Nullable Duration socketReadTimeout) {
        if (socketReadTimeout != null && socketReadTimeout.isNegative()) {
            throw new IllegalArgumentException("socketReadTimeout (" + Durations.format(socketReadTimeout)
                    + ") must not be negative; pass 0 or null for no socket read timeout");
        }
        boolean hasSocketTimeout = socketReadTimeout != null && !socketReadTimeout.isZero();
        if (serverDeadline != null) {
            if (hasSocketTimeout && serverDeadline.compareTo(socketReadTimeout) >= 0) {
                throw new IllegalStateException("serverDeadline (" + Durations.format(serverDeadline)
                        + ") must be below the socket read timeout (" + Durations.format(socketReadTimeout)
                        + "); lower it or raise socketTimeout");
            }
            return serverDeadline;
        }
        if (!hasSocketTimeout) {
            return defaultServerDeadline;
        }
        long socketMillis = socketReadTimeout.toMillis();
        if (socketMillis < 2) {
            throw new IllegalStateException("the socket read timeout (" + Durations.format(socketReadTimeout)
                    + ") is too short to fit a server deadline of whole milliseconds below it; raise socketTimeout");
        }
        // Rounded, not truncated: 30 s x 2/3 is 19999.99... ms in floating point and should read 20 s.
        long millis = Math.round(socketMillis * serverDeadlineFraction);
        millis = Math.max(1, Math.min(millis, socketMillis - 1));
        return Duration.ofMillis(millis);
    }

    @Override
    public boolean equals(Object o) {
        return this == o
                || o instanceof WriteGuardSettings that
                        && Double.compare(serverDeadlineFraction, that.serverDeadlineFraction) == 0
                        && strictOrdered == that.strictOrdered
                        && lastWriteWins == that.lastWriteWins
                        && parallelShardCommands == that.parallelShardCommands
                        && settleHoldMaxCopies == that.settleHoldMaxCopies
                        && settleHoldMaxAge.equals(that.settleHoldMaxAge)
                        && Objects.equals(serverDeadline, that.serverDeadline)
                        && retryPolicy.equals(that.retryPolicy)
                        && defaultServerDeadline.equals(that.defaultServerDeadline)
                        && commonTags.equals(that.commonTags);
    }

    @Override
    public int hashCode() {
        return Objects.hash(
                serverDeadline,
                serverDeadlineFraction,
                defaultServerDeadline,
                strictOrdered,
                lastWriteWins,
                parallelShardCommands,
                settleHoldMaxCopies,
                settleHoldMaxAge,
                retryPolicy,
                commonTags);
    }

    @Override
    public String toString() {
        return "WriteGuardSettings{serverDeadline="
                + (serverDeadline == null ? "derived" : Durations.format(serverDeadline))
                + ", serverDeadlineFraction=" + serverDeadlineFraction
                + ", defaultServerDeadline=" + Durations.format(defaultServerDeadline)
                + ", strictOrdered=" + strictOrdered
                + ", lastWriteWins=" + lastWriteWins
                + ", parallelShardCommands=" + parallelShardCommands
                + ", settleHold=" + settleHoldMaxCopies + " copies, " + Durations.format(settleHoldMaxAge)
                + ", retryPolicy=" + retryPolicy
                + (commonTags.isEmpty() ? "" : ", commonTags=" + commonTags) + '}';
    }

    /**
     * Builds {@link WriteGuardSettings}. Each setter checks its own value and throws {@link IllegalArgumentException}
     * naming the setting, the bad value and a fix. Not thread-safe.
     */
    public static final class Builder {

        @Nullable
        private Duration serverDeadline;

        private double serverDeadlineFraction = DEFAULT_SERVER_DEADLINE_FRACTION;
        private Duration defaultServerDeadline = DEFAULT_SERVER_DEADLINE;
        private boolean strictOrdered;
        private boolean lastWriteWins;
        private int parallelShardCommands = DEFAULT_PARALLEL_SHARD_COMMANDS;
        private int settleHoldMaxCopies = DEFAULT_SETTLE_HOLD_MAX_COPIES;
        private Duration settleHoldMaxAge = DEFAULT_SETTLE_HOLD_MAX_AGE;
        private RetryPolicy retryPolicy = RetryPolicy.defaults();
        private Map<String, String> commonTags = Map.of();

        private Builder() {}

        private Builder(WriteGuardSettings existing) {
            this.serverDeadline = existing.serverDeadline;
            this.serverDeadlineFraction = existing.serverDeadlineFraction;
            this.defaultServerDeadline = existing.defaultServerDeadline;
            this.strictOrdered = existing.strictOrdered;
            this.lastWriteWins = existing.lastWriteWins;
            this.parallelShardCommands = existing.parallelShardCommands;
            this.settleHoldMaxCopies = existing.settleHoldMaxCopies;
            this.settleHoldMaxAge = existing.settleHoldMaxAge;
            this.retryPolicy = existing.retryPolicy;
            this.commonTags = existing.commonTags;
        }

        /**
         * An explicit server deadline for every write, instead of one derived from the socket read timeout.
         *
         * @param serverDeadline at least 1 ms, or {@code null} to derive it again (the default)
         * @throws IllegalArgumentException if zero, negative or under 1 ms ({@code maxTimeMS} counts whole
         *                                  milliseconds and 0 means no limit)
         * @return this builder
         */
        public Builder serverDeadline(@Nullable Duration serverDeadline) {
            if (serverDeadline != null) {
                requireAtLeastOneMilli("serverDeadline", serverDeadline);
            }
            this.serverDeadline = serverDeadline;
            return this;
        }

        /**
         * Share of the socket read timeout given to the server when no explicit deadline is set; default 2/3.
         *
         * @throws IllegalArgumentException unless strictly between 0 and 1
         * @param serverDeadlineFraction the share, strictly between 0 and 1
         * @return this builder
         */
        public Builder serverDeadlineFraction(double serverDeadlineFraction) {
            if (!(serverDeadlineFraction > 0.0 && serverDeadlineFraction < 1.0)) {
                throw new IllegalArgumentException(
                        "serverDeadlineFraction (" + serverDeadlineFraction + ") must be in (0, 1); use e.g. 0.66");
            }
            this.serverDeadlineFraction = serverDeadlineFraction;
            return this;
        }

        /**
         * Server deadline used when the client has no socket read timeout and no explicit deadline is set;
         * default 10 s.
         *
         * @throws IllegalArgumentException if null, zero, negative or under 1 ms
         * @param defaultServerDeadline the fallback deadline, at least 1 ms
         * @return this builder
         */
        public Builder defaultServerDeadline(Duration defaultServerDeadline) {
            if (defaultServerDeadline == null) {
                throw new IllegalArgumentException(
                        "defaultServerDeadline must not be null; use e.g. Duration.ofSeconds(10)");
            }
            requireAtLeastOneMilli("defaultServerDeadline", defaultServerDeadline);
            this.defaultServerDeadline = defaultServerDeadline;
            return this;
        }

        /**
         * Run ordered bulks as the driver's ORDERED bulk, exactly as given; default {@code false}.
         * Costs about one mongos-to-shard round trip per change of target shard.
         *
         * @param strictOrdered true for the driver's ORDERED bulk
         * @return this builder
         */
        public Builder strictOrdered(boolean strictOrdered) {
            this.strictOrdered = strictOrdered;
            return this;
        }

        /**
         * Leave out the replacements of an {@code _id} that a later full replacement ({@code ReplaceOneModel} upsert on
         * exactly {@code {_id: v}}) or delete ({@code DeleteOneModel} on exactly {@code {_id: v}}) of that {@code _id}
         * in the same bulk makes unnecessary (last write wins, as the articles de-duplicate); default {@code false},
         * every write sent. A superseded write's outcome is {@code SUPERSEDED}, naming the write that replaced it,
         * never APPLIED. What is lost: a superseded write's own error is never seen, its counts are not counted, and if
         * the write that superseded it fails, the superseded one was not applied either. Applies to bulks planned in
         * rounds (unordered, or ordered with every write keyed), not to an ordered bulk kept in the caller's order.
         *
         * @param lastWriteWins true to leave superseded replacements out
         * @return this builder
         */
        public Builder lastWriteWins(boolean lastWriteWins) {
            this.lastWriteWins = lastWriteWins;
            return this;
        }

        /**
         * How many per-shard ORDERED commands of key runs one call sends side by side; default
         * {@value #DEFAULT_PARALLEL_SHARD_COMMANDS}. An ordered bulk that repeats keys on a collection sharded on
         * {@code {_id: "hashed"}} or {@code {_id: 1}} sends each shard's key runs as one ORDERED command; mongos runs
         * the child batches of one ORDERED command one after another, so the guard sends these commands at once, each
         * on a session of its own, the calling thread one and the guard's daemon threads
         * ({@code mongo-write-guard-shard-sender-N}, at most this value minus one for the whole guard) the others.
         * Not with the caller's {@code ClientSession}, which serves one command at a time. 1 sends them one after
         * another on the calling thread.
         *
         * @param parallelShardCommands from 1 to {@value #MAX_PARALLEL_SHARD_COMMANDS}
         * @return this builder
         * @throws IllegalArgumentException if it is below 1 or above {@value #MAX_PARALLEL_SHARD_COMMANDS}
         */
        public Builder parallelShardCommands(int parallelShardCommands) {
            if (parallelShardCommands < 1 || parallelShardCommands > MAX_PARALLEL_SHARD_COMMANDS) {
                throw new IllegalArgumentException("parallelShardCommands (" + parallelShardCommands
                        + ") must be from 1 to " + MAX_PARALLEL_SHARD_COMMANDS
                        + "; use 1 to send a call's per-shard commands one after another, or about the number of"
                        + " shards to send them side by side");
            }
            this.parallelShardCommands = parallelShardCommands;
            return this;
        }

        /**
         * How many commands whose outcome is UNKNOWN the guard holds for {@code settle}, and for how long after their
         * last send; default {@value #DEFAULT_SETTLE_HOLD_MAX_COPIES} commands, 10 minutes. A held command keeps its
         * session (the server keeps the statement record of a session while it lives) and its bytes.
         *
         * @param maxCopies from 0 (hold nothing: no write can be settled) to {@value #MAX_SETTLE_HOLD_COPIES}
         * @param maxAge    from 1 s to 25 minutes ({@link #MAX_SETTLE_HOLD_AGE}), below the server's session lifetime
         * @return this builder
         * @throws IllegalArgumentException if either is out of range
         */
        public Builder settleHold(int maxCopies, Duration maxAge) {
            Objects.requireNonNull(maxAge, "maxAge");
            if (maxCopies < 0 || maxCopies > MAX_SETTLE_HOLD_COPIES) {
                throw new IllegalArgumentException("settleHold maxCopies (" + maxCopies + ") must be from 0 to "
                        + MAX_SETTLE_HOLD_COPIES + "; 0 holds nothing, so that no UNKNOWN write can be settled");
            }
            if (maxAge.compareTo(Duration.ofSeconds(1)) < 0 || maxAge.compareTo(MAX_SETTLE_HOLD_AGE) > 0) {
                throw new IllegalArgumentException("settleHold maxAge (" + Durations.format(maxAge)
                        + ") must be from 1 s to " + Durations.format(MAX_SETTLE_HOLD_AGE)
                        + ": below the server's session lifetime (logicalSessionTimeoutMinutes, 30 by default), after"
                        + " which the server may forget the statement record a settle reads");
            }
            this.settleHoldMaxCopies = maxCopies;
            this.settleHoldMaxAge = maxAge;
            return this;
        }

        /**
         * How the guard retries writes that failed in a way that is safe to retry; default
         * {@link RetryPolicy#defaults()} (3 attempts, exponential backoff with jitter). {@link RetryPolicy#none()}
         * sends every write once.
         *
         * @param retryPolicy the policy
         * @return this builder
         */
        public Builder retryPolicy(RetryPolicy retryPolicy) {
            this.retryPolicy = Objects.requireNonNull(retryPolicy, "retryPolicy");
            return this;
        }

        /**
         * Tags added to every meter the guard registers ({@code mongodb.guard.*}), e.g. {@code Map.of("app",
         * "orders")}: bounded values you choose, never document values, ids or connection strings; default none.
         * Micrometer's {@code registry.config().commonTags(...)} tags every meter of the registry instead.
         *
         * @param commonTags the tags, copied
         * @return this builder
         * @throws IllegalArgumentException if the map, a key or a value is null or blank, or a key is one the guard's
         *                                  meters already carry ({@code namespace}, {@code operation}, {@code outcome},
         *                                  ...)
         */
        public Builder commonTags(Map<String, String> commonTags) {
            this.commonTags = CommonTags.check("commonTags", commonTags);
            return this;
        }

        /**
         * The settings.
         *
         * @return the settings
         * @throws IllegalStateException if both {@code strictOrdered} and {@code lastWriteWins} are set
         */
        public WriteGuardSettings build() {
            if (strictOrdered && lastWriteWins) {
                throw new IllegalStateException("lastWriteWins (true) cannot be combined with strictOrdered (true):"
                        + " strictOrdered sends every write exactly as the driver does, lastWriteWins leaves superseded"
                        + " replacements out; set only one of them");
            }
            return new WriteGuardSettings(this);
        }

        private static void requireAtLeastOneMilli(String name, Duration value) {
            if (value.isNegative() || value.isZero()) {
                throw new IllegalArgumentException(
                        name + " (" + Durations.format(value) + ") must be positive; use e.g. Duration.ofSeconds(20)");
            }
            if (value.compareTo(Duration.ofMillis(1)) < 0) {
                throw new IllegalArgumentException(name + " (" + Durations.format(value)
                        + ") must be at least 1 ms: maxTimeMS counts whole milliseconds and 0 means no limit;"
                        + " use e.g. Duration.ofMillis(1)");
            }
        }
    }
}
