package io.github.mongowriteguard.bulk;

import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * What a {@link BulkPlan} does with one write of the caller's bulk, and why, in words a person can read in a log.
 *
 * <pre>{@code
 * WriteDecision d = plan.decision(3);
 * d.toString();   // "#3 UpdateOneModel: round 2: after #1 on the same _id 5"
 * }</pre>
 *
 * Immutable: {@link #id()} and {@link #filter()} return copies.
 *
 * <p>Implemented by the library only (callers read it; it may gain methods).
 */
public interface WriteDecision {

    /**
     * Which write this is.
     *
     * @return the write's index in the caller's list
     */
    int index();

    /**
     * The kind of the write.
     *
     * @return the driver model it was given as
     */
    WriteKind kind();

    /**
     * Whether the write touches exactly one document named by {@code _id} (including an insert left without
     * {@code _id}, whose document no other write can name).
     *
     * @return {@code true} for a keyed write, which keeps its order only among the writes on its {@code _id}
     */
    boolean isKeyed();

    /**
     * The {@code _id} the write is keyed by.
     *
     * @return a copy of the {@code _id}; empty when unkeyed or for an insert left without {@code _id}
     */
    Optional<BsonValue> id();

    /**
     * The whole filter as sent, e.g. {@code {_id: 5, region: "eu"}}.
     *
     * @return a copy of the filter; empty for inserts
     */
    Optional<BsonDocument> filter();

    /**
     * The round that runs this write.
     *
     * @return the round number, 1 for the first round
     */
    int round();

    /**
     * Index of the previous write on the same {@code _id}, or -1. In an ordered request, if that write does not apply,
     * this one is not run ("skipped because index i failed").
     *
     * @return the index of the previous write on the same {@code _id} in the caller's list, or -1
     */
    int previousOnKey();

    /**
     * Why the write runs where it does.
     *
     * @return one sentence, e.g. {@code round 2: after #1 on the same _id 5}
     */
    String reason();
}
