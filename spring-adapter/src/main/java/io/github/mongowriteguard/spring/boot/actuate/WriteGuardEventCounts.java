package io.github.mongowriteguard.spring.boot.actuate;

import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.bulk.PlanMode;
import io.github.mongowriteguard.copies.GateVerdict;
import io.github.mongowriteguard.metrics.GuardEventListener;
import java.time.Clock;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * Counts what the health indicator and the info contributor report that the guard does not keep itself: retries the
 * overlap gate refused (a copy still ran), writes the server stopped at their deadline, and gate decisions taken
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
    private final AtomicLong plansInRounds = new AtomicLong();
    private final AtomicLong plansAsGiven = new AtomicLong();
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

    @Override
    public void planChosen(PlanChosen event) {
        if (event.planMode() == PlanMode.UNORDERED_ROUNDS) {
            plansInRounds.incrementAndGet();
            if (!event.reason().equals("none")) {
                plansWithoutSameCopyRetries.incrementAndGet();
            }
        } else {
            plansAsGiven.incrementAndGet();
        }
    }

    /** {@return guarded bulks that ran in rounds} */
    public long plansInRounds() {
        return plansInRounds.get();
    }

    /**
     * {@return guarded ORDERED bulks that ran as the driver's ORDERED bulk, as given (an unkeyed write, or
     * strictOrdered): about one mongos round trip per change of shard}
     */
    public long plansAsGiven() {
        return plansAsGiven.get();
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
