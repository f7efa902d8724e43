package io.github.mongowriteguard.retry;

import java.time.Duration;
import java.util.Objects;

/**
 * The check for consumer-style callers (Kafka listeners): one poll's records, each retried to the end, must fit in
 * the poll interval, or the consumer is thrown out of its group and the records are delivered again elsewhere:
 * {@code max.poll.records x (attempts x longest attempt + sum of backoffs + gate waits) < max.poll.interval.ms}.
 *
 * <pre>{@code
 * RetryBudget.forConsumer(500, Duration.ofMinutes(5)).check(policy, Duration.ofSeconds(30)); // throws with the numbers
 * }</pre>
 */
public final class RetryBudget {
    /** Kafka's default {@code max.poll.interval.ms}. */
    public static final Duration KAFKA_DEFAULT_MAX_POLL_INTERVAL = Duration.ofMinutes(5);

    private final int maxPollRecords;
    private final Duration maxPollInterval;

    private RetryBudget(int maxPollRecords, Duration maxPollInterval) {
        this.maxPollRecords = maxPollRecords;
        this.maxPollInterval = maxPollInterval;
    }

    /**
     * The budget of a Kafka consumer: a poll of {@code maxPollRecords} records must be handled within
     * {@code maxPollInterval}, or the consumer leaves the group.
     *
     * @param maxPollRecords  {@code max.poll.records}
     * @param maxPollInterval {@code max.poll.interval.ms}
     * @return the budget
     * @throws IllegalArgumentException for a non-positive record count or interval
     */
    public static RetryBudget forConsumer(int maxPollRecords, Duration maxPollInterval) {
        Objects.requireNonNull(maxPollInterval, "maxPollInterval");
        if (maxPollRecords < 1) {
            throw new IllegalArgumentException("max.poll.records (" + maxPollRecords + ") must be at least 1");
        }
        if (maxPollInterval.isNegative() || maxPollInterval.isZero()) {
            throw new IllegalArgumentException(
                    "max.poll.interval.ms (" + maxPollInterval.toMillis() + ") must be positive");
        }
        return new RetryBudget(maxPollRecords, maxPollInterval);
    }

    /**
     * The worst time one record can take: every attempt to its end, every backoff at its longest, every gate wait.
     *
     * @param attempts         attempts in all
     * @param longestAttempt   the longest one attempt takes
     * @param totalBackoff     the waits between attempts, added up
     * @param gateWaitPerRetry the gate's wait before each retry
     * @return the worst time
     */
    public Duration worstPerRecord(
            int attempts, Duration longestAttempt, Duration totalBackoff, Duration gateWaitPerRetry) {
        return longestAttempt
                .multipliedBy(attempts)
                .plus(totalBackoff)
                .plus(gateWaitPerRetry.multipliedBy(Math.max(0, attempts - 1)));
    }

    /**
     * Checks a guard retry policy whose attempts each take at most {@code longestAttempt} (the socket read timeout:
     * the longest the client waits).
     *
     * @throws IllegalStateException with the numbers when a poll's worst case does not fit
     * @param policy         the guard's policy
     * @param longestAttempt the socket read timeout
     */
    public void check(RetryPolicy policy, Duration longestAttempt) {
        check(
                "the guard's " + policy,
                policy.getMaxAttempts(),
                longestAttempt,
                policy.getMaxTotalBackoff(),
                policy.getGateGrace());
    }

    /**
     * Checks any retry loop: {@code attempts} executions of at most {@code longestAttempt}, waits adding up to at
     * most {@code totalBackoff}, and {@code gateWaitPerRetry} before each retry.
     *
     * @throws IllegalStateException with the numbers when a poll's worst case does not fit
     * @param what             what is checked, for the message
     * @param attempts         executions in all
     * @param longestAttempt   the longest one execution takes
     * @param totalBackoff     the waits between executions, added up
     * @param gateWaitPerRetry a wait before each retry
     */
    public void check(
            String what, int attempts, Duration longestAttempt, Duration totalBackoff, Duration gateWaitPerRetry) {
        Duration perRecord = worstPerRecord(attempts, longestAttempt, totalBackoff, gateWaitPerRetry);
        Duration perPoll = perRecord.multipliedBy(maxPollRecords);
        if (perPoll.compareTo(maxPollInterval) >= 0) {
            throw new IllegalStateException("retry budget exceeded for " + what + ": max.poll.records ("
                    + maxPollRecords
                    + ") x (attempts (" + attempts + ") x longest attempt (" + longestAttempt.toMillis()
                    + " ms) + backoffs ("
                    + totalBackoff.toMillis() + " ms) + gate waits ("
                    + gateWaitPerRetry.multipliedBy(Math.max(0, attempts - 1)).toMillis()
                    + " ms)) = " + perPoll.toMillis() + " ms, not below max.poll.interval.ms ("
                    + maxPollInterval.toMillis()
                    + " ms). Fewer records per poll (at most "
                    + Math.max(1, maxPollInterval.toMillis() / Math.max(1, perRecord.toMillis()) - 1)
                    + "), fewer attempts, a shorter socket timeout, or a longer max.poll.interval.ms");
        }
    }

    /**
     * The worst case of one record, raw driver vs guarded, for the README and the lab: server sends and server copies.
     *
     * @param executions  application executions (a Kafka handler's attempts) or the guard's attempts
     * @param retryWrites whether the raw driver resends once after a network error
     * @return sends and copies of the raw driver and of the guard
     */
    public static WorstCase worstCase(int executions, boolean retryWrites) {
        return new WorstCase(executions, retryWrites ? 2 * executions : executions, executions, executions, 1);
    }

    /**
     * @param executions   attempts
     * @param rawSends     raw driver: sends (x2 with retryWrites)
     * @param rawCopies    raw driver: copies that may run at once (one per execution)
     * @param guardedSends guarded: sends (one per attempt, each the same copy)
     * @param guardedCopies guarded: copies that may run at once
     */
    public record WorstCase(int executions, int rawSends, int rawCopies, int guardedSends, int guardedCopies) {}
}
