package io.github.mongowriteguard.bulk;

import java.util.List;

/**
 * One round of a {@link BulkPlan}: the writes sent together as one driver {@code bulkWrite}, by their index in the
 * caller's list, in the caller's order.
 *
 * <pre>{@code
 * List<WriteModel<Document>> batch = new ArrayList<>(round.size());
 * for (int index : round.indices()) batch.add(models.get(index));
 * collection.bulkWrite(batch, new BulkWriteOptions().ordered(round.isOrdered()));
 * }</pre>
 *
 * Immutable.
 *
 * <p>Implemented by the library only (callers read it; it may gain methods).
 */
public interface Round {

    /**
     * This round's place in its plan.
     *
     * @return 1 for the first round
     */
    int number();

    /**
     * Whether this round must run as an ORDERED bulk: only in {@link PlanMode#PRESERVE_ORDER} and
     * {@link PlanMode#STRICT_ORDERED} plans, which have exactly one round.
     *
     * @return {@code true} for an ORDERED round
     */
    boolean isOrdered();

    /**
     * The number of writes in this round.
     *
     * @return the number of writes, at least 1
     */
    int size();

    /**
     * The writes of this round, as indices in the caller's list.
     *
     * @return the indices, ascending; unmodifiable
     */
    List<Integer> indices();

    /**
     * The writes of this round that are sent together as one bulk of the round's order ({@link #isOrdered()}): in an
     * unordered round, grouped by type as the driver groups an UNORDERED bulk. A key's run of writes of one type is
     * among them when the caller's bulk was unordered.
     *
     * @return the indices, ascending; unmodifiable
     */
    List<Integer> unorderedPart();

    /**
     * The writes of this round sent as ORDERED key runs (an ordered request whose key repeats): each key's run
     * contiguous and in the caller's order, runs of one type together. The server runs them in this order and stops at
     * the first write that does not apply; the writes after it that are not on its key are then sent again the same
     * way, and the key's remaining writes are not sent.
     *
     * @return the indices in sending order; unmodifiable, empty when the round has no key runs
     */
    List<Integer> keyRuns();

    /**
     * The index of the {@code position}-th write of this round, without boxing.
     *
     * @param position the write's position in this round, 0 for the first
     * @return its index in the caller's list
     * @throws ArrayIndexOutOfBoundsException if {@code position} is not below {@link #size()}
     */
    int index(int position);
}
