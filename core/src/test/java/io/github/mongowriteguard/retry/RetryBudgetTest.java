package io.github.mongowriteguard.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RetryBudgetTest {

    @Test
    void springKafkaDefault_tenExecutionsOf30sFor500Records_isRejectedWithTheNumbers() {
        // DefaultErrorHandler's default FixedBackOff(0, 9): 10 executions, no waits.
        RetryBudget budget = RetryBudget.forConsumer(500, RetryBudget.KAFKA_DEFAULT_MAX_POLL_INTERVAL);

        assertThatThrownBy(() ->
                        budget.check("FixedBackOff(0, 9)", 10, Duration.ofSeconds(30), Duration.ZERO, Duration.ZERO))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("max.poll.records (500)")
                .hasMessageContaining("attempts (10)")
                .hasMessageContaining("longest attempt (30000 ms)")
                .hasMessageContaining("= 150000000 ms")
                .hasMessageContaining("max.poll.interval.ms (300000 ms)");
    }

    @Test
    void guardPolicy_isCheckedWithItsLongestBackoffsAndGateWaits() {
        RetryPolicy policy = RetryPolicy.builder()
                .maxAttempts(3)
                .initialBackoff(Duration.ofMillis(100))
                .jitter(0.5)
                .build();
        RetryBudget budget = RetryBudget.forConsumer(10, Duration.ofMinutes(5));

        // 3 x 5 s + (150 + 300 ms) + 2 x 100 ms gate = 15.65 s per record, 156.5 s per poll: fits in 300 s.
        assertThat(budget.worstPerRecord(3, Duration.ofSeconds(5), policy.getMaxTotalBackoff(), policy.getGateGrace()))
                .isEqualTo(Duration.ofMillis(15_650));
        assertThatCode(() -> budget.check(policy, Duration.ofSeconds(5))).doesNotThrowAnyException();
        assertThatThrownBy(() ->
                        RetryBudget.forConsumer(100, Duration.ofMinutes(5)).check(policy, Duration.ofSeconds(5)))
                .hasMessageContaining("Fewer records per poll (at most 18)");
    }

    @Test
    void worstCase_rawMakesACopyPerExecution_guardedOne() {
        RetryBudget.WorstCase worst = RetryBudget.worstCase(10, true);

        assertThat(worst.rawSends()).isEqualTo(20);
        assertThat(worst.rawCopies()).isEqualTo(10);
        assertThat(worst.guardedSends()).isEqualTo(10);
        assertThat(worst.guardedCopies()).isEqualTo(1);
    }

    @Test
    void nonPositiveRecordsOrInterval_areRejected() {
        assertThatThrownBy(() -> RetryBudget.forConsumer(0, Duration.ofMinutes(5)))
                .hasMessageContaining("max.poll.records (0)");
        assertThatThrownBy(() -> RetryBudget.forConsumer(1, Duration.ZERO))
                .hasMessageContaining("max.poll.interval.ms (0)");
    }
}
