package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.mongowriteguard.retry.RetryPolicy;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class WriteGuardSettingsTest {

    @Test
    void defaults_deriveTwoThirdsOfSocketTimeout_tenSecondsWithout_notStrict() {
        WriteGuardSettings settings = WriteGuardSettings.defaults();

        assertThat(settings.getServerDeadline()).isEmpty();
        assertThat(settings.getServerDeadlineFraction()).isEqualTo(2.0 / 3.0);
        assertThat(settings.getDefaultServerDeadline()).isEqualTo(Duration.ofSeconds(10));
        assertThat(settings.isStrictOrdered()).isFalse();
        assertThat(settings.isLastWriteWins()).isFalse();
    }

    @Test
    void lastWriteWins_withStrictOrdered_isRejected() {
        WriteGuardSettings.Builder builder =
                WriteGuardSettings.builder().strictOrdered(true).lastWriteWins(true);

        assertThatThrownBy(builder::build)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("lastWriteWins (true) cannot be combined with strictOrdered (true)")
                .hasMessageContaining("set only one of them");
    }

    @Test
    void lastWriteWins_isKeptByTheBuilderFromExistingSettings() {
        WriteGuardSettings settings =
                WriteGuardSettings.builder().lastWriteWins(true).build();

        assertThat(WriteGuardSettings.builder(settings).build()).isEqualTo(settings);
        assertThat(settings.toString()).contains("lastWriteWins=true");
    }

    @Test
    void parallelShardCommands_defaultsToEight_isKeptByTheBuilder_andSaysItsRange() {
        WriteGuardSettings settings =
                WriteGuardSettings.builder().parallelShardCommands(1).build();

        assertThat(WriteGuardSettings.defaults().getParallelShardCommands()).isEqualTo(8);
        assertThat(settings.getParallelShardCommands()).isEqualTo(1);
        assertThat(WriteGuardSettings.builder(settings).build()).isEqualTo(settings);
        assertThat(settings).isNotEqualTo(WriteGuardSettings.defaults());
        assertThat(settings.toString()).contains("parallelShardCommands=1");
        assertThatThrownBy(() -> WriteGuardSettings.builder().parallelShardCommands(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("parallelShardCommands (0) must be from 1 to 64; use 1 to send");
        assertThatThrownBy(() -> WriteGuardSettings.builder().parallelShardCommands(65))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("parallelShardCommands (65) must be from 1 to 64");
    }

    @Test
    void settleHold_defaultsBelowTheServersSessionLifetime_isKept_andSaysItsRange() {
        WriteGuardSettings settings = WriteGuardSettings.builder()
                .settleHold(10, Duration.ofMinutes(2))
                .build();

        assertThat(WriteGuardSettings.defaults().getSettleHoldMaxCopies()).isEqualTo(1_000);
        assertThat(WriteGuardSettings.defaults().getSettleHoldMaxAge()).isEqualTo(Duration.ofMinutes(10));
        assertThat(settings.getSettleHoldMaxCopies()).isEqualTo(10);
        assertThat(settings.getSettleHoldMaxAge()).isEqualTo(Duration.ofMinutes(2));
        assertThat(WriteGuardSettings.builder(settings).build()).isEqualTo(settings);
        assertThat(settings).isNotEqualTo(WriteGuardSettings.defaults());
        assertThat(WriteGuardSettings.builder()
                        .settleHold(0, Duration.ofMinutes(1))
                        .build()
                        .getSettleHoldMaxCopies())
                .isZero();
        assertThatThrownBy(() -> WriteGuardSettings.builder().settleHold(-1, Duration.ofMinutes(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("settleHold maxCopies (-1) must be from 0 to 100000");
        assertThatThrownBy(() -> WriteGuardSettings.builder().settleHold(10, Duration.ofMinutes(30)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be from 1 s to")
                .hasMessageContaining("logicalSessionTimeoutMinutes");
        assertThatThrownBy(() -> WriteGuardSettings.builder().settleHold(10, Duration.ofMillis(10)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void resolveServerDeadline_withSocketTimeout_isFractionOfIt() {
        assertThat(WriteGuardSettings.defaults().resolveServerDeadline(Duration.ofSeconds(30)))
                .isEqualTo(Duration.ofSeconds(20));
        assertThat(WriteGuardSettings.builder()
                        .serverDeadlineFraction(0.5)
                        .build()
                        .resolveServerDeadline(Duration.ofSeconds(5)))
                .isEqualTo(Duration.ofMillis(2500));
    }

    @Test
    void resolveServerDeadline_withoutSocketTimeout_isDefault() {
        WriteGuardSettings settings = WriteGuardSettings.builder()
                .defaultServerDeadline(Duration.ofSeconds(7))
                .build();

        assertThat(settings.resolveServerDeadline(null)).isEqualTo(Duration.ofSeconds(7));
        assertThat(settings.resolveServerDeadline(Duration.ZERO)).isEqualTo(Duration.ofSeconds(7));
    }

    @Test
    void resolveServerDeadline_explicit_winsWhenBelowSocketTimeout() {
        WriteGuardSettings settings = WriteGuardSettings.builder()
                .serverDeadline(Duration.ofSeconds(12))
                .build();

        assertThat(settings.resolveServerDeadline(Duration.ofSeconds(30))).isEqualTo(Duration.ofSeconds(12));
        assertThat(settings.resolveServerDeadline(null)).isEqualTo(Duration.ofSeconds(12));
    }

    @Test
    void serverDeadline_notBelowSocketTimeout_isRejected() {
        WriteGuardSettings settings = WriteGuardSettings.builder()
                .serverDeadline(Duration.ofSeconds(30))
                .build();

        assertThatThrownBy(() -> settings.resolveServerDeadline(Duration.ofSeconds(30)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("serverDeadline (30 s) must be below the socket read timeout (30 s);"
                        + " lower it or raise socketTimeout");
    }

    @Test
    void resolveServerDeadline_derived_staysBelowSocketTimeoutAndAtLeastOneMilli() {
        WriteGuardSettings nearlyAll =
                WriteGuardSettings.builder().serverDeadlineFraction(0.9999).build();
        WriteGuardSettings tiny =
                WriteGuardSettings.builder().serverDeadlineFraction(0.0001).build();

        assertThat(nearlyAll.resolveServerDeadline(Duration.ofMillis(10))).isEqualTo(Duration.ofMillis(9));
        assertThat(tiny.resolveServerDeadline(Duration.ofMillis(10))).isEqualTo(Duration.ofMillis(1));
    }

    @Test
    void resolveServerDeadline_socketTimeoutUnderTwoMillis_isRejected() {
        assertThatThrownBy(() -> WriteGuardSettings.defaults().resolveServerDeadline(Duration.ofMillis(1)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("socket read timeout (1 ms) is too short")
                .hasMessageContaining("raise socketTimeout");
    }

    @Test
    void resolveServerDeadline_negativeSocketTimeout_isRejected() {
        assertThatThrownBy(() -> WriteGuardSettings.defaults().resolveServerDeadline(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("socketReadTimeout (-1 s) must not be negative");
    }

    @Test
    void serverDeadlineFraction_outsideZeroOne_isRejected() {
        for (double bad : new double[] {0.0, 1.0, 1.5, -0.1, Double.NaN}) {
            assertThatThrownBy(() -> WriteGuardSettings.builder().serverDeadlineFraction(bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("serverDeadlineFraction (" + bad + ") must be in (0, 1); use e.g. 0.66");
        }
    }

    @Test
    void serverDeadline_zeroOrNegative_isRejected() {
        assertThatThrownBy(() -> WriteGuardSettings.builder().serverDeadline(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("serverDeadline (0 ms) must be positive; use e.g. Duration.ofSeconds(20)");
        assertThatThrownBy(() -> WriteGuardSettings.builder().serverDeadline(Duration.ofSeconds(-5)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("serverDeadline (-5 s) must be positive");
    }

    @Test
    void serverDeadline_underOneMilli_isRejected() {
        assertThatThrownBy(() -> WriteGuardSettings.builder().serverDeadline(Duration.ofNanos(500_000)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("serverDeadline (0.5 ms) must be at least 1 ms");
    }

    @Test
    void serverDeadline_null_meansDeriveAgain() {
        WriteGuardSettings explicit = WriteGuardSettings.builder()
                .serverDeadline(Duration.ofSeconds(3))
                .build();
        WriteGuardSettings derived =
                WriteGuardSettings.builder(explicit).serverDeadline(null).build();

        assertThat(derived.getServerDeadline()).isEmpty();
        assertThat(derived).isEqualTo(WriteGuardSettings.defaults());
    }

    @Test
    void defaultServerDeadline_nullZeroOrNegative_isRejected() {
        assertThatThrownBy(() -> WriteGuardSettings.builder().defaultServerDeadline(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("defaultServerDeadline must not be null");
        assertThatThrownBy(() -> WriteGuardSettings.builder().defaultServerDeadline(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("defaultServerDeadline (0 ms) must be positive");
    }

    @Test
    void builderFromExisting_copiesEveryField() {
        WriteGuardSettings original = WriteGuardSettings.builder()
                .serverDeadline(Duration.ofSeconds(4))
                .serverDeadlineFraction(0.5)
                .defaultServerDeadline(Duration.ofSeconds(6))
                .strictOrdered(true)
                .build();

        WriteGuardSettings copy = WriteGuardSettings.builder(original).build();

        assertThat(copy).isEqualTo(original).hasSameHashCodeAs(original).isNotSameAs(original);
        assertThat(WriteGuardSettings.builder(original).strictOrdered(false).build())
                .isNotEqualTo(original);
        assertThat(WriteGuardSettings.builder(original)
                        .retryPolicy(RetryPolicy.none())
                        .build())
                .isNotEqualTo(original);
    }

    @Test
    void toString_isReadable() {
        assertThat(WriteGuardSettings.builder()
                        .serverDeadline(Duration.ofMillis(1500))
                        .build()
                        .toString())
                .isEqualTo("WriteGuardSettings{serverDeadline=1.5 s, serverDeadlineFraction=0.6666666666666666,"
                        + " defaultServerDeadline=10 s, strictOrdered=false, lastWriteWins=false, parallelShardCommands=8, settleHold=1000 copies, 600 s, retryPolicy=RetryPolicy{maxAttempts=3,"
                        + " initialBackoff=100ms, multiplier=2.0, maxBackoff=5000ms, jitter=0.5, gateGrace=100ms}}");
        assertThat(WriteGuardSettings.defaults().toString()).contains("serverDeadline=derived");
    }
}
