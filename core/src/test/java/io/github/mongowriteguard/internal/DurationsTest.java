package io.github.mongowriteguard.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DurationsTest {

    @Test
    void format_usesSecondsFromOneSecondAndMillisecondsBelow() {
        assertThat(Durations.format(Duration.ofSeconds(30))).isEqualTo("30 s");
        assertThat(Durations.format(Duration.ofMillis(1500))).isEqualTo("1.5 s");
        assertThat(Durations.format(Duration.ofMillis(250))).isEqualTo("250 ms");
        assertThat(Durations.format(Duration.ofNanos(500_000))).isEqualTo("0.5 ms");
        assertThat(Durations.format(Duration.ZERO)).isEqualTo("0 ms");
        assertThat(Durations.format(Duration.ofSeconds(-5))).isEqualTo("-5 s");
    }

    @Test
    void format_durationBeyondNanosecondRange_fallsBackToSeconds() {
        assertThat(Durations.format(Duration.ofDays(200 * 365L))).isEqualTo(200 * 365L * 86_400 + " s");
    }
}
