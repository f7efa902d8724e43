package io.github.mongowriteguard.internal.plan;

import io.github.mongowriteguard.bulk.BulkPlan;
import io.github.mongowriteguard.bulk.PlanMode;
import io.github.mongowriteguard.bulk.Round;
import io.github.mongowriteguard.bulk.WriteDecision;
import io.github.mongowriteguard.bulk.WriteKind;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.BsonWriter;
import org.jspecify.annotations.Nullable;

/**
 * How a guarded bulk write runs: its rounds, and a reason for every decision. Made by {@link BulkPlanner#plan}.
 *
 * <pre>{@code
 * PlannedBulk plan = planner.plan(models, PlanOptions.ordered());
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
 */
public final class PlannedBulk implements BulkPlan {

    private final PlanMode mode;
    private final String reason;
    private final WriteFacts[] facts;
    private final int[] roundOf;
    private final int[] previousOnKey;
    private final List<Round> rounds;
    private final int firstUnkeyed;
    /** Per write: the later write that supersedes it under last-write-wins, or -1; null when none is superseded. */
    private final int @Nullable [] supersededBy;

    private final OwnAssignedIds ownAssignedIds;

    private final WriteDecisions decisions;

    PlannedBulk(
            PlanMode mode,
            String reason,
            WriteFacts[] facts,
            int[] roundOf,
            int[] previousOnKey,
            List<Round> rounds,
            int firstUnkeyed,
            int @Nullable [] runStart,
            int @Nullable [] supersededBy) {
        this.supersededBy = supersededBy;
        this.mode = mode;
        this.reason = reason;
        this.facts = facts;
        this.roundOf = roundOf;
        this.previousOnKey = previousOnKey;
        this.rounds = rounds;
        this.firstUnkeyed = firstUnkeyed;
        this.ownAssignedIds = OwnAssignedIds.of(facts);
        this.decisions = new WriteDecisions(mode, facts, roundOf, previousOnKey, firstUnkeyed, runStart, supersededBy);
    }

    /**
     * How the plan runs the caller's bulk.
     *
     * @return the mode: unordered rounds, or one ORDERED round as given ({@link #reason()} says why)
     */
    public PlanMode mode() {
        return mode;
    }

    /**
     * Why the plan has this mode and this many rounds.
     *
     * @return one or two sentences, for logs and exception messages
     */
    public String reason() {
        return reason;
    }

    /**
     * The number of writes in the caller's bulk.
     *
     * @return the number of writes, 0 for an empty bulk
     */
    public int size() {
        return facts.length;
    }

    /**
     * Whether the caller's bulk was empty: then there is no round.
     *
     * @return {@code true} when the bulk had no write
     */
    public boolean isEmpty() {
        return facts.length == 0;
    }

    /**
     * The rounds, first to last; each one driver {@code bulkWrite}.
     *
     * @return the rounds, unmodifiable; empty for an empty bulk
     */
    public List<Round> rounds() {
        return rounds;
    }

    /**
     * Index of the previous write on the same {@code _id}, or -1 (first on its {@code _id}, or unkeyed). In an
     * ordered request, an executor skips write {@code index} when that write did not apply: the guard's failures are
     * per {@code _id}.
     *
     * @param index the write's index in the caller's bulk
     * @return the index of the previous write on the same {@code _id}, or -1
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    public int previousOnKey(int index) {
        return previousOnKey[checkIndex(index)];
    }

    /**
     * Writes the filter of the write at {@code index} to {@code writer} as the value of the current field: the private
     * copy the plan took, so the server gets the very filter that was planned, even if the caller's filter object
     * changed since.
     *
     * @param index  the write's index in the caller's bulk
     * @param writer the writer, positioned at the value of the {@code q} field of the statement being encoded
     * @throws IllegalArgumentException for an insert, which has no filter
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    public void writeFilter(int index, BsonWriter writer) {
        PlannedStatementWriter.writeFilter(facts[checkIndex(index)], writer);
    }

    /**
     * The filter of the write at {@code index} as the values {@link #writeFilter} writes: the plan's own copy (or
     * {@code {_id: id}} over the plan's {@code _id}), for the guard's command encoder to hand to the driver as it is.
     * Not to be changed: the plan sends it.
     *
     * @param index the write's index in the caller's bulk
     * @return the filter the plan sends
     * @throws IllegalArgumentException for an insert, which has no filter
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    public BsonDocument filterToSend(int index) {
        BsonDocument filter = facts[checkIndex(index)].plannedFilter();
        if (filter == null) {
            throw new IllegalArgumentException("write " + index + " is an insert; it has no filter");
        }
        return filter;
    }

    /**
     * The filter the plan kept for write {@code index}, for the guard's command encoder to write as it is: null for an
     * insert and for a filter that is nothing but {@code {_id: id}} ({@link #keyedId} then gives the id). Not to be
     * changed: the plan sends it.
     *
     * @param index the write's index in the caller's bulk
     * @return the kept filter, or null
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    public @Nullable BsonDocument keptFilter(int index) {
        return facts[checkIndex(index)].storedFilter();
    }

    /**
     * The {@code _id} write {@code index} is keyed by, the plan's own value, for the guard's command encoder (no copy,
     * unlike {@link #id}). Not to be changed: the plan sends it.
     *
     * @param index the write's index in the caller's bulk
     * @return the {@code _id}, or null when the write is unkeyed or an insert left without {@code _id}
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    public @Nullable BsonValue keyedId(int index) {
        return facts[checkIndex(index)].id;
    }

    /**
     * The update document of update {@code index} as the planner converted it from a builder, which
     * {@link #writeConvertedUpdate} writes; null when the plan kept none. Not to be changed: the plan sends it.
     *
     * @param index the write's index in the caller's bulk
     * @return the converted update, or null
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    public @Nullable BsonDocument convertedUpdate(int index) {
        return facts[checkIndex(index)].convertedUpdate;
    }

    /**
     * Writes the update document of update {@code index} as the planner converted it from a builder (such as {@code
     * Updates.inc}), so that it is converted once, as the driver converts it once; does nothing and returns false when
     * the plan kept none: a pipeline, a {@code Document} or {@code BsonDocument} update, or another kind of write.
     *
     * @param index  the write's index in the caller's bulk
     * @param writer the writer, positioned at the value of the {@code u} field of the statement being encoded
     * @return whether it wrote the update
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    public boolean writeConvertedUpdate(int index, BsonWriter writer) {
        return PlannedStatementWriter.writeConvertedUpdate(facts[checkIndex(index)], writer);
    }

    /**
     * The {@code _id} write {@code index} is keyed by, as {@link #decision(int)}{@code .id()} gives it, without building
     * the rest of the decision (its filter and its reason).
     *
     * @param index the write's index in the caller's bulk
     * @return a copy of the {@code _id}, or empty when the write is unkeyed or an insert left without {@code _id}
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    public Optional<BsonValue> id(int index) {
        BsonValue id = facts[checkIndex(index)].id;
        return id == null ? Optional.empty() : Optional.of(Ids.copy(id));
    }

    /**
     * The encoded size of the document of write {@code index} as the planner measured it (without an {@code _id} the
     * guard assigns later), for an insert or a replacement; -1 for other writes. A sizing hint for the encoder's
     * buffers: what is sent is encoded again, and cut by its encoded size.
     *
     * @param index the write's index in the caller's bulk
     * @return the measured size in bytes, or -1
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    public long measuredDocumentSize(int index) {
        return facts[checkIndex(index)].documentSize;
    }

    /**
     * The kind of write {@code index}.
     *
     * @param index the write's index in the caller's bulk
     * @return its kind: the driver model it was given as
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    public WriteKind kind(int index) {
        return facts[checkIndex(index)].kind;
    }

    /**
     * The kind write {@code index} is sent as: its own kind, except an {@code UpdateManyModel} / {@code DeleteManyModel}
     * whose filter pins {@code _id}, which is sent as a single-document statement ({@code UPDATE_ONE} /
     * {@code DELETE_ONE}: {@code multi: false} / {@code limit: 1}) when {@link SingleDocumentById} allows it.
     *
     * @param index the write's index in the caller's bulk
     * @return the kind of statement the encoder writes
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    public WriteKind sentAs(int index) {
        return facts[checkIndex(index)].sentAs();
    }

    /**
     * The {@code _id} the guard assigned to insert {@code index} whose object cannot hold it (a record with a null
     * id): the encoder sends it after the document's own fields, where the driver's {@code IdHoldingBsonWriter} adds
     * the one it generates.
     *
     * @param index the write's index in the caller's bulk
     * @return the {@code _id} to append, or empty when the document carries its own (or none is assigned)
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    public Optional<BsonValue> appendedId(int index) {
        WriteFacts write = facts[checkIndex(index)];
        return write.appendedId && write.id != null ? Optional.of(write.id) : Optional.empty();
    }

    /**
     * The first write that is not keyed, which decides a {@link PlanMode#PRESERVE_ORDER} plan.
     *
     * @return its index, or -1 when every write is keyed
     */
    public int firstUnkeyed() {
        return firstUnkeyed;
    }

    /**
     * The first write that is sent as a multi-document statement ({@code multi: true} / {@code limit: 0}), which no
     * resend can repeat as the same server copy (no {@code txnNumber}).
     *
     * @return its index, or -1 when every write is sent as a single-document statement
     */
    public int firstMultiDocument() {
        for (WriteFacts write : facts) {
            if (write.sentAs().isMulti()) {
                return write.index;
            }
        }
        return -1;
    }

    /**
     * Why the plan does not run every write in rounds with same-copy retries, as a bounded metric tag value:
     * {@code none} (every write in rounds, each resendable as the same copy); {@code strict-ordered}; or, for the first
     * unkeyed write of a {@link PlanMode#PRESERVE_ORDER} plan or the first multi-document write of another plan,
     * {@code multi-document}, {@code multi-document-kept} (it pins {@code _id} but the collection keeps it
     * multi-document), {@code filter-not-id}, {@code collation}.
     *
     * @return the tag value
     */
    public String reasonTag() {
        if (mode == PlanMode.STRICT_ORDERED) {
            return "strict-ordered";
        }
        int first = mode == PlanMode.PRESERVE_ORDER ? firstUnkeyed : firstMultiDocument();
        return first < 0 ? "none" : facts[first].unkeyed.tag;
    }

    /**
     * What would make write {@code index} keyed, for logs; empty when it is keyed.
     *
     * @param index the write's index in the caller's bulk
     * @return e.g. "pin _id by equality in its filter ({_id: v}) to make it a single-document write"
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    public Optional<String> keyedIf(int index) {
        WriteFacts write = facts[checkIndex(index)];
        return write.isKeyed() ? Optional.empty() : Optional.of(write.unkeyed.remedy);
    }

    /**
     * Why write {@code index} is not keyed, and so what would key it; no document values.
     *
     * @param index the write's index in the caller's bulk
     * @return e.g. "can change many documents", or empty when the write is keyed
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    public Optional<String> unkeyedBecause(int index) {
        WriteFacts write = facts[checkIndex(index)];
        return write.isKeyed() ? Optional.empty() : Optional.of(write.unkeyedExplanation());
    }

    /**
     * The caller's write {@code index}, as the guard read it: what the encoder sends.
     *
     * @param index the write's index in the caller's bulk
     * @return the guard's record of the write, with its assigned {@code _id} if it got one
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    public WriteRecord<?> write(int index) {
        return facts[checkIndex(index)];
    }

    /**
     * Whether write {@code index} is an insert whose {@code _id} the guard assigned before the first send, and no other
     * write of the bulk names that {@code _id}: a duplicate-key error on it after an earlier send of the same copy can
     * only come from that earlier send.
     *
     * @param index the write's index in the caller's bulk
     * @return {@code true} for an insert with a guard-assigned {@code _id} no other write of the bulk names
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    public boolean hasOwnAssignedId(int index) {
        return ownAssignedIds.has(facts[checkIndex(index)]);
    }

    /**
     * The later write that makes write {@code index} unnecessary under last-write-wins
     * ({@link PlanOptions#isLastWriteWins()}): a full replacement or delete of the same {@code _id}. Such a write is in
     * no round and is not sent.
     *
     * @param index the write's index in the caller's bulk
     * @return the index of the superseding write, or -1 when write {@code index} is sent
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    public int supersededBy(int index) {
        checkIndex(index);
        return supersededBy == null ? -1 : supersededBy[index];
    }

    /**
     * Whether any write is left out as superseded ({@link #supersededBy(int)}).
     *
     * @return {@code true} when some write is not sent under last-write-wins
     */
    public boolean hasSuperseded() {
        return supersededBy != null;
    }

    /**
     * The round that sends write {@code index}.
     *
     * @param index the write's index in the caller's bulk
     * @return the round number, 1 for the first round; 0 for a write left out as superseded
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    public int roundOf(int index) {
        return roundOf[checkIndex(index)];
    }

    /**
     * What the plan does with write {@code index}, and why.
     *
     * @param index the write's index in the caller's bulk
     * @return the decision, built when called
     * @throws IndexOutOfBoundsException if {@code index} is not an index of the bulk
     */
    public WriteDecision decision(int index) {
        return decisions.decision(checkIndex(index));
    }

    /**
     * {@link #decision(int)} for every write, in index order.
     *
     * @return an unmodifiable list view whose elements are built when read
     */
    public List<WriteDecision> decisions() {
        return decisions.all();
    }

    /**
     * Expected mongos-to-shard round trips for this plan on a collection with a hashed shard key over
     * {@code shardCount} shards, writes scattered uniformly: {@code 1 + (n - 1)(1 - 1/S)} for an ORDERED round of n
     * writes, one per 100,000 writes for an UNORDERED round. An estimate for logs and dashboards, not a promise.
     *
     * @param shardCount the number of shards the collection is spread over (1 for an unsharded collection)
     * @return the expected number of mongos-to-shard round trips of all rounds together
     * @throws IllegalArgumentException if {@code shardCount} is below 1
     */
    public double expectedRoundTrips(int shardCount) {
        return RoundTripEstimate.of(rounds, shardCount);
    }

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
    public double expectedRoundTripsAvoided(int shardCount) {
        return Math.max(0, RoundTripEstimate.ordered(size(), shardCount) - expectedRoundTrips(shardCount));
    }

    @Override
    public String toString() {
        StringBuilder text = new StringBuilder("BulkPlan{")
                .append(mode)
                .append(", ")
                .append(facts.length)
                .append(facts.length == 1 ? " write, " : " writes, ")
                .append(rounds.size())
                .append(rounds.size() == 1 ? " round" : " rounds");
        if (!rounds.isEmpty()) {
            text.append(" [");
            int shown = Math.min(rounds.size(), 5);
            for (int r = 0; r < shown; r++) {
                text.append(r == 0 ? "" : ", ").append(rounds.get(r).size());
            }
            text.append(rounds.size() > shown ? ", ...]" : "]");
        }
        return text.append('}').toString();
    }

    private int checkIndex(int index) {
        return Objects.checkIndex(index, facts.length);
    }
}
