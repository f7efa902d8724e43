package io.github.mongowriteguard.read;

import io.github.mongowriteguard.internal.CommonTags;
import io.github.mongowriteguard.internal.MicrometerGuardMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
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

    // Each meter's builder is built once; an event only adds its tags (Micrometer finds or registers the meter).
    private final Meter.MeterProvider<Counter> staleConfig;
    private final Meter.MeterProvider<Counter> timeouts;
    private final Meter.MeterProvider<Counter> degraded;
    private final Meter.MeterProvider<Counter> duplicatesRemoved;

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
        Objects.requireNonNull(registry, "registry");
        Tags tags = Tags.of(CommonTags.check("commonTags", commonTags).entrySet().stream()
                .map(tag -> Tag.of(tag.getKey(), tag.getValue()))
                .toList());
        this.staleConfig = Counter.builder(PREFIX + "staleconfig")
                .description("Normal reads that failed with StaleConfig (13388)")
                .baseUnit("reads")
                .tags(tags)
                .withRegistry(registry);
        this.timeouts = Counter.builder(PREFIX + "timeouts")
                .description("Normal reads that timed out")
                .baseUnit("reads")
                .tags(tags)
                .withRegistry(registry);
        this.degraded = Counter.builder(PREFIX + "degraded")
                .description("Reads answered approximately (readConcern available)")
                .baseUnit("reads")
                .tags(tags)
                .withRegistry(registry);
        this.duplicatesRemoved = Counter.builder(PREFIX + "degraded.duplicates.removed")
                .description("Orphan duplicates removed from degraded reads")
                .baseUnit("documents")
                .tags(tags)
                .withRegistry(registry);
    }

    @Override
    public void staleConfig(ReadGuardListener.StaleConfigEvent event) {
        staleConfig
                .withTags("namespace", event.namespace(), "shard", event.shard())
                .increment();
    }

    @Override
    public void readTimedOut(ReadGuardListener.ReadTimeoutEvent event) {
        timeouts.withTags("namespace", event.namespace(), "kind", event.kind()).increment();
    }

    @Override
    public void degradedRead(ReadGuardListener.DegradedReadEvent event) {
        degraded.withTags(
                        "namespace", event.namespace(), "reason", event.reason().name())
                .increment();
        duplicatesRemoved.withTags("namespace", event.namespace()).increment(event.duplicatesRemoved());
    }
}
