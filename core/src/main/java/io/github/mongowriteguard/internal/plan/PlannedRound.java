package io.github.mongowriteguard.internal.plan;

import io.github.mongowriteguard.bulk.PlanMode;
import io.github.mongowriteguard.bulk.Round;
import java.util.List;

/**
 * One round of a {@link PlannedBulk}: the writes sent together as one driver {@code bulkWrite}, by their index in the
 * caller's list, in the caller's order.
 *
 * <pre>{@code
 * List<WriteModel<Document>> batch = new ArrayList<>(round.size());
 * for (int index : round.indices()) batch.add(models.get(index));
 * collection.bulkWrite(batch, new BulkWriteOptions().ordered(round.isOrdered()));
 * }</pre>
 *
 * Immutable.
 */
final class PlannedRound implements Round {

    private final int number;
    private final boolean ordered;
    private final int[] indices;
    /** The writes sent in this round's UNORDERED (or, for an ordered round, ORDERED) commands, ascending. */
    private final int[] together;
    /** The writes sent as ORDERED key runs, in sending order; empty when none. */
    private final int[] keyRuns;

    PlannedRound(int number, boolean ordered, int[] indices) {
        this.number = number;
        this.ordered = ordered;
        this.indices = indices; // built for this round alone and never changed
        this.together = indices;
        this.keyRuns = KeyRuns.NONE;
    }

    PlannedRound(int number, boolean ordered, int[] together, int[] keyRuns) {
        this.number = number;
        this.ordered = ordered;
        this.together = together;
        this.keyRuns = keyRuns;
        this.indices = keyRuns.length == 0 ? together : merged(together, keyRuns);
    }

    private static int[] merged(int[] together, int[] keyRuns) {
        int[] all = new int[together.length + keyRuns.length];
        System.arraycopy(together, 0, all, 0, together.length);
        System.arraycopy(keyRuns, 0, all, together.length, keyRuns.length);
        java.util.Arrays.sort(all);
        return all;
    }

    /**
     * This round's place in its plan.
     *
     * @return 1 for the first round
     */
    public int number() {
        return number;
    }

    /**
     * Whether this round must run as an ORDERED bulk: only in {@link PlanMode#PRESERVE_ORDER} and
     * {@link PlanMode#STRICT_ORDERED} plans, which have exactly one round.
     *
     * @return {@code true} for an ORDERED round
     */
    public boolean isOrdered() {
        return ordered;
    }

    /**
     * The number of writes in this round.
     *
     * @return the number of writes, at least 1
     */
    public int size() {
        return indices.length;
    }

    /**
     * The writes of this round, as indices in the caller's list.
     *
     * @return the indices, ascending; unmodifiable
     */
    public List<Integer> indices() {
        return IndexList.over(indices);
    }

    /**
     * The writes of this round that are sent together as one bulk of the round's order ({@link #isOrdered()}): in an
     * unordered round, grouped by type as the driver groups an UNORDERED bulk. A key's run of writes of one type is
     * among them when the caller's bulk was unordered.
     *
     * @return the indices, ascending; unmodifiable
     */
    public List<Integer> unorderedPart() {
        return IndexList.over(together);
    }

    /**
     * The writes of this round sent as ORDERED key runs (an ordered request whose key repeats): each key's run
     * contiguous and in the caller's order, runs of one type together. The server runs them in this order and stops at
     * the first write that does not apply; the writes after it that are not on its key are then sent again the same
     * way, and the key's remaining writes are not sent.
     *
     * @return the indices in sending order; unmodifiable, empty when the round has no key runs
     */
    public List<Integer> keyRuns() {
        return IndexList.over(keyRuns);
    }

    /**
     * The index of the {@code position}-th write of this round, without boxing.
     *
     * @param position the write's position in this round, 0 for the first
     * @return its index in the caller's list
     * @throws ArrayIndexOutOfBoundsException if {@code position} is not below {@link #size()}
     */
    public int index(int position) {
        return indices[position];
    }

    @Override
    public String toString() {
        return "Round " + number + " (" + (ordered ? "ORDERED" : "UNORDERED") + ", " + indices.length + " write"
                + (indices.length == 1 ? "" : "s") + (keyRuns.length == 0 ? "" : ", " + keyRuns.length + " in key runs")
                + ')';
    }
}
