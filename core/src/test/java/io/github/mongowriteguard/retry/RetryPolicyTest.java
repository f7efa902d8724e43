package io.github.mongowriteguard.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.RetryConfig;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RetryPolicyTest {

    @Test
    void defaults_areASmallNumberOfAttemptsWithExponentialBackoffAndJitter() {
        RetryPolicy policy = RetryPolicy.defaults();

        assertThat(policy.getMaxAttempts()).isEqualTo(3);
        assertThat(policy.getInitialBackoff()).isEqualTo(Duration.ofMillis(100));
        assertThat(policy.getMultiplier()).isEqualTo(2.0);
        assertThat(policy.getJitter()).isEqualTo(0.5);
        assertThat(policy.maxBackoffAfter(1)).isEqualTo(Duration.ofMillis(150));
        assertThat(policy.maxBackoffAfter(2)).isEqualTo(Duration.ofMillis(300));
    }

    @Test
    void none_isOneAttempt() {
        assertThat(RetryPolicy.none().getMaxAttempts()).isEqualTo(1);
        assertThat(RetryPolicy.none().getMaxTotalBackoff()).isZero();
    }

    @Test
    void maxAttempts_outsideOneToTen_isRejected() {
        assertThatThrownBy(() -> RetryPolicy.builder().maxAttempts(0))
                .hasMessageContaining("maxAttempts (0) must be 1 to 10");
        assertThatThrownBy(() -> RetryPolicy.builder().maxAttempts(11)).hasMessageContaining("maxAttempts (11)");
    }

    @Test
    void jitter_outsideZeroToOne_isRejected() {
        assertThatThrownBy(() -> RetryPolicy.builder().jitter(1.0))
                .hasMessageContaining("jitter (1.0) must be in [0, 1)");
        assertThatThrownBy(() -> RetryPolicy.builder().jitter(-0.1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void multiplierBelowOne_isRejected() {
        assertThatThrownBy(() -> RetryPolicy.builder().multiplier(0.5))
                .hasMessageContaining("multiplier (0.5) must be at least 1");
    }

    @Test
    void nonPositiveBackoffs_areRejected() {
        assertThatThrownBy(() -> RetryPolicy.builder().initialBackoff(Duration.ZERO))
                .hasMessageContaining("initialBackoff");
        assertThatThrownBy(() -> RetryPolicy.builder().maxBackoff(Duration.ofMillis(-1)))
                .hasMessageContaining("maxBackoff");
        assertThatThrownBy(() -> RetryPolicy.builder().gateGrace(Duration.ofMillis(-1)))
                .hasMessageContaining("gateGrace");
    }

    @Test
    void maxBackoffBelowInitialBackoff_isRejectedAtBuild() {
        assertThatThrownBy(() -> RetryPolicy.builder()
                        .initialBackoff(Duration.ofSeconds(2))
                        .maxBackoff(Duration.ofSeconds(1))
                        .build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("maxBackoff (1000 ms) must not be below initialBackoff (2000 ms)");
    }

    @Test
    void fromResilience4jConfig_takesItsAttemptsAndIntervals() {
        RetryConfig config = RetryConfig.custom()
                .maxAttempts(5)
                .intervalFunction(IntervalFunction.ofExponentialBackoff(50, 2.0))
                .build();

        RetryPolicy policy = RetryPolicy.from(config);

        assertThat(policy.getMaxAttempts()).isEqualTo(5);
        assertThat(policy.maxBackoffAfter(1)).isEqualTo(Duration.ofMillis(50));
        assertThat(policy.maxBackoffAfter(3)).isEqualTo(Duration.ofMillis(200));
    }

    @Test
    void builderOfExisting_copiesEveryValue_andEqualityFollowsValues() {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(4).jitter(0.2).build();

        assertThat(RetryPolicy.builder(policy).build()).isEqualTo(policy).hasSameHashCodeAs(policy);
        assertThat(RetryPolicy.builder(policy).maxAttempts(2).build()).isNotEqualTo(policy);
        assertThat(policy.toString()).contains("maxAttempts=4").contains("jitter=0.2");
    }
}
