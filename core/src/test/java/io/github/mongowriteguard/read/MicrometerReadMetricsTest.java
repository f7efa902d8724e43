package io.github.mongowriteguard.read;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

class MicrometerReadMetricsTest {

    @Test
    void readEvents_becomeCountersTaggedWithNamespaceShardKindAndReason() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        MicrometerReadMetrics metrics = new MicrometerReadMetrics(registry);

        metrics.staleConfig(new ReadGuardListener.StaleConfigEvent("shop.inventory", "shard00"));
        metrics.readTimedOut(
                new ReadGuardListener.ReadTimeoutEvent("shop.inventory", "MongoExecutionTimeoutException"));
        metrics.degradedRead(new ReadGuardListener.DegradedReadEvent(
                "shop.inventory", ApproximationReason.NORMAL_READ_FAILED, 2000, 504, java.time.Duration.ofMillis(40)));

        assertThat(registry.get("mongodb.guard.read.staleconfig")
                        .tag("shard", "shard00")
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get("mongodb.guard.read.timeouts")
                        .tag("kind", "MongoExecutionTimeoutException")
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get("mongodb.guard.read.degraded")
                        .tag("reason", "NORMAL_READ_FAILED")
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get("mongodb.guard.read.degraded.duplicates.removed")
                        .counter()
                        .count())
                .isEqualTo(504);
    }
}
