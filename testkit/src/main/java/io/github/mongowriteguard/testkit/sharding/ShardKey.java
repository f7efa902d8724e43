package io.github.mongowriteguard.testkit.sharding;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonValue;

/**
 * A shard key pattern such as {@code {_id: "hashed"}} or {@code {storeId: 1, productId: 1}}, and how a
 * document or a write's filter maps to a point in the key space. A hashed field is replaced by its
 * {@link ShardKeyHasher#hash 64-bit hash}, so chunk bounds of a hashed key are {@code NumberLong}s.
 *
 * <pre>{@code
 * ShardKey key = ShardKey.of(new BsonDocument("_id", new BsonString("hashed")));
 * BsonDocument point = key.pointOf(new BsonDocument("_id", new BsonInt32(7)));  // {_id: NumberLong(hash(7))}
 * }</pre>
 */
public final class ShardKey {
    private final BsonDocument pattern;
    private final List<String> fields;
    private final String hashedField;

    private ShardKey(BsonDocument pattern) {
        this.pattern = pattern.clone();
        this.fields = List.copyOf(pattern.keySet());
        String hashed = null;
        for (Map.Entry<String, BsonValue> entry : pattern.entrySet()) {
            BsonValue direction = entry.getValue();
            if (direction.isString() && direction.asString().getValue().equals("hashed")) {
                if (hashed != null) {
                    throw new IllegalArgumentException(
                            "shard key " + pattern.toJson() + " has more than one hashed field");
                }
                hashed = entry.getKey();
            } else if (!direction.isNumber() || direction.asNumber().doubleValue() != 1) {
                throw new IllegalArgumentException(
                        "shard key field " + entry.getKey() + " must be 1 or \"hashed\", was " + direction);
            }
        }
        this.hashedField = hashed;
    }

    /**
     * A shard key from its pattern, e.g. {@code {_id: "hashed"}} or {@code {storeId: 1, productId: 1}}.
     *
     * @param pattern the pattern
     * @return the key
     * @throws IllegalArgumentException for an empty pattern, a direction other than 1 or "hashed", or two hashed
     *                                 fields
     */
    public static ShardKey of(BsonDocument pattern) {
        Objects.requireNonNull(pattern, "pattern");
        if (pattern.isEmpty()) {
            throw new IllegalArgumentException("shard key pattern must not be empty");
        }
        return new ShardKey(pattern);
    }

    /**
     * The pattern as given, e.g. {@code {_id: "hashed"}}.
     *
     * @return a copy of the pattern
     */
    public BsonDocument pattern() {
        return pattern.clone();
    }

    /** {@return the key's field names in pattern order} */
    public List<String> fields() {
        return fields;
    }

    /** {@return whether one field of the key is hashed} */
    public boolean isHashed() {
        return hashedField != null;
    }

    /**
     * The point of an inserted document: its key fields in pattern order; a missing field counts as null.
     *
     * @param document the document
     * @return the point, hashed fields as {@code NumberLong} hashes
     */
    public BsonDocument pointOf(BsonDocument document) {
        BsonDocument point = new BsonDocument();
        for (String field : fields) {
            BsonValue value = valueAt(document, field);
            point.put(field, transform(field, value == null ? BsonNull.VALUE : value));
        }
        return point;
    }

    /**
     * The point a write's filter pins down, when it has an equality on every key field ({@code {f: v}} or
     * {@code {f: {$eq: v}}}); empty when the write must be broadcast.
     *
     * @param filter the write's filter
     * @return the point, or empty
     */
    public Optional<BsonDocument> pointOfFilter(BsonDocument filter) {
        BsonDocument point = new BsonDocument();
        for (String field : fields) {
            BsonValue value = filter.containsKey(field) ? filter.get(field) : valueAt(filter, field);
            if (value == null) {
                return Optional.empty();
            }
            if (value.isDocument()
                    && !value.asDocument().isEmpty()
                    && value.asDocument().getFirstKey().startsWith("$")) {
                BsonDocument operators = value.asDocument();
                if (operators.size() != 1 || !operators.containsKey("$eq")) {
                    return Optional.empty();
                }
                value = operators.get("$eq");
            }
            if (value.isArray() || value.isRegularExpression()) {
                return Optional.empty();
            }
            point.put(field, transform(field, value));
        }
        return Optional.of(point);
    }

    private BsonValue transform(String field, BsonValue value) {
        return field.equals(hashedField) ? new BsonInt64(ShardKeyHasher.hash(value)) : value;
    }

    /** The value at a dotted path, or null when a part is missing. */
    private static BsonValue valueAt(BsonDocument document, String path) {
        BsonValue current = document;
        for (String part : path.split("\\.")) {
            if (current == null || !current.isDocument()) {
                return null;
            }
            current = current.asDocument().get(part);
        }
        return current;
    }

    /** A bound document with the same value in every field (MinKey or MaxKey). */
    BsonDocument bound(BsonValue value) {
        BsonDocument bound = new BsonDocument();
        fields.forEach(field -> bound.put(field, value));
        return bound;
    }

    static int comparePoints(BsonDocument a, BsonDocument b) {
        List<BsonValue> x = new ArrayList<>(a.values());
        List<BsonValue> y = new ArrayList<>(b.values());
        for (int i = 0; i < Math.min(x.size(), y.size()); i++) {
            int c = BsonOrder.INSTANCE.compare(x.get(i), y.get(i));
            if (c != 0) {
                return c;
            }
        }
        return Integer.compare(x.size(), y.size());
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ShardKey other && pattern.equals(other.pattern);
    }

    @Override
    public int hashCode() {
        return pattern.hashCode();
    }

    @Override
    public String toString() {
        return pattern.toJson();
    }
}
