package io.github.mongowriteguard.spring.boot.actuate;

import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.copies.CopyLedger;
import io.github.mongowriteguard.copies.CopyRecord;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The guard's health: {@code UP} while it can see every copy of every write; {@code UNKNOWN}, never {@code DOWN},
 * when it cannot: a copy whose client stopped waiting may still be running on the server, the copy ledger forgot such
 * a copy in the last {@link CopyLedger#RETENTION} (past its {@link CopyLedger#MAX_TRACKED} copies: the overlap gate is
 * blind for it), the overlap gate had to decide without {@code currentOp}, or the guard's accounting could not be
 * read. The guard never knows that MongoDB
 * is down (the driver's own indicator says that), and {@code UNKNOWN} does not change the application's aggregate
 * status with Spring Boot's default order, so a slow write cannot take an instance out of a load balancer.
 *
 * <p>Details: {@code copiesPossiblyRunning} and {@code maxConcurrentCopies} ({@link WriteGuard#getCopies()}),
 * {@code gateRefusals}, {@code deadlineHits} and {@code gateWithoutCurrentOp} ({@link WriteGuardEventCounts}), up
 * to {@value #LISTED_COPIES} of the copies possibly running (namespace, first send, attempts, sends, server opid), and,
 * once the ledger forgot a copy, {@code copiesForgotten} ({@link CopyLedger#forgottenCount()}) and
 * {@code lastCopyForgotten}.
 * Turned off with {@code management.health.mongo-write-guard.enabled=false}.
 */
public class WriteGuardHealthIndicator implements HealthIndicator {
    /** The most copies listed in the details. */
    public static final int LISTED_COPIES = 10;

    private final WriteGuard guard;
    private final WriteGuardEventCounts counts;
    private final Clock clock;

    /**
     * An indicator of {@code guard}.
     *
     * @param guard  the guard whose copies are reported
     * @param counts the counts of its gate and deadline events
     */
    public WriteGuardHealthIndicator(WriteGuard guard, WriteGuardEventCounts counts) {
        this(guard, counts, Clock.systemUTC());
    }

    /** As {@link #WriteGuardHealthIndicator(WriteGuard, WriteGuardEventCounts)}, on {@code clock} (tests). */
    WriteGuardHealthIndicator(WriteGuard guard, WriteGuardEventCounts counts, Clock clock) {
        this.guard = guard;
        this.counts = counts;
        this.clock = clock;
    }

    @Override
    public Health health() {
        CopyLedger ledger;
        List<CopyRecord> running;
        int maxConcurrent;
        long forgotten;
        Instant lastForgotten;
        try {
            ledger = guard.getCopies();
            running = ledger.possiblyRunning();
            maxConcurrent = ledger.maxPossiblyRunning();
            forgotten = ledger.forgottenCount();
            lastForgotten = ledger.lastForgotten();
        } catch (RuntimeException e) {
            return Health.unknown()
                    .withDetail("reason", "the guard's copy accounting could not be read")
                    .withException(e)
                    .build();
        }
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("copiesPossiblyRunning", running.size());
        details.put("maxConcurrentCopies", maxConcurrent);
        if (forgotten > 0) {
            details.put("copiesForgotten", forgotten);
            if (lastForgotten != null) {
                details.put("lastCopyForgotten", lastForgotten.toString());
            }
        }
        details.putAll(eventDetails(counts));
        details.put("clients", ClientDetails.of(guard));
        details.put(
                "retry",
                WriteGuardInfoContributor.retryDetails(guard.getSettings().getRetryPolicy()));
        List<String> blind = new ArrayList<>();
        if (!running.isEmpty()) {
            blind.add(
                    running.size() + " cop" + (running.size() == 1 ? "y" : "ies") + " whose client stopped waiting may"
                            + " still be running on the server: the guard cannot see whether they end or apply");
            details.put(
                    "copies",
                    running.stream()
                            .limit(LISTED_COPIES)
                            .map(WriteGuardHealthIndicator::describe)
                            .toList());
        }
        if (lastForgotten != null && lastForgotten.isAfter(clock.instant().minus(CopyLedger.RETENTION))) {
            // As long as the ledger would have tracked a copy: the forgotten one may still run, and the overlap gate
            // is blind for it. Not DOWN: restarting the instance or taking it out of a load balancer helps nothing.
            blind.add(forgotten + " cop" + (forgotten == 1 ? "y" : "ies") + " forgotten by the copy ledger while they"
                    + " may still run (more than " + CopyLedger.MAX_TRACKED + " copies given up on at once, or older"
                    + " than " + CopyLedger.RETENTION.toMinutes()
                    + " min): the overlap gate is blind for them, last at "
                    + lastForgotten);
        }
        if (counts.lastGateWithoutCurrentOp() != null) {
            blind.add("the overlap gate could not run currentOp (not permitted) and relies on server deadlines alone,"
                    + " last at " + counts.lastGateWithoutCurrentOp());
        }
        if (blind.isEmpty()) {
            return Health.up().withDetails(details).build();
        }
        details.put("reason", String.join("; ", blind));
        return Health.unknown().withDetails(details).build();
    }

    /** The event counts as details, or a note saying why there are none. */
    static Map<String, Object> eventDetails(WriteGuardEventCounts counts) {
        Map<String, Object> details = new LinkedHashMap<>();
        if (!counts.isAttached()) {
            details.put(
                    "events",
                    "not counted: the WriteGuard bean was not built by the auto-configuration; add"
                            + " WriteGuardEventCounts to its builder (attachTo) and declare it as a bean");
            return details;
        }
        details.put("gateRefusals", counts.gateRefusals());
        details.put("deadlineHits", counts.deadlineHits());
        details.put("gateWithoutCurrentOp", counts.gateWithoutCurrentOp());
        Map<String, Long> plans = new LinkedHashMap<>();
        counts.planModes().forEach((mode, count) -> plans.put(mode.name(), count));
        details.put("planModes", plans);
        details.put("plansWithoutSameCopyRetries", counts.plansWithoutSameCopyRetries());
        return details;
    }

    private static Map<String, Object> describe(CopyRecord copy) {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("namespace", copy.namespace());
        map.put("firstSent", copy.firstSent().toString());
        map.put("attempts", copy.attempts());
        map.put("sends", copy.sends());
        if (copy.serverOpId() != null) {
            map.put("serverOpId", copy.serverOpId());
            map.put("secsRunning", copy.secsRunning());
        }
        return map;
    }
}
