package io.github.mongowriteguard.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.bulk.PlanMode;
import io.github.mongowriteguard.copies.CopyLedger;
import io.github.mongowriteguard.copies.GateVerdict;
import io.github.mongowriteguard.internal.MicrometerGuardMetrics;
import io.github.mongowriteguard.internal.copies.LiveCopyLedger;
import io.github.mongowriteguard.read.ApproximationReason;
import io.github.mongowriteguard.read.MicrometerReadMetrics;
import io.github.mongowriteguard.read.ReadGuardListener;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Micrometer's conventions on every meter the guard registers: a description, a base unit, the user's common tags. */
class MeterConventionsTest {
    private static final Map<String, String> COMMON = Map.of("app", "orders");

    private static final CopyLedger NO_COPIES = new LiveCopyLedger();

    @Test
    void everyGuardMeter_hasADescription_aBaseUnit_andTheCommonTags() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        MicrometerGuardMetrics metrics = new MicrometerGuardMetrics(registry, NO_COPIES, COMMON);

        metrics.planChosen(
                new GuardEventListener.PlanChosen("db.c", "bulkWrite", PlanMode.STRICT_ORDERED, "none", 1, -1));
        metrics.writeCompleted(new GuardEventListener.WriteCompleted(
                "db.c", "bulkWrite", CallOutcome.SUCCESS, Duration.ofMillis(1), 1, 1, 1, PlanMode.STRICT_ORDERED));
        metrics.attemptStarted(new GuardEventListener.AttemptStarted("db.c", 1, false));
        metrics.deadlineHit(new GuardEventListener.DeadlineHit("db.c", 10));
        metrics.gateDecided(new GuardEventListener.GateDecided("db.c", GateVerdict.REFUSED, Duration.ofMillis(1)));

        assertThat(registry.getMeters()).hasSize(14).allSatisfy(MeterConventionsTest::followsTheConventions);
    }

    @Test
    void everyReadMeter_hasADescription_aBaseUnit_andTheCommonTags() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        MicrometerReadMetrics metrics = new MicrometerReadMetrics(registry, COMMON);

        metrics.staleConfig(new ReadGuardListener.StaleConfigEvent("db.c", "shard0"));
        metrics.readTimedOut(new ReadGuardListener.ReadTimeoutEvent("db.c", "MongoExecutionTimeoutException"));
        metrics.degradedRead(new ReadGuardListener.DegradedReadEvent(
                "db.c", ApproximationReason.NORMAL_READ_FAILED, 1, 1, Duration.ofMillis(1)));

        assertThat(registry.getMeters()).hasSize(4).allSatisfy(MeterConventionsTest::followsTheConventions);
    }

    @Test
    void commonTags_areCheckedInTheSettings() {
        assertThat(WriteGuardSettings.builder().commonTags(COMMON).build().getCommonTags())
                .isEqualTo(COMMON);
        assertThat(WriteGuardSettings.defaults().getCommonTags()).isEmpty();
    }

    @Test
    void commonTags_withAKeyTheGuardAlreadyUses_isRejected() {
        assertThatThrownBy(() -> WriteGuardSettings.builder().commonTags(Map.of("namespace", "x")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("commonTags has the key \"namespace\"")
                .hasMessageContaining("choose another key");
    }

    @Test
    void commonTags_withABlankValue_isRejected() {
        assertThatThrownBy(() -> WriteGuardSettings.builder().commonTags(Map.of("app", " ")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("blank value for \"app\"");
    }

    @Test
    void commonTags_null_isRejected() {
        assertThatThrownBy(() -> WriteGuardSettings.builder().commonTags(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("pass Map.of()");
    }

    private static void followsTheConventions(Meter meter) {
        Meter.Id id = meter.getId();
        assertThat(id.getDescription()).as(id.getName() + " description").isNotBlank();
        if (!(meter instanceof Timer)) {
            assertThat(id.getBaseUnit()).as(id.getName() + " base unit").isNotBlank();
        }
        assertThat(id.getTags()).as(id.getName() + " tags").contains(Tag.of("app", "orders"));
    }
}
