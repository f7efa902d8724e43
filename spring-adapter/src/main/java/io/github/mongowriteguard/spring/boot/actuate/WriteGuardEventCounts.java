package io.github.mongowriteguard.spring.boot.actuate;

import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.bulk.PlanMode;
import io.github.mongowriteguard.copies.GateVerdict;
import io.github.mongowriteguard.metrics.GuardEventListener;
import java.time.Clock;
import java.time.Instant;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * Counts what the health indicator and the info contributor report that the guard does not keep itself: guarded calls
 * per plan mode, retries the overlap gate refused (a copy still ran), writes the server stopped at their deadline, and
 * gate decisions taken
 * without {@code currentOp} (the user may not run it, so the gate could not see running copies). A
 * {@link GuardEventListener}: the auto-configuration adds it to the guard it builds; for a {@link WriteGuard} bean of
 * your own, add it yourself ({@code WriteGuard.builder().addListener(counts)}) and declare it as a bean.
 */
public final class WriteGuardEventCounts implements GuardEventListener {
    private final Clock clock;
    private final AtomicLong gateRefusals = new AtomicLong();
    private final AtomicLong deadlineHits = new AtomicLong();
    private final AtomicLong gateWithoutCurrentOp = new AtomicLong();
    private final AtomicReference<@Nullable Instant> lastGateWithoutCurrentOp = new AtomicReference<>();
    private final Map<PlanMode, LongAdder> planModes = new EnumMap<>(PlanMode.class);
    private final AtomicLong plansWithoutSameCopyRetries = new AtomicLong();
    private volatile boolean attached;

    /** Counts on the system clock. */
    public WriteGuardEventCounts() {
        this(Clock.systemUTC());
    }

    /**
     * Counts on {@code clock}, which stamps the last gate decision taken without {@code currentOp}.
     *
     * @param clock the clock
     */
    public WriteGuardEventCounts(Clock clock) {
        this.clock = clock;
        for (PlanMode mode : PlanMode.values()) {
            planModes.put(mode, new LongAdder()); // filled once: reads and increments need no lock
        }
    }

    /**
     * Adds these counts to a guard's builder, so that they see its events.
     *
     * @param builder the builder of the guard to count
     * @return the builder
     */
    public WriteGuard.Builder attachTo(WriteGuard.Builder builder) {
        attached = true;
        return builder.addListener(this);
    }

    /** {@return whether these counts were added to the guard's builder (false: the counts stay at zero)} */
    public boolean isAttached() {
        return attached;
    }

    @Override
    public void writeCompleted(WriteCompleted event) {
        planModes.get(event.planMode()).increment();
    }

    @Override
    public void deadlineHit(DeadlineHit event) {
        deadlineHits.incrementAndGet();
    }

    @Override
    public void gateDecided(GateDecided event) {
        if (event.verdict() == GateVerdict.REFUSED) {
            gateRefusals.incrementAndGet();
        } else if (event.verdict() == GateVerdict.BLIND) {
            gateWithoutCurrentOp.incrementAndGet();
            lastGateWithoutCurrentOp.set(clock.instant());
        }
    }

    /**
     * {@return guarded calls per plan mode: unordered rounds, the caller's ORDERED bulk kept as given (a write the
     * guard cannot key), strict ORDERED}
     */
    public Map<PlanMode, Long> planModes() {
        Map<PlanMode, Long> counts = new EnumMap<>(PlanMode.class);
        planModes.forEach((mode, count) -> counts.put(mode, count.sum()));
        return counts;
    }

    @Override
    public void planChosen(PlanChosen event) {
        if (event.planMode() == PlanMode.UNORDERED_ROUNDS && !event.reason().equals("none")) {
            plansWithoutSameCopyRetries.incrementAndGet();
        }
    }

    /** {@return guarded bulks in rounds with a multi-document write, which is never resent as the same copy} */
    public long plansWithoutSameCopyRetries() {
        return plansWithoutSameCopyRetries.get();
    }

    /** {@return retries the overlap gate refused because a copy of the write still ran} */
    public long gateRefusals() {
        return gateRefusals.get();
    }

    /** {@return writes the server stopped at their deadline ({@code MaxTimeMSExpired})} */
    public long deadlineHits() {
        return deadlineHits.get();
    }

    /** {@return gate decisions taken on the deadline alone because {@code currentOp} was not permitted} */
    public long gateWithoutCurrentOp() {
        return gateWithoutCurrentOp.get();
    }

    /** {@return when the gate last decided without {@code currentOp}, or null if it never did} */
    public @Nullable Instant lastGateWithoutCurrentOp() {
        return lastGateWithoutCurrentOp.get();
    }
}
