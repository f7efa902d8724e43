package io.github.mongowriteguard.read;

import io.github.mongowriteguard.metrics.MicrometerGuardMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;

/**
 * Meters for guarded reads, under {@code mongodb.guard.read.}: {@code staleconfig} (tags {@code namespace},
 * {@code shard}), {@code timeouts} ({@code namespace}, {@code kind}) and {@code degraded} ({@code namespace},
 * {@code reason}), plus {@code degraded.duplicates.removed}. Pass it as the read options' listener:
 *
 * <pre>{@code
 * ReadGuardOptions options = ReadGuardOptions.builder().degradedReads(true)
 *     .listener(new MicrometerReadMetrics(meterRegistry)).build();
 * }</pre>
 */
public final class MicrometerReadMetrics implements ReadGuardListener {
    private static final String PREFIX = MicrometerGuardMetrics.PREFIX + "read.";

    private final MeterRegistry registry;

    /**
     * Read meters ({@code mongodb.guard.read.*}) in {@code registry}, created with their first event.
     *
     * @param registry where the meters go
     */
    public MicrometerReadMetrics(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    @Override
    public void staleConfig(ReadGuardEvents.StaleConfigEvent event) {
        Counter.builder(PREFIX + "staleconfig")
                .description("Normal reads that failed with StaleConfig (13388)")
                .tag("namespace", event.namespace())
                .tag("shard", event.shard())
                .register(registry)
                .increment();
    }

    @Override
    public void readTimedOut(ReadGuardEvents.ReadTimeoutEvent event) {
        Counter.builder(PREFIX + "timeouts")
                .description("Normal reads that timed out")
                .tag("namespace", event.namespace())
                .tag("kind", event.kind())
                .register(registry)
                .increment();
    }

    @Override
    public void degradedRead(ReadGuardEvents.DegradedReadEvent event) {
        Counter.builder(PREFIX + "degraded")
                .description("Reads answered approximately (readConcern available)")
                .tag("namespace", event.namespace())
                .tag("reason", event.reason().name())
                .register(registry)
                .increment();
        Counter.builder(PREFIX + "degraded.duplicates.removed")
                .description("Orphan duplicates removed from degraded reads")
                .tag("namespace", event.namespace())
                .register(registry)
                .increment(event.duplicatesRemoved());
    }
}
