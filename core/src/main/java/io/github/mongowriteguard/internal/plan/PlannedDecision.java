package io.github.mongowriteguard.internal.plan;

import io.github.mongowriteguard.bulk.WriteDecision;
import io.github.mongowriteguard.bulk.WriteKind;
import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link PlannedBulk} does with one write of the caller's bulk, and why, in words a person can read in a log.
 *
 * <pre>{@code
 * WriteDecision d = plan.decision(3);
 * d.toString();   // "#3 UpdateOneModel: round 2: after #1 on the same _id 5"
 * }</pre>
 *
 * Immutable: {@link #id()} and {@link #filter()} return copies.
 */
final class PlannedDecision implements WriteDecision {

    private final int index;
    private final WriteKind kind;
    private final boolean keyed;

    @Nullable
    private final BsonValue id;

    @Nullable
    private final BsonDocument filter;

    private final int round;
    private final int previousOnKey;
    private final String reason;

    PlannedDecision(
            int index,
            WriteKind kind,
            boolean keyed,
            @Nullable BsonValue id,
            @Nullable BsonDocument filter,
            int round,
            int previousOnKey,
            String reason) {
        this.index = index;
        this.kind = kind;
        this.keyed = keyed;
        this.id = id; // shared with the plan, which never changes it; copied on the way out
        this.filter = filter;
        this.round = round;
        this.previousOnKey = previousOnKey;
        this.reason = reason;
    }

    /**
     * Which write this is.
     *
     * @return the write's index in the caller's list
     */
    public int index() {
        return index;
    }

    /**
     * The kind of the write.
     *
     * @return the driver model it was given as
     */
    public WriteKind kind() {
        return kind;
    }

    /**
     * Whether the write touches exactly one document named by {@code _id} (including an insert left without
     * {@code _id}, whose document no other write can name).
     *
     * @return {@code true} for a keyed write, which keeps its order only among the writes on its {@code _id}
     */
    public boolean isKeyed() {
        return keyed;
    }

    /**
     * The {@code _id} the write is keyed by.
     *
     * @return a copy of the {@code _id}; empty when unkeyed or for an insert left without {@code _id}
     */
    public Optional<BsonValue> id() {
        return Optional.ofNullable(id).map(Ids::copy);
    }

    /**
     * The whole filter as sent, e.g. {@code {_id: 5, region: "eu"}}.
     *
     * @return a copy of the filter; empty for inserts
     */
    public Optional<BsonDocument> filter() {
        return Optional.ofNullable(filter).map(BsonDocument::clone);
    }

    /**
     * The round that runs this write.
     *
     * @return the round number, 1 for the first round
     */
    public int round() {
        return round;
    }

    /**
     * Index of the previous write on the same {@code _id}, or -1. In an ordered request, if that write does not apply,
     * this one is not run ("skipped because index i failed").
     *
     * @return the index of the previous write on the same {@code _id} in the caller's list, or -1
     */
    public int previousOnKey() {
        return previousOnKey;
    }

    /**
     * Why the write runs where it does.
     *
     * @return one sentence, e.g. {@code round 2: after #1 on the same _id 5}
     */
    public String reason() {
        return reason;
    }

    @Override
    public String toString() {
        return "#" + index + ' ' + kind.modelName() + ": " + reason;
    }
}
