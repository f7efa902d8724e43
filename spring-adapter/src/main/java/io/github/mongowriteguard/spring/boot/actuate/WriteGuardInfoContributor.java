package io.github.mongowriteguard.spring.boot.actuate;

import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.retry.RetryPolicy;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.actuate.info.InfoContributor;

/**
 * The guard under {@code mongoWriteGuard} in {@code /actuator/info}: its settings (server deadline, strict ordering,
 * retry policy), the deadline in effect per client ({@code clients}: socket read timeout, {@code maxTimeMS}, the worst
 * case of one call) and what it saw (calls per plan mode, copies possibly running, the most at once, gate refusals,
 * deadline hits). Turned off
 * with {@code management.info.mongo-write-guard.enabled=false}.
 */
public class WriteGuardInfoContributor implements InfoContributor {
    private final WriteGuard guard;
    private final WriteGuardEventCounts counts;

    /**
     * A contributor for {@code guard}.
     *
     * @param guard  the guard
     * @param counts the counts of its gate and deadline events
     */
    public WriteGuardInfoContributor(WriteGuard guard, WriteGuardEventCounts counts) {
        this.guard = guard;
        this.counts = counts;
    }

    @Override
    public void contribute(Info.Builder builder) {
        WriteGuardSettings settings = guard.getSettings();
        RetryPolicy retry = settings.getRetryPolicy();
        Map<String, Object> settingsMap = new LinkedHashMap<>();
        settingsMap.put(
                "serverDeadline",
                settings.getServerDeadline()
                        .map(Object::toString)
                        .orElse("derived: " + settings.getServerDeadlineFraction() + " of the socket read timeout, "
                                + settings.getDefaultServerDeadline() + " without one"));
        settingsMap.put("strictOrdered", settings.isStrictOrdered());
        settingsMap.put("lastWriteWins", settings.isLastWriteWins());
        Map<String, Object> retryMap = new LinkedHashMap<>();
        retryMap.put("maxAttempts", retry.getMaxAttempts());
        retryMap.put("initialBackoff", retry.getInitialBackoff().toString());
        retryMap.put("multiplier", retry.getMultiplier());
        retryMap.put("maxBackoff", retry.getMaxBackoff().toString());
        retryMap.put("jitter", retry.getJitter());
        retryMap.put("gateGrace", retry.getGateGrace().toString());
        settingsMap.put("retry", retryMap);

        Map<String, Object> info = new LinkedHashMap<>();
        info.put("settings", settingsMap);
        info.put("clients", ClientDetails.of(guard));
        try {
            info.put("copiesPossiblyRunning", guard.getCopies().possiblyRunningCount());
            info.put("maxConcurrentCopies", guard.getCopies().maxPossiblyRunning());
        } catch (RuntimeException e) {
            info.put("copies", "unknown: " + e.getClass().getSimpleName());
        }
        info.putAll(WriteGuardHealthIndicator.eventDetails(counts));
        builder.withDetail("mongoWriteGuard", info);
    }
}
