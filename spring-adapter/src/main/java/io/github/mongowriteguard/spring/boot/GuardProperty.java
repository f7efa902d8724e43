package io.github.mongowriteguard.spring.boot;

import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/** Applies one {@code mongo.write-guard.*} value to a core builder, naming the property when the core refuses it. */
final class GuardProperty {
    private GuardProperty() {}

    /**
     * Passes a set value to the core's setter; an unset one (null) keeps the core's default.
     *
     * @throws WriteGuardConfigurationException naming the property, when the core refuses the value
     */
    static <V> void apply(String property, @Nullable V value, Consumer<V> setter) {
        if (value == null) {
            return;
        }
        try {
            setter.accept(value);
        } catch (IllegalArgumentException | IllegalStateException refused) {
            throw WriteGuardConfigurationException.invalidProperty(property, value, refused);
        }
    }
}
