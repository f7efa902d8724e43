package io.github.mongowriteguard.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.ReadPreference;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** One test per rule of the read guard's options. */
class ReadGuardOptionsTest {

    @Test
    void defaults_areExactOnly() {
        ReadGuardOptions defaults = ReadGuardOptions.defaults();
        assertThat(defaults.isDegradedReads()).isFalse();
        assertThat(defaults.getNormalReadTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(defaults.getExpectFailureFor()).isEqualTo(Duration.ofSeconds(30));
        assertThat(defaults.getDegradedReadPreference()).isNull();
        assertThat(defaults.getListener()).isSameAs(ReadGuardListener.NONE);
    }

    @Test
    void normalReadTimeout_zero_isRejected() {
        assertThatThrownBy(() -> ReadGuardOptions.builder().normalReadTimeout(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("normalReadTimeout (PT0S) must be positive");
    }

    @Test
    void degradedReadTimeout_negative_isRejected() {
        assertThatThrownBy(() -> ReadGuardOptions.builder().degradedReadTimeout(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("degradedReadTimeout");
    }

    @Test
    void expectFailureFor_negative_isRejected_zeroIsAllowed() {
        assertThatThrownBy(() -> ReadGuardOptions.builder().expectFailureFor(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Duration.ZERO");
        assertThat(ReadGuardOptions.builder()
                        .expectFailureFor(Duration.ZERO)
                        .build()
                        .getExpectFailureFor())
                .isZero();
    }

    @Test
    void degradedReadPreference_primary_isRejected() {
        assertThatThrownBy(() -> ReadGuardOptions.builder().degradedReadPreference(ReadPreference.primary()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must name secondaries");
    }

    @Test
    void degradedReadPreference_withoutDegradedReads_isRejectedAtBuild() {
        ReadGuardOptions.Builder builder =
                ReadGuardOptions.builder().degradedReadPreference(ReadPreference.secondary());
        assertThatThrownBy(builder::build)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("turn degradedReads on or drop the preference");
    }

    @Test
    void builderFromExisting_copiesEverything_andEqualsHolds() {
        ReadGuardOptions options = ReadGuardOptions.builder()
                .degradedReads(true)
                .degradedReadPreference(ReadPreference.secondaryPreferred())
                .normalReadTimeout(Duration.ofSeconds(2))
                .build();
        ReadGuardOptions copy = ReadGuardOptions.builder(options).build();
        assertThat(copy).isEqualTo(options).hasSameHashCodeAs(options);
        assertThat(copy.toString()).contains("degradedReads=true", "normalReadTimeout=PT2S");
        assertThat(ReadGuardOptions.builder(options)
                        .degradedReads(false)
                        .degradedReadPreference(null)
                        .build())
                .isNotEqualTo(options);
    }
}
