package io.github.mongowriteguard.spring.boot;

import com.mongodb.MongoClientSettings;
import io.github.mongowriteguard.WriteGuardSettings;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks, when Spring Boot builds the client, what the guard would otherwise refuse on the first write: a server
 * deadline at or above the socket read timeout, a Client-Side Operation Timeout ({@code timeoutMS}) and an
 * unacknowledged write concern ({@code w=0}); and warns about settings the guard accepts at a cost:
 * {@code retryWrites=false}, and a server deadline so short that bulks end UNKNOWN.
 */
final class ClientSettingsCheck {
    private static final Logger LOG = LoggerFactory.getLogger(ClientSettingsCheck.class);

    /**
     * Below this server deadline the guard writes, but warns: it must cover a round trip and the server's work for a
     * whole command (up to 100,000 statements or 16 MiB), and with {@code socketTimeoutMS=100} (a 66 ms deadline)
     * every bulk of 1,000 rows ended UNKNOWN. Not a failure: the driver accepts any socket timeout, and fault drills
     * and tests use short ones on purpose.
     */
    static final Duration SHORT_DEADLINE = Duration.ofSeconds(1);

    private ClientSettingsCheck() {}

    /**
     * @param settings the guard's settings
     * @param builder  the client's settings builder, after every customizer
     * @throws WriteGuardConfigurationException naming the fix, when the guard could not write through this client
     */
    static void check(WriteGuardSettings settings, MongoClientSettings.Builder builder) {
        MongoClientSettings read = builder.build();
        Long timeoutMs = read.getTimeout(TimeUnit.MILLISECONDS);
        if (timeoutMs != null) {
            throw new WriteGuardConfigurationException(
                    null,
                    "The MongoDB client uses a Client-Side Operation Timeout (timeoutMS=" + timeoutMs
                            + "): the driver would then set every write's maxTimeMS itself, and the guard refuses to"
                            + " write through it",
                    "Remove timeoutMS from spring.mongodb.uri (or from your MongoClientSettingsBuilderCustomizer) and"
                            + " choose the deadline with mongo.write-guard.server-deadline or the socket timeout"
                            + " (socketTimeoutMS); mongo.write-guard.enabled=false turns the guard off",
                    null);
        }
        if (!read.getWriteConcern().isAcknowledged()) {
            throw new WriteGuardConfigurationException(
                    null,
                    "The MongoDB client's write concern is unacknowledged ("
                            + read.getWriteConcern().asDocument().toJson()
                            + ", e.g. w=0 in spring.mongodb.uri): no server confirms a write, so the guard cannot"
                            + " know what a write did and refuses every write",
                    "Remove w=0 from spring.mongodb.uri (or your MongoClientSettingsBuilderCustomizer) and use an"
                            + " acknowledged write concern (w=1, the default, or w=majority); a write that must not wait"
                            + " belongs outside the guard: mongo.write-guard.enabled=false turns the guard off",
                    null);
        }
        if (!read.getRetryWrites()) {
            LOG.warn("The MongoDB client has retryWrites=false: the guard sends no transaction number, so a lost reply"
                    + " leaves writes UNKNOWN (no resend of the same server copy; the outcome says so). Remove"
                    + " retryWrites=false from spring.mongodb.uri to let the guard resend the same copy safely");
        }
        int readTimeoutMs = read.getSocketSettings().getReadTimeout(TimeUnit.MILLISECONDS);
        try {
            Duration deadline =
                    settings.resolveServerDeadline(readTimeoutMs == 0 ? null : Duration.ofMillis(readTimeoutMs));
            if (deadline.compareTo(SHORT_DEADLINE) < 0) {
                LOG.warn(
                        "The guard's server deadline is {} ms (socket read timeout {} ms): a command of many writes"
                                + " rarely finishes in it, and a write whose deadline passes ends UNKNOWN or FAILED, not"
                                + " applied. Raise socketTimeoutMS in spring.mongodb.uri (the deadline is 2/3 of it"
                                + " unless mongo.write-guard.server-deadline is set) to at least {} ms",
                        deadline.toMillis(),
                        readTimeoutMs,
                        SHORT_DEADLINE.toMillis() * 3 / 2);
            }
        } catch (IllegalStateException refused) {
            String deadline =
                    settings.getServerDeadline().map(d -> d.toMillis() + " ms").orElse("derived");
            throw new WriteGuardConfigurationException(
                    settings.getServerDeadline().isPresent() ? WriteGuardProperties.PREFIX + "server-deadline" : null,
                    "The guard's server deadline (" + deadline + ") is not below the MongoDB client's socket read"
                            + " timeout (" + readTimeoutMs + " ms): the client would give up before the server"
                            + " stops the write, and the guard refuses every write (" + refused.getMessage() + ")",
                    "Lower mongo.write-guard.server-deadline below " + readTimeoutMs + " ms, or remove it (the"
                            + " deadline is then 2/3 of the socket timeout), or raise the socket timeout"
                            + " (socketTimeoutMS in spring.mongodb.uri, or a MongoClientSettingsBuilderCustomizer);"
                            + " mongo.write-guard.enabled=false turns the guard off",
                    refused);
        }
    }
}
