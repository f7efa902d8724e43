package io.github.mongowriteguard.spring.boot;

import com.mongodb.MongoClientSettings;
import io.github.mongowriteguard.WriteGuardSettings;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Checks, when Spring Boot builds the client, what the guard would otherwise refuse on the first write: a server
 * deadline at or above the socket read timeout, and a Client-Side Operation Timeout ({@code timeoutMS}).
 */
final class ClientSettingsCheck {
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
        int readTimeoutMs = read.getSocketSettings().getReadTimeout(TimeUnit.MILLISECONDS);
        try {
            settings.resolveServerDeadline(readTimeoutMs == 0 ? null : Duration.ofMillis(readTimeoutMs));
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
