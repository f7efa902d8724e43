package io.github.mongowriteguard.bulk;

import java.util.List;
import java.util.Optional;
import org.bson.BsonValue;

/**
 * How a guarded bulk write runs: its rounds, and a reason for every decision. Made by the guard for each bulk (
 * {@code GuardedCollection.plan(models, options)} shows it before anything is sent).
 *
 * <pre>{@code
 * BulkPlan plan = guarded.plan(models, new BulkWriteOptions());
 * plan.mode();                 // UNORDERED_ROUNDS
 * plan.rounds();               // [Round 1 (UNORDERED, 998 writes), Round 2 (UNORDERED, 2 writes)]
 * plan.previousOnKey(9);       // 2: write 9 runs after write 2, on the same _id
 * plan.decision(9).reason();   // "round 2: after #2 on the same _id 12"
 * }</pre>
 *
 * <p>Every index of the caller's list is in exactly one round. In an {@link PlanMode#UNORDERED_ROUNDS} plan, round k
 * holds the k-th run of every {@code _id}: a run is a stretch of the key's writes of one type that travels in one
 * command ({@link Round#keyRuns()}), or a single write where sending one write per round costs less.
 *
 * <p>Immutable and thread-safe.
 *
 * <p>Implemented by the library only (callers read it; it may gain methods).
 */
public interface BulkPlan {

    /**
     * How the plan runs the caller's bulk.
     *
     * @return the mode: unordered rounds, or one ORDERED round as given ({@link #reason()} says why)
     */
    PlanMode mode();

    /**
     * Why the plan has this mode and this many rounds.
     *
     * @return one or two sentences, for logs and exception messages
     */
    String reason();

    /**
     * The number of writes in the caller's bulk.
     *
     * @return the number of writes, 0 for an empty bulk
     */
    int size();

    /**
     * Whether the caller's bulk was empty: then there is no round.
     *
     * @return {@code true} when the bulk had no write
     */
    boolean isEmpty();

    /**
     * The rounds, first to last; each one driver {@code bulkWrite}.
     *
     * @return the rounds, unmodifiable; empty for an empty bulk
     */
    List<Round> rounds();

    /**
     * Index of the previous write on the same {@code _id}, or -1 (first on its {@code _id}, or unkeyed). In an
     * ordered request, an executor skips write {@code index} when that write did not apply: the guard's failures are
     * per {@code _id}.
     *
     * @param index the write's index in the caller's bulk
     * @return the index of the previous write on the same {@code _id}, or -1
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    int previousOnKey(int index);

    /**
     * The {@code _id} write {@code index} is keyed by, as {@link #decision(int)}{@code .id()} gives it, without building
     * the rest of the decision (its filter and its reason).
     *
     * @param index the write's index in the caller's bulk
     * @return a copy of the {@code _id}, or empty when the write is unkeyed or an insert left without {@code _id}
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    Optional<BsonValue> id(int index);

    /**
     * The kind of write {@code index}.
     *
     * @param index the write's index in the caller's bulk
     * @return its kind: the driver model it was given as
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    WriteKind kind(int index);

    /**
     * The kind write {@code index} is sent as: its own kind, except an {@code UpdateManyModel} / {@code DeleteManyModel}
     * whose filter pins {@code _id}, which is sent as a single-document statement ({@code UPDATE_ONE} /
     * {@code DELETE_ONE}: {@code multi: false} / {@code limit: 1}) when the collection allows it.
     *
     * @param index the write's index in the caller's bulk
     * @return the kind of statement the encoder writes
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    WriteKind sentAs(int index);

    /**
     * The {@code _id} the guard assigned to insert {@code index} whose object cannot hold it (a record with a null
     * id): the encoder sends it after the document's own fields, where the driver's {@code IdHoldingBsonWriter} adds
     * the one it generates.
     *
     * @param index the write's index in the caller's bulk
     * @return the {@code _id} to append, or empty when the document carries its own (or none is assigned)
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    Optional<BsonValue> appendedId(int index);

    /**
     * The first write that is not keyed, which decides a {@link PlanMode#PRESERVE_ORDER} plan.
     *
     * @return its index, or -1 when every write is keyed
     */
    int firstUnkeyed();

    /**
     * Why the plan does not run every write in rounds with same-copy retries, as a bounded metric tag value:
     * {@code none} (every write in rounds, each resendable as the same copy); {@code strict-ordered}; or, for the first
     * unkeyed write of a {@link PlanMode#PRESERVE_ORDER} plan or the first multi-document write of another plan,
     * {@code multi-document}, {@code multi-document-kept} (it pins {@code _id} but the collection keeps it
     * multi-document), {@code filter-not-id}, {@code collation}.
     *
     * @return the tag value
     */
    String reasonTag();

    /**
     * What would make write {@code index} keyed, for logs; empty when it is keyed.
     *
     * @param index the write's index in the caller's bulk
     * @return e.g. "pin _id by equality in its filter ({_id: v}) to make it a single-document write"
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    Optional<String> keyedIf(int index);

    /**
     * Why write {@code index} is not keyed, and so what would key it; no document values.
     *
     * @param index the write's index in the caller's bulk
     * @return e.g. "can change many documents", or empty when the write is keyed
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    Optional<String> unkeyedBecause(int index);

    /**
     * The later write that makes write {@code index} unnecessary under last-write-wins
     * (the guard's last-write-wins option): a full replacement or delete of the same {@code _id}. Such a write is in
     * no round and is not sent.
     *
     * @param index the write's index in the caller's bulk
     * @return the index of the superseding write, or -1 when write {@code index} is sent
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    int supersededBy(int index);

    /**
     * Whether any write is left out as superseded ({@link #supersededBy(int)}).
     *
     * @return {@code true} when some write is not sent under last-write-wins
     */
    boolean hasSuperseded();

    /**
     * The round that sends write {@code index}.
     *
     * @param index the write's index in the caller's bulk
     * @return the round number, 1 for the first round; 0 for a write left out as superseded
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    int roundOf(int index);

    /**
     * What the plan does with write {@code index}, and why.
     *
     * @param index the write's index in the caller's bulk
     * @return the decision, built when called
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    WriteDecision decision(int index);

    /**
     * {@link #decision(int)} for every write, in index order.
     *
     * @return an unmodifiable list view whose elements are built when read
     */
    List<WriteDecision> decisions();

    /**
     * Expected mongos-to-shard round trips for this plan on a collection with a hashed shard key over
     * {@code shardCount} shards, writes scattered uniformly: {@code 1 + (n - 1)(1 - 1/S)} for an ORDERED round of n
     * writes, one per 100,000 writes for an UNORDERED round. An estimate for logs and dashboards, not a promise.
     *
     * @param shardCount the number of shards the collection is spread over (1 for an unsharded collection)
     * @return the expected number of mongos-to-shard round trips of all rounds together
     * @throws IllegalArgumentException if {@code shardCount} is below 1
     */
    double expectedRoundTrips(int shardCount);

    /**
     * Expected mongos-to-shard round trips this plan saves against the caller's ORDERED bulk sent as the driver sends
     * it (one child batch per change of target shard, {@code 1 + (n - 1)(1 - 1/S)}), on a collection with a hashed
     * shard key over {@code shardCount} shards: that estimate minus {@link #expectedRoundTrips(int)}, never below 0.
     * Meaningful for a caller's ORDERED bulk only (an UNORDERED bulk of the driver costs what the plan costs). An
     * estimate for dashboards, not a count.
     *
     * @param shardCount the number of shards the collection is spread over (1 for an unsharded collection)
     * @return the expected round trips saved
     * @throws IllegalArgumentException if {@code shardCount} is below 1
     */
    double expectedRoundTripsAvoided(int shardCount);
}
