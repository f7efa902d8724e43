package io.github.mongowriteguard.internal.plan;

import java.util.AbstractList;
import java.util.List;
import java.util.RandomAccess;

/**
 * A read-only list view of indices held as plain ints: a round's writes, or a command's share of them, without boxing
 * them all up front (an {@code Integer} per write above 127).
 */
public final class IndexList extends AbstractList<Integer> implements RandomAccess {
    private final int[] values;

    private IndexList(int[] values) {
        this.values = values;
    }

    /**
     * The view of {@code values}, which the caller hands over: they are not copied, and must not change after.
     *
     * @param values the indices
     * @return the read-only view
     */
    public static List<Integer> over(int[] values) {
        return new IndexList(values);
    }

    @Override
    public Integer get(int position) {
        return values[position];
    }

    @Override
    public int size() {
        return values.length;
    }
}
