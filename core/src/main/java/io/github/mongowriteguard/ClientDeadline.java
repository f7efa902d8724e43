package io.github.mongowriteguard;

import io.github.mongowriteguard.retry.RetryPolicy;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The server deadline in effect for the writes of one client the guard {@link WriteGuard#configure configured}: what
 * the guard read from the client's settings and what it makes of it, for a health page or a startup log.
 *
 * <pre>{@code
 * guard.getClientDeadlines().forEach(d -> log.info("client {}: maxTimeMS {} ms ({})",
 *     d.client(), d.serverDeadline().toMillis(), d.source()));
 * }</pre>
 *
 * @param client            the client's number, in the order the guard configured them (from 1)
 * @param socketReadTimeout the client's socket read timeout, {@link Duration#ZERO} when it has none
 * @param serverDeadline    the {@code maxTimeMS} every write of the client carries; {@link Duration#ZERO} when the
 *                          guard refuses to write through the client ({@link #problem()} says why)
 * @param source            where the deadline comes from, the name of the setting that gave it:
 *                          {@code "serverDeadline"} (explicit), {@code "serverDeadlineFraction"} (that share of the
 *                          socket read timeout) or {@code "defaultServerDeadline"} (no socket read timeout)
 * @param problem           why the guard refuses every write of this client, or empty
 */
public record ClientDeadline(
        int client, Duration socketReadTimeout, Duration serverDeadline, String source, String problem) {

    /**
     * Checks that no value is null.
     *
     * @param client            the client's number, from 1
     * @param socketReadTimeout the socket read timeout, zero for none
     * @param serverDeadline    the deadline, zero when refused
     * @param source            where the deadline comes from
     * @param problem           why the guard refuses the client's writes, or empty
     */
    public ClientDeadline {
        Objects.requireNonNull(socketReadTimeout, "socketReadTimeout");
        Objects.requireNonNull(serverDeadline, "serverDeadline");
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(problem, "problem");
    }

    /** The deadline a client with these timeouts gets under {@code settings}, or the guard's refusal. */
    static ClientDeadline resolve(
            int client, @Nullable Long timeoutMs, int readTimeoutMs, WriteGuardSettings settings) {
        Duration socket = Duration.ofMillis(readTimeoutMs);
        String source = settings.getServerDeadline().isPresent()
                ? "serverDeadline"
                : readTimeoutMs == 0 ? "defaultServerDeadline" : "serverDeadlineFraction";
        if (timeoutMs != null) {
            return new ClientDeadline(
                    client,
                    socket,
                    Duration.ZERO,
                    source,
                    "the client sets timeoutMS (" + timeoutMs + "); the guard refuses to write through it");
        }
        try {
            Duration deadline = settings.resolveServerDeadline(readTimeoutMs == 0 ? null : socket);
            return new ClientDeadline(client, socket, deadline, source, "");
        } catch (IllegalStateException | IllegalArgumentException refused) {
            return new ClientDeadline(client, socket, Duration.ZERO, source, refused.getMessage());
        }
    }

    /**
     * The longest one guarded call on this client can take before the guard gives up: every attempt until the socket
     * read timeout, every backoff at its longest, and the overlap gate's grace before each retry (server selection
     * while no server answers comes on top).
     *
     * @param policy the guard's retry policy
     * @return the worst case, or empty when the client has no socket read timeout (an attempt may wait forever)
     */
    public Optional<Duration> worstCasePerCall(RetryPolicy policy) {
        if (socketReadTimeout.isZero()) {
            return Optional.empty();
        }
        int attempts = policy.getMaxAttempts();
        return Optional.of(socketReadTimeout
                .multipliedBy(attempts)
                .plus(policy.getMaxTotalBackoff())
                .plus(policy.getGateGrace().multipliedBy(attempts - 1L)));
    }
}
