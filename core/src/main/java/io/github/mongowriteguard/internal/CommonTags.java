package io.github.mongowriteguard.internal;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The check of the user's common tags for the guard's meters ({@code WriteGuardSettings.Builder.commonTags},
 * {@link MicrometerGuardMetrics}, {@code MicrometerReadMetrics}): bounded, named values the user chooses (an
 * application, a region), never a document value, an id or a connection string. Names no Micrometer type, so the
 * settings load without Micrometer.
 *
 * <pre>{@code
 * Map<String, String> tags = CommonTags.check("commonTags", Map.of("app", "orders"));
 * }</pre>
 */
public final class CommonTags {
    /** The tags the guard's own meters carry; a common tag of the same key would replace them. */
    public static final Set<String> GUARD_TAG_KEYS =
            Set.of("namespace", "operation", "outcome", "attempt", "verdict", "mode", "reason", "shard", "kind");

    private CommonTags() {}

    /**
     * An unmodifiable copy of {@code tags}, in their order.
     *
     * @param setting the setting's name, for the messages
     * @param tags    the tags
     * @return the checked copy
     * @throws IllegalArgumentException if the map, a key or a value is null or blank, or a key is one of the guard's
     *                                  own tag keys
     */
    public static Map<String, String> check(String setting, Map<String, String> tags) {
        if (tags == null) {
            throw new IllegalArgumentException(
                    setting + " is null; pass Map.of() for no common tags, or e.g. Map.of(\"app\", \"orders\")");
        }
        Map<String, String> copy = new LinkedHashMap<>();
        for (Map.Entry<String, String> tag : tags.entrySet()) {
            String key = tag.getKey();
            String value = tag.getValue();
            if (key == null || key.isBlank()) {
                throw new IllegalArgumentException(
                        setting + " has a " + (key == null ? "null" : "blank") + " key; name each tag, e.g. \"app\"");
            }
            if (GUARD_TAG_KEYS.contains(key)) {
                throw new IllegalArgumentException(setting + " has the key \"" + key + "\", which the guard's meters"
                        + " already carry (" + String.join(", ", new TreeSet<>(GUARD_TAG_KEYS))
                        + "); choose another key, e.g. \"app\"");
            }
            if (value == null || value.isBlank()) {
                throw new IllegalArgumentException(setting + " has a " + (value == null ? "null" : "blank")
                        + " value for \"" + key + "\"; a meter's tag needs a value, e.g. \"orders\"");
            }
            copy.put(key, value);
        }
        return Collections.unmodifiableMap(copy);
    }
}
