package io.github.mongowriteguard.spring.boot;

import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The guard's Spring Boot configuration cannot work: an invalid {@code mongo.write-guard.*} value, a server deadline
 * at or above the client's socket timeout, a {@code MongoClient} the guard did not configure, or a Spring Kafka error
 * handler whose retry budget does not fit the consumer's poll interval. Thrown while the
 * application starts, so it stops there instead of failing on its first write; {@link WriteGuardFailureAnalyzer}
 * turns it into Spring Boot's failure report ("Description" and "Action").
 */
public final class WriteGuardConfigurationException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /** The property at fault, or null when the problem is not one property. */
    private final @Nullable String property;

    /** What to change. */
    private final String action;

    /**
     * A configuration problem and its fix.
     *
     * @param property the property at fault, or null when it is not one property
     * @param problem  what is wrong, with the values
     * @param action   what to change
     * @param cause    the core's exception, if any
     */
    public WriteGuardConfigurationException(
            @Nullable String property, String problem, String action, @Nullable Throwable cause) {
        super(Objects.requireNonNull(problem, "problem") + "; " + Objects.requireNonNull(action, "action"), cause);
        this.property = property;
        this.action = action;
    }

    /**
     * An invalid value of one property: the core refused it.
     *
     * @param property the full property name, e.g. {@code mongo.write-guard.retry.max-attempts}
     * @param value    the bound value
     * @param refusal  the core's exception, whose message names the rule
     * @return the exception
     */
    static WriteGuardConfigurationException invalidProperty(String property, Object value, RuntimeException refusal) {
        return new WriteGuardConfigurationException(
                property,
                "Invalid value '" + (value instanceof Duration d ? d.toMillis() + "ms" : value) + "' for " + property
                        + ": " + refusal.getMessage(),
                "Change " + property + " to a valid value (or remove it to keep the default);"
                        + " mongo.write-guard.enabled=false turns the guard off",
                refusal);
    }

    /** {@return the property at fault, or null when the problem is not one property} */
    public @Nullable String property() {
        return property;
    }

    /** {@return what to change, for the failure report's "Action"} */
    public String action() {
        return action;
    }

    /** {@return what is wrong, without the action} */
    public String problem() {
        String message = getMessage();
        return message.substring(0, message.length() - action.length() - 2);
    }
}
