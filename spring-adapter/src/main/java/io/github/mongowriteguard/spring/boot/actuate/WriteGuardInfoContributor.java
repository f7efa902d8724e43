package io.github.mongowriteguard.spring.boot.actuate;

import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.retry.RetryPolicy;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.actuate.info.InfoContributor;

/**
 * The guard under {@code mongoWriteGuard} in {@code /actuator/info}: its settings (the explicit server deadline, or the
 * share of the socket read timeout and the default that derive it; strict ordering; the retry policy), the deadline in effect per client ({@code clients}: socket read timeout, {@code maxTimeMS}, the worst
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
        if (settings.getServerDeadline().isPresent()) {
            settingsMap.put("serverDeadline", settings.getServerDeadline().get().toString());
        } else {
            // the share as the README's property table shows its default (0.6667), not 0.6666666666666666
            settingsMap.put("serverDeadlineFraction", rounded(settings.getServerDeadlineFraction()));
            settingsMap.put(
                    "defaultServerDeadline", settings.getDefaultServerDeadline().toString());
        }
        settingsMap.put("strictOrdered", settings.isStrictOrdered());
        settingsMap.put("lastWriteWins", settings.isLastWriteWins());
        settingsMap.put("parallelShardCommands", settings.getParallelShardCommands());
        Map<String, Object> settleHold = new LinkedHashMap<>();
        settleHold.put("maxCopies", settings.getSettleHoldMaxCopies());
        settleHold.put("maxAge", settings.getSettleHoldMaxAge().toString());
        settingsMap.put("settleHold", settleHold);
        settingsMap.put("retry", retryDetails(retry));

        Map<String, Object> info = new LinkedHashMap<>();
        info.put("settings", settingsMap);
        info.put("clients", ClientDetails.of(guard));
        try {
            info.put("copiesPossiblyRunning", guard.getCopies().possiblyRunningCount());
            info.put("maxConcurrentCopies", guard.getCopies().maxPossiblyRunning());
            info.put("heldForSettle", guard.getCopies().heldCount());
            info.put("copiesForgotten", guard.getCopies().forgottenCount());
        } catch (RuntimeException e) {
            info.put("copies", "unknown: " + e.getClass().getSimpleName());
        }
        info.putAll(WriteGuardHealthIndicator.eventDetails(counts));
        builder.withDetail("mongoWriteGuard", info);
    }

    /** The retry policy, as both the info entry and the health details show it. */
    static Map<String, Object> retryDetails(RetryPolicy retry) {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("maxAttempts", retry.getMaxAttempts());
        details.put("initialBackoff", retry.getInitialBackoff().toString());
        details.put("multiplier", rounded(retry.getMultiplier()));
        details.put("maxBackoff", retry.getMaxBackoff().toString());
        details.put("jitter", rounded(retry.getJitter()));
        details.put("gateGrace", retry.getGateGrace().toString());
        return details;
    }

    /** A share or factor to four decimals, as the README's property table writes them. */
    private static double rounded(double value) {
        return BigDecimal.valueOf(value).setScale(4, RoundingMode.HALF_UP).doubleValue();
    }
}
