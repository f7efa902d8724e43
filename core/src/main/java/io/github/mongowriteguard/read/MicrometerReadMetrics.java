package io.github.mongowriteguard.read;

import io.github.mongowriteguard.metrics.CommonTags;
import io.github.mongowriteguard.metrics.MicrometerGuardMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import java.util.Map;
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
    private final Tags commonTags;

    /**
     * Read meters ({@code mongodb.guard.read.*}) in {@code registry}, created with their first event.
     *
     * @param registry where the meters go
     */
    public MicrometerReadMetrics(MeterRegistry registry) {
        this(registry, Map.of());
    }

    /**
     * As {@link #MicrometerReadMetrics(MeterRegistry)}, with {@code commonTags} on every meter (pass the guard's
     * {@code WriteGuardSettings.getCommonTags()} to tag reads as writes).
     *
     * @param registry   where the meters go
     * @param commonTags tags added to every meter: bounded values, never document values, ids or connection strings
     * @throws IllegalArgumentException if a key or value is null or blank, or a key is one of the guard's own tags
     */
    public MicrometerReadMetrics(MeterRegistry registry, Map<String, String> commonTags) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.commonTags = Tags.of(CommonTags.check("commonTags", commonTags).entrySet().stream()
                .map(tag -> Tag.of(tag.getKey(), tag.getValue()))
                .toList());
    }

    @Override
    public void staleConfig(ReadGuardEvents.StaleConfigEvent event) {
        Counter.builder(PREFIX + "staleconfig")
                .description("Normal reads that failed with StaleConfig (13388)")
                .tag("namespace", event.namespace())
                .tag("shard", event.shard())
                .baseUnit("reads")
                .tags(commonTags)
                .register(registry)
                .increment();
    }

    @Override
    public void readTimedOut(ReadGuardEvents.ReadTimeoutEvent event) {
        Counter.builder(PREFIX + "timeouts")
                .description("Normal reads that timed out")
                .tag("namespace", event.namespace())
                .tag("kind", event.kind())
                .baseUnit("reads")
                .tags(commonTags)
                .register(registry)
                .increment();
    }

    @Override
    public void degradedRead(ReadGuardEvents.DegradedReadEvent event) {
        Counter.builder(PREFIX + "degraded")
                .description("Reads answered approximately (readConcern available)")
                .tag("namespace", event.namespace())
                .tag("reason", event.reason().name())
                .baseUnit("reads")
                .tags(commonTags)
                .register(registry)
                .increment();
        Counter.builder(PREFIX + "degraded.duplicates.removed")
                .description("Orphan duplicates removed from degraded reads")
                .baseUnit("documents")
                .tag("namespace", event.namespace())
                .tags(commonTags)
                .register(registry)
                .increment(event.duplicatesRemoved());
    }
}
