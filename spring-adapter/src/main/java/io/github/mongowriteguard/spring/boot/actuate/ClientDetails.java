package io.github.mongowriteguard.spring.boot.actuate;

import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.WriteGuard.ClientDeadline;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The deadline in effect per client the guard configured, as Actuator shows it: numbers in milliseconds, never a
 * host or a connection string.
 */
final class ClientDetails {
    private ClientDetails() {}

    static List<Map<String, Object>> of(WriteGuard guard) {
        return guard.getClientDeadlines().stream().map(d -> of(guard, d)).toList();
    }

    private static Map<String, Object> of(WriteGuard guard, ClientDeadline deadline) {
        Map<String, Object> client = new LinkedHashMap<>();
        client.put("client", deadline.client());
        client.put("socketReadTimeoutMs", deadline.socketReadTimeout().toMillis());
        if (!deadline.problem().isEmpty()) {
            client.put("problem", deadline.problem());
            return client;
        }
        client.put("serverDeadlineMs", deadline.serverDeadline().toMillis());
        client.put("serverDeadlineFrom", deadline.source());
        deadline.worstCasePerCall(guard.getSettings().getRetryPolicy())
                .ifPresent(worst -> client.put("worstCasePerCallMs", worst.toMillis()));
        return client;
    }
}
