package io.github.mongowriteguard.spring.boot;

import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.retry.RetryPolicy;
import io.github.mongowriteguard.spring.data.TemplateWriteGroup;
import java.time.Duration;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The guard's settings as Spring Boot properties under {@code mongo.write-guard}. A property left unset keeps the
 * core's default ({@link WriteGuardSettings}, {@link RetryPolicy}); the core validates every value and its message
 * names the setting. A name under {@code mongo.write-guard} that is none of these properties (a misspelt
 * {@code retry.max-attemps}) stops the application at startup, as an invalid value does: silently keeping the default
 * would hide it.
 *
 * <pre>
 * mongo.write-guard.server-deadline-fraction=0.5
 * mongo.write-guard.retry.max-attempts=4
 * mongo.write-guard.retry.initial-backoff=200ms
 * </pre>
 */
@ConfigurationProperties(prefix = "mongo.write-guard", ignoreUnknownFields = false)
public class WriteGuardProperties {
    /** The prefix of every property, with its trailing dot. */
    static final String PREFIX = "mongo.write-guard.";

    private static final String RETRY = PREFIX + "retry.";

    /** Whether to guard the auto-configured client and MongoTemplate; false gives Spring Boot's plain MongoTemplate. */
    private boolean enabled = true;

    /** Explicit server deadline (maxTimeMS) for every write; must be below the socket read timeout. Default: derived from the socket read timeout. */
    private @Nullable Duration serverDeadline;

    /** Share of the socket read timeout given to the server when no explicit deadline is set, in (0, 1). Default 2/3. */
    private @Nullable Double serverDeadlineFraction;

    /** Server deadline when the client has no socket read timeout and no explicit deadline is set. Default 10s. */
    private @Nullable Duration defaultServerDeadline;

    /** Run ordered bulks as the driver's ORDERED bulk, exactly as given (about one round trip per shard change). Default false. */
    private @Nullable Boolean strictOrdered;

    /**
     * Leave out a bulk's replacements of an _id that a later full replacement (upsert) or delete of that _id in the same
     * bulk makes unnecessary (last write wins); their outcome is SUPERSEDED. Default false: every write is sent.
     */
    private @Nullable Boolean lastWriteWins;

    /**
     * How many per-shard ORDERED commands of one ordered bulk's repeated keys are sent side by side, each on a session
     * of its own; 1 sends them one after another. Default 8.
     */
    private @Nullable Integer parallelShardCommands;

    /**
     * The number of shards the round-trip estimate ({@code mongodb.guard.roundtrips.avoided}) assumes; 0 (the default)
     * registers no such meter.
     */
    private int roundTripEstimateShards;

    private final Retry retry = new Retry();

    private final SettleHold settleHold = new SettleHold();

    /**
     * Per group of MongoTemplate writes (insert, replace, update, remove, find-and-modify, bulk), where they go:
     * guarded (the default) or plain (the driver, as Spring Data sends them), e.g. {@code template.update=plain}.
     */
    private final Map<TemplateWriteGroup, TemplateWriteGroup.Mode> template = new EnumMap<>(TemplateWriteGroup.class);

    /** {@return whether to guard the auto-configured client and MongoTemplate} */
    public boolean isEnabled() {
        return enabled;
    }

    /**
     * Sets whether to guard the auto-configured client and MongoTemplate.
     *
     * @param enabled false gives Spring Boot's plain MongoTemplate
     */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /**
     * {@return the explicit server deadline (maxTimeMS) for every write, or null to derive it from the socket read timeout}
     */
    public @Nullable Duration getServerDeadline() {
        return serverDeadline;
    }

    /**
     * Sets an explicit server deadline for every write; it must be below the socket read timeout.
     *
     * @param serverDeadline the deadline, or null to derive it from the socket read timeout
     */
    public void setServerDeadline(@Nullable Duration serverDeadline) {
        this.serverDeadline = serverDeadline;
    }

    /** {@return the share of the socket read timeout given to the server, or null for the default 2/3} */
    public @Nullable Double getServerDeadlineFraction() {
        return serverDeadlineFraction;
    }

    /**
     * Sets the share of the socket read timeout given to the server when no explicit deadline is set.
     *
     * @param serverDeadlineFraction a share in (0, 1), or null for the default 2/3
     */
    public void setServerDeadlineFraction(@Nullable Double serverDeadlineFraction) {
        this.serverDeadlineFraction = serverDeadlineFraction;
    }

    /** {@return the server deadline used when the client has no socket read timeout, or null for the default 10 s} */
    public @Nullable Duration getDefaultServerDeadline() {
        return defaultServerDeadline;
    }

    /**
     * Sets the server deadline used when the client has no socket read timeout and no explicit deadline is set.
     *
     * @param defaultServerDeadline the deadline, or null for the default 10 s
     */
    public void setDefaultServerDeadline(@Nullable Duration defaultServerDeadline) {
        this.defaultServerDeadline = defaultServerDeadline;
    }

    /** {@return whether ordered bulks run as the driver's ORDERED bulk, or null for the default false} */
    public @Nullable Boolean getStrictOrdered() {
        return strictOrdered;
    }

    /**
     * Sets whether ordered bulks run as the driver's ORDERED bulk, exactly as given.
     *
     * @param strictOrdered true for the driver's ORDERED meaning (and its round trips), or null for the default false
     */
    public void setStrictOrdered(@Nullable Boolean strictOrdered) {
        this.strictOrdered = strictOrdered;
    }

    /** {@return whether superseded replacements are left out (last write wins), or null for the default false} */
    public @Nullable Boolean getLastWriteWins() {
        return lastWriteWins;
    }

    /**
     * Sets whether a bulk's replacements that a later full replacement or delete of the same _id makes unnecessary are
     * left out.
     *
     * @param lastWriteWins true to leave them out (their outcome is SUPERSEDED), or null for the default false
     */
    public void setLastWriteWins(@Nullable Boolean lastWriteWins) {
        this.lastWriteWins = lastWriteWins;
    }

    /** {@return how many per-shard commands of one bulk are sent side by side, or null for the default 8} */
    public @Nullable Integer getParallelShardCommands() {
        return parallelShardCommands;
    }

    /**
     * Sets how many per-shard ORDERED commands of one ordered bulk's repeated keys are sent side by side.
     *
     * @param parallelShardCommands from 1 (one after another) to 64, or null for the default 8
     */
    public void setParallelShardCommands(@Nullable Integer parallelShardCommands) {
        this.parallelShardCommands = parallelShardCommands;
    }

    /** {@return the shard count the {@code mongodb.guard.roundtrips.avoided} estimate assumes; 0 for no such meter} */
    public int getRoundTripEstimateShards() {
        return roundTripEstimateShards;
    }

    /**
     * Sets the number of shards the application's sharded collections are spread over, for the meter
     * {@code mongodb.guard.roundtrips.avoided}: an estimate of the round trips the guard's plans save against the
     * driver's ORDERED bulks (a hashed shard key, writes scattered uniformly).
     *
     * @param roundTripEstimateShards the shard count; 0 (the default) or 1 for no such meter
     */
    public void setRoundTripEstimateShards(int roundTripEstimateShards) {
        this.roundTripEstimateShards = roundTripEstimateShards;
    }

    /** {@return the settle-hold properties ({@code mongo.write-guard.settle-hold.*})} */
    public SettleHold getSettleHold() {
        return settleHold;
    }

    /** {@return the retry properties ({@code mongo.write-guard.retry.*})} */
    public Retry getRetry() {
        return retry;
    }

    /** {@return the mode of each group of MongoTemplate writes set in {@code mongo.write-guard.template.*}} */
    public Map<TemplateWriteGroup, TemplateWriteGroup.Mode> getTemplate() {
        return template;
    }

    /**
     * The groups set to {@code plain}.
     *
     * @return the groups whose writes go to the driver
     */
    public Set<TemplateWriteGroup> plainTemplateGroups() {
        Set<TemplateWriteGroup> plain = EnumSet.noneOf(TemplateWriteGroup.class);
        template.forEach((group, mode) -> {
            if (mode == TemplateWriteGroup.Mode.PLAIN) {
                plain.add(group);
            }
        });
        return plain;
    }

    /**
     * The core settings these properties describe; unset properties keep the core's defaults.
     *
     * @return the settings
     */
    public WriteGuardSettings toSettings() {
        WriteGuardSettings.Builder builder = WriteGuardSettings.builder();
        GuardProperty.apply(PREFIX + "server-deadline", serverDeadline, builder::serverDeadline);
        GuardProperty.apply(
                PREFIX + "server-deadline-fraction", serverDeadlineFraction, builder::serverDeadlineFraction);
        GuardProperty.apply(PREFIX + "default-server-deadline", defaultServerDeadline, builder::defaultServerDeadline);
        GuardProperty.apply(PREFIX + "strict-ordered", strictOrdered, builder::strictOrdered);
        GuardProperty.apply(PREFIX + "last-write-wins", lastWriteWins, builder::lastWriteWins);
        GuardProperty.apply(PREFIX + "parallel-shard-commands", parallelShardCommands, builder::parallelShardCommands);
        if (settleHold.maxCopies != null || settleHold.maxAge != null) {
            GuardProperty.apply(
                    PREFIX + "settle-hold",
                    settleHold,
                    hold -> builder.settleHold(
                            hold.maxCopies == null ? WriteGuardSettings.DEFAULT_SETTLE_HOLD_MAX_COPIES : hold.maxCopies,
                            hold.maxAge == null ? WriteGuardSettings.DEFAULT_SETTLE_HOLD_MAX_AGE : hold.maxAge));
        }
        builder.retryPolicy(retry.toPolicy());
        try {
            return builder.build();
        } catch (IllegalStateException refused) { // the one rule joining two settings: strictOrdered with lastWriteWins
            throw new WriteGuardConfigurationException(
                    PREFIX + "last-write-wins",
                    PREFIX + "strict-ordered=true and " + PREFIX + "last-write-wins=true cannot be combined:"
                            + " strict-ordered sends every write exactly as the driver does, last-write-wins leaves"
                            + " superseded replacements out",
                    "Set only one of " + PREFIX + "strict-ordered and " + PREFIX + "last-write-wins to true;"
                            + " mongo.write-guard.enabled=false turns the guard off",
                    refused);
        }
    }

    /**
     * How many commands whose outcome is UNKNOWN the guard holds, with their session, for {@code settle}, and for how
     * long after their last send ({@code WriteGuardSettings.Builder.settleHold}).
     */
    public static class SettleHold {
        /** Most commands held at once, 0 to 100000; 0 holds none (nothing can be settled). Default 1000. */
        private @Nullable Integer maxCopies;

        /** How long after its last send a command stays held, 1s to 25m (below the server's session lifetime). Default 10m. */
        private @Nullable Duration maxAge;

        /** {@return the most commands held, or null for the default 1000} */
        public @Nullable Integer getMaxCopies() {
            return maxCopies;
        }

        /**
         * Sets the most commands held at once.
         *
         * @param maxCopies 0 to 100000, or null for the default 1000
         */
        public void setMaxCopies(@Nullable Integer maxCopies) {
            this.maxCopies = maxCopies;
        }

        /** {@return how long a command stays held after its last send, or null for the default 10 minutes} */
        public @Nullable Duration getMaxAge() {
            return maxAge;
        }

        /**
         * Sets how long a command stays held after its last send.
         *
         * @param maxAge 1s to 25m, or null for the default 10 minutes
         */
        public void setMaxAge(@Nullable Duration maxAge) {
            this.maxAge = maxAge;
        }

        @Override
        public String toString() {
            return "maxCopies=" + maxCopies + ", maxAge=" + maxAge;
        }
    }

    /** How the guard retries writes that failed in a way that is safe to retry ({@link RetryPolicy}). */
    public static class Retry {
        /** Attempts in all, the first included, 1 to 10; 1 means no retry. Default 3. */
        private @Nullable Integer maxAttempts;

        /** Wait before the first retry. Default 100ms. */
        private @Nullable Duration initialBackoff;

        /** Factor applied to the wait after each retry, at least 1. Default 2. */
        private @Nullable Double multiplier;

        /** Longest wait between two attempts. Default 5s. */
        private @Nullable Duration maxBackoff;

        /** Randomization factor in [0, 1): each wait is drawn from [1 - jitter, 1 + jitter] x the exponential value. Default 0.5. */
        private @Nullable Double jitter;

        /** How long after an attempt's server deadline the overlap gate waits before checking that no copy still runs. Default 100ms. */
        private @Nullable Duration gateGrace;

        /** {@return the attempts in all, the first included, or null for the default 3} */
        public @Nullable Integer getMaxAttempts() {
            return maxAttempts;
        }

        /**
         * Sets the attempts in all, the first included.
         *
         * @param maxAttempts 1 to 10 (1: no retry), or null for the default 3
         */
        public void setMaxAttempts(@Nullable Integer maxAttempts) {
            this.maxAttempts = maxAttempts;
        }

        /** {@return the wait before the first retry, or null for the default 100 ms} */
        public @Nullable Duration getInitialBackoff() {
            return initialBackoff;
        }

        /**
         * Sets the wait before the first retry.
         *
         * @param initialBackoff the wait, or null for the default 100 ms
         */
        public void setInitialBackoff(@Nullable Duration initialBackoff) {
            this.initialBackoff = initialBackoff;
        }

        /** {@return the factor applied to the wait after each retry, or null for the default 2} */
        public @Nullable Double getMultiplier() {
            return multiplier;
        }

        /**
         * Sets the factor applied to the wait after each retry.
         *
         * @param multiplier at least 1, or null for the default 2
         */
        public void setMultiplier(@Nullable Double multiplier) {
            this.multiplier = multiplier;
        }

        /** {@return the longest wait between two attempts, or null for the default 5 s} */
        public @Nullable Duration getMaxBackoff() {
            return maxBackoff;
        }

        /**
         * Sets the longest wait between two attempts.
         *
         * @param maxBackoff the longest wait, or null for the default 5 s
         */
        public void setMaxBackoff(@Nullable Duration maxBackoff) {
            this.maxBackoff = maxBackoff;
        }

        /** {@return the randomization factor of each wait, or null for the default 0.5} */
        public @Nullable Double getJitter() {
            return jitter;
        }

        /**
         * Sets the randomization factor: each wait is drawn from [1 - jitter, 1 + jitter] x the exponential value.
         *
         * @param jitter in [0, 1), or null for the default 0.5
         */
        public void setJitter(@Nullable Double jitter) {
            this.jitter = jitter;
        }

        /**
         * {@return how long after an attempt's server deadline the overlap gate waits, or null for the default 100 ms}
         */
        public @Nullable Duration getGateGrace() {
            return gateGrace;
        }

        /**
         * Sets how long after an attempt's server deadline the overlap gate waits before checking that no copy still runs.
         *
         * @param gateGrace the grace, or null for the default 100 ms
         */
        public void setGateGrace(@Nullable Duration gateGrace) {
            this.gateGrace = gateGrace;
        }

        /**
         * The core policy; unset properties keep {@link RetryPolicy#defaults()}.
         *
         * @return the policy, validated by the core
         */
        public RetryPolicy toPolicy() {
            RetryPolicy.Builder builder = RetryPolicy.builder();
            GuardProperty.apply(RETRY + "max-attempts", maxAttempts, builder::maxAttempts);
            GuardProperty.apply(RETRY + "initial-backoff", initialBackoff, builder::initialBackoff);
            GuardProperty.apply(RETRY + "multiplier", multiplier, builder::multiplier);
            GuardProperty.apply(RETRY + "max-backoff", maxBackoff, builder::maxBackoff);
            GuardProperty.apply(RETRY + "jitter", jitter, builder::jitter);
            GuardProperty.apply(RETRY + "gate-grace", gateGrace, builder::gateGrace);
            try {
                return builder.build();
            } catch (IllegalStateException refused) { // the one rule joining two values: maxBackoff >= initialBackoff
                throw WriteGuardConfigurationException.invalidProperty(
                        RETRY + "max-backoff", maxBackoff != null ? maxBackoff : "5s (default)", refused);
            }
        }
    }
}
