package io.github.mongowriteguard.internal;

import io.github.mongowriteguard.bulk.PlanMode;
import io.github.mongowriteguard.copies.CopyLedger;
import io.github.mongowriteguard.copies.GateVerdict;
import io.github.mongowriteguard.metrics.DefaultGuardObservationConvention;
import io.github.mongowriteguard.metrics.GuardEventListener;
import io.github.mongowriteguard.metrics.HeldStructure;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The guard's meters, all under {@code mongodb.guard.}, each with a description and (but for timers) a base unit,
 * tagged only with bounded values: {@code namespace}, {@code operation}, {@code outcome}, {@code attempt},
 * {@code verdict}, and the user's common tags ({@code WriteGuardSettings.Builder.commonTags}). Never document contents,
 * ids or URIs. Not API: {@code WriteGuard.builder().meterRegistry(..)} registers it, with the settings' common tags
 * and {@code WriteGuard::getHeldStructures}.
 *
 * <table>
 * <caption>Meters</caption>
 * <tr><td>{@code mongodb.guard.writes}</td><td>timer</td><td>guarded calls, by namespace, operation, outcome</td></tr>
 * <tr><td>{@code mongodb.guard.attempts}</td><td>counter</td><td>attempts, {@code attempt=first|retry}</td></tr>
 * <tr><td>{@code mongodb.guard.sends}</td><td>counter</td><td>sends of write commands</td></tr>
 * <tr><td>{@code mongodb.guard.copies.started}</td><td>counter</td><td>server copies started</td></tr>
 * <tr><td>{@code mongodb.guard.copies.running}</td><td>gauge</td><td>copies the server may be running now</td></tr>
 * <tr><td>{@code mongodb.guard.copies.max.concurrent}</td><td>gauge</td><td>most copies possibly running at once</td></tr>
 * <tr><td>{@code mongodb.guard.copies.forgotten}</td><td>counter</td><td>copies the ledger stopped tracking while
 *     they may still run (past its count or retention); the overlap gate is blind for them</td></tr>
 * <tr><td>{@code mongodb.guard.copies.held}</td><td>gauge</td><td>commands with an unknown outcome held for
 *     {@code settle}</td></tr>
 * <tr><td>{@code mongodb.guard.rounds}</td><td>summary</td><td>rounds per guarded bulk</td></tr>
 * <tr><td>{@code mongodb.guard.deadline.hits}</td><td>counter</td><td>writes the server stopped at their deadline</td></tr>
 * <tr><td>{@code mongodb.guard.gate}</td><td>timer</td><td>gate waits, by {@code verdict}</td></tr>
 * <tr><td>{@code mongodb.guard.gate.refusals}</td><td>counter</td><td>retries refused: a copy still ran</td></tr>
 * <tr><td>{@code mongodb.guard.plans}</td><td>counter</td><td>planned bulks, by {@code mode}
 * ({@code unordered-rounds}, {@code preserve-order}, {@code strict-ordered}) and {@code reason} (why not every write
 * runs in rounds with same-copy retries: {@code none}, {@code strict-ordered}, {@code multi-document},
 * {@code multi-document-kept}, {@code filter-not-id}, {@code collation}); {@code rounds} alone reads 1 for a bulk that
 * ran as the driver's ORDERED bulk</td></tr>
 * <tr><td>{@code mongodb.guard.strict.ordered}</td><td>counter</td><td>bulks run with strict ORDERED semantics</td></tr>
 * <tr><td>{@code mongodb.guard.roundtrips.avoided}</td><td>counter</td><td>an <em>estimate</em>: the mongos-to-shard
 * round trips the plans of the caller's ORDERED bulks saved against the driver's ORDERED bulk
 * ({@code BulkPlan.expectedRoundTripsAvoided}) on a hashed shard key over the number of shards given to
 * {@link #MicrometerGuardMetrics(MeterRegistry, CopyLedger, Map, int)}; only registered when that number is 2 or
 * more</td></tr>
 * <tr><td>{@code mongodb.guard.held}</td><td>gauge</td><td>what the guard holds between calls, by {@code structure}
 * ({@link HeldStructure#name()}), in the structure's unit</td></tr>
 * <tr><td>{@code mongodb.guard.held.bound}</td><td>gauge</td><td>the most each structure holds, -1 when no count
 * bounds it</td></tr>
 * </table>
 */
public final class MicrometerGuardMetrics implements GuardEventListener {
    /** The prefix of every meter name: {@value}. */
    public static final String PREFIX = "mongodb.guard.";

    private final MeterRegistry registry;
    private final Tags commonTags;
    private final int estimateShards;

    // Each meter's builder is built once; an event only adds its tags (Micrometer finds or registers the meter).
    private final Meter.MeterProvider<Timer> writes;
    private final Meter.MeterProvider<Counter> sends;
    private final Meter.MeterProvider<Counter> copiesStarted;
    private final Meter.MeterProvider<DistributionSummary> rounds;
    private final Meter.MeterProvider<Counter> strictOrdered;
    private final Meter.MeterProvider<Counter> plans;
    /** Null when no shard count is set: the estimate is then not registered. */
    private final Meter.@Nullable MeterProvider<Counter> roundTripsAvoided;

    private final Meter.MeterProvider<Counter> attempts;
    private final Meter.MeterProvider<Counter> deadlineHits;
    private final Meter.MeterProvider<Timer> gate;
    private final Meter.MeterProvider<Counter> gateRefusals;

    /**
     * Registers the copy gauges at once; other meters appear with their first event.
     *
     * @param registry where the meters go
     * @param copies   the guard's copy ledger, read by the gauges
     */
    public MicrometerGuardMetrics(MeterRegistry registry, CopyLedger copies) {
        this(registry, copies, Map.of());
    }

    /**
     * As {@link #MicrometerGuardMetrics(MeterRegistry, CopyLedger)}, with {@code commonTags} on every meter (the
     * guard passes {@code WriteGuardSettings.getCommonTags()}).
     *
     * @param registry   where the meters go
     * @param copies     the guard's copy ledger, read by the gauges
     * @param commonTags tags added to every meter: bounded values, never document values, ids or connection strings
     * @throws IllegalArgumentException if a key or value is null or blank, or a key is one of the guard's own tags
     */
    public MicrometerGuardMetrics(MeterRegistry registry, CopyLedger copies, Map<String, String> commonTags) {
        this(registry, copies, commonTags, 0, List::of);
    }

    /**
     * As {@link #MicrometerGuardMetrics(MeterRegistry, CopyLedger, Map)}, with the estimate of the round trips saved
     * ({@code mongodb.guard.roundtrips.avoided}) computed for collections spread over {@code estimateShards} shards.
     * The guard does not know how many shards a collection's writes reach: the estimate assumes a hashed shard key
     * over that many shards, writes scattered uniformly. Below 2, that meter is not registered.
     *
     * @param registry       where the meters go
     * @param copies         the guard's copy ledger, read by the gauges
     * @param commonTags     tags added to every meter: bounded values, never document values, ids or connection strings
     * @param estimateShards the shard count the round-trip estimate assumes; 0 or 1 for no estimate
     * @throws IllegalArgumentException if a tag is invalid, or {@code estimateShards} is negative
     */
    public MicrometerGuardMetrics(
            MeterRegistry registry, CopyLedger copies, Map<String, String> commonTags, int estimateShards) {
        this(registry, copies, commonTags, estimateShards, List::of);
    }

    /**
     * As {@link #MicrometerGuardMetrics(MeterRegistry, CopyLedger, Map, int)}, with a gauge of each structure
     * {@code held} lists when called here ({@code mongodb.guard.held} and {@code mongodb.guard.held.bound}, tagged
     * {@code structure}); the guard passes {@code WriteGuard::getHeldStructures}.
     *
     * @param registry       where the meters go
     * @param copies         the guard's copy ledger, read by the gauges
     * @param commonTags     tags added to every meter
     * @param estimateShards the shard count the round-trip estimate assumes; 0 or 1 for no estimate
     * @param held           what the guard holds, read by the gauges; the same structures on every call
     * @throws IllegalArgumentException if a tag is invalid, or {@code estimateShards} is negative
     */
    public MicrometerGuardMetrics(
            MeterRegistry registry,
            CopyLedger copies,
            Map<String, String> commonTags,
            int estimateShards,
            Supplier<List<HeldStructure>> held) {
        if (estimateShards < 0) {
            throw new IllegalArgumentException(
                    "estimateShards (" + estimateShards + ") must not be negative; 0 turns the estimate off");
        }
        this.estimateShards = estimateShards;
        this.registry = Objects.requireNonNull(registry, "registry");
        this.commonTags = Tags.of(CommonTags.check("commonTags", commonTags).entrySet().stream()
                .map(tag -> Tag.of(tag.getKey(), tag.getValue()))
                .toList());
        Gauge.builder(PREFIX + "copies.running", copies, CopyLedger::possiblyRunningCount)
                .description("Server copies of guarded writes that may still be running (the client stopped waiting)")
                .baseUnit("copies")
                .tags(this.commonTags)
                .register(registry);
        Gauge.builder(PREFIX + "copies.max.concurrent", copies, CopyLedger::maxPossiblyRunning)
                .description("The most server copies possibly running at once")
                .baseUnit("copies")
                .tags(this.commonTags)
                .register(registry);
        FunctionCounter.builder(PREFIX + "copies.forgotten", copies, CopyLedger::forgottenCount)
                .description("Server copies the copy ledger stopped tracking while they may still run (past its count"
                        + " or retention); the overlap gate is blind for them")
                .baseUnit("copies")
                .tags(this.commonTags)
                .register(registry);
        Gauge.builder(PREFIX + "copies.held", copies, CopyLedger::heldCount)
                .description("Commands whose outcome is unknown, held (with their session) so that settle can send"
                        + " the same copy again")
                .baseUnit("copies")
                .tags(this.commonTags)
                .register(registry);
        Objects.requireNonNull(held, "held");
        for (HeldStructure structure : held.get()) {
            String name = structure.name();
            Gauge.builder(PREFIX + "held", held, h -> find(h, name).size())
                    .description("What the guard holds in memory between calls, by structure")
                    .strongReference(true) // the supplier is a method reference nothing else holds
                    .baseUnit(structure.unit())
                    .tag("structure", name)
                    .tags(this.commonTags)
                    .register(registry);
            Gauge.builder(PREFIX + "held.bound", held, h -> find(h, name).bound())
                    .description("The most each structure the guard holds may hold (-1: no count bounds it)")
                    .strongReference(true)
                    .baseUnit(structure.unit())
                    .tag("structure", name)
                    .tags(this.commonTags)
                    .register(registry);
        }
        this.writes = Timer.builder(PREFIX + "writes")
                .description("Guarded writes")
                .tags(this.commonTags)
                .withRegistry(registry);
        this.sends = Counter.builder(PREFIX + "sends")
                .description("Sends of guarded write commands, resends of the same copy included")
                .baseUnit("sends")
                .tags(this.commonTags)
                .withRegistry(registry);
        this.copiesStarted = Counter.builder(PREFIX + "copies.started")
                .description("Server copies of guarded write commands started (a resend of a copy is not a new one)")
                .baseUnit("copies")
                .tags(this.commonTags)
                .withRegistry(registry);
        this.rounds = DistributionSummary.builder(PREFIX + "rounds")
                .description("Rounds per guarded bulk")
                .baseUnit("rounds")
                .tags(this.commonTags)
                .withRegistry(registry);
        this.strictOrdered = Counter.builder(PREFIX + "strict.ordered")
                .description("Guarded bulks run with strict ORDERED semantics (as the driver sends them)")
                .baseUnit("bulks")
                .tags(this.commonTags)
                .withRegistry(registry);
        this.plans = Counter.builder(PREFIX + "plans")
                .description("Guarded bulks by plan mode, and why not every write ran in rounds with same-copy retries")
                .baseUnit("bulks")
                .tags(this.commonTags)
                .withRegistry(registry);
        this.roundTripsAvoided = estimateShards < 2
                ? null
                : Counter.builder(PREFIX + "roundtrips.avoided")
                        .description("Estimate: mongos-to-shard round trips the guard's plans saved against the"
                                + " driver's ORDERED bulks, assuming a hashed shard key over " + estimateShards
                                + " shards")
                        .baseUnit("round trips")
                        .tags(this.commonTags)
                        .withRegistry(registry);
        this.attempts = Counter.builder(PREFIX + "attempts")
                .description("Attempts of guarded write commands, first or retry")
                .baseUnit("attempts")
                .tags(this.commonTags)
                .withRegistry(registry);
        this.deadlineHits = Counter.builder(PREFIX + "deadline.hits")
                .description("Guarded write commands the server stopped at their deadline (maxTimeMS)")
                .baseUnit("commands")
                .tags(this.commonTags)
                .withRegistry(registry);
        this.gate = Timer.builder(PREFIX + "gate")
                .description("Time the overlap gate took to decide whether a retry may start, by verdict")
                .tags(this.commonTags)
                .withRegistry(registry);
        this.gateRefusals = Counter.builder(PREFIX + "gate.refusals")
                .description("Retries the overlap gate refused because an earlier copy still ran")
                .baseUnit("retries")
                .tags(this.commonTags)
                .withRegistry(registry);
    }

    private static HeldStructure find(Supplier<List<HeldStructure>> held, String name) {
        for (HeldStructure structure : held.get()) {
            if (structure.name().equals(name)) {
                return structure;
            }
        }
        return new HeldStructure(name, "", 0, HeldStructure.UNBOUNDED);
    }

    @Override
    public void writeCompleted(WriteCompleted event) {
        String namespace = event.namespace();
        writes.withTags(
                        "namespace",
                        namespace,
                        "operation",
                        event.operation(),
                        "outcome",
                        event.outcome().tag())
                .record(event.duration().toNanos(), TimeUnit.NANOSECONDS);
        sends.withTags("namespace", namespace).increment(event.sends());
        copiesStarted.withTags("namespace", namespace).increment(event.commands());
        rounds.withTags("namespace", namespace).record(event.rounds());
        if (event.planMode() == PlanMode.STRICT_ORDERED) {
            strictOrdered.withTags("namespace", namespace).increment();
        }
    }

    @Override
    public void planChosen(PlanChosen event) {
        plans.withTags(
                        "namespace",
                        event.namespace(),
                        "mode",
                        DefaultGuardObservationConvention.planTag(event.planMode()),
                        "reason",
                        event.reason())
                .increment();
    }

    @Override
    public void orderedBulkRegrouped(OrderedBulkRegrouped event) {
        if (roundTripsAvoided == null) {
            return;
        }
        roundTripsAvoided
                .withTags("namespace", event.namespace())
                .increment(event.plan().expectedRoundTripsAvoided(estimateShards));
    }

    @Override
    public void attemptStarted(AttemptStarted event) {
        attempts.withTags("namespace", event.namespace(), "attempt", event.attempt() == 1 ? "first" : "retry")
                .increment();
    }

    @Override
    public void deadlineHit(DeadlineHit event) {
        deadlineHits.withTags("namespace", event.namespace()).increment();
    }

    @Override
    public void gateDecided(GateDecided event) {
        gate.withTags("namespace", event.namespace(), "verdict", event.verdict().tag())
                .record(event.waited().toNanos(), TimeUnit.NANOSECONDS);
        if (event.verdict() == GateVerdict.REFUSED) {
            gateRefusals.withTags("namespace", event.namespace()).increment();
        }
    }
}
