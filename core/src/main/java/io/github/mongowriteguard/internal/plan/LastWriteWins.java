package io.github.mongowriteguard.internal.plan;

import io.github.mongowriteguard.bulk.WriteKind;
import java.util.Arrays;

/**
 * The opt-in last-write-wins compaction ({@link PlanOptions#isLastWriteWins()}): which replacements a later write of
 * the same bulk makes unnecessary. Linear: one pass from the end, an int per key.
 *
 * <p>A write <em>decides</em> its document when its result does not depend on the document before it: a
 * {@code ReplaceOneModel} upsert or a {@code DeleteOneModel} whose filter is exactly {@code {_id: v}}. A
 * {@code ReplaceOneModel} on the same {@code _id} before a deciding write, with only such replacements between them,
 * is superseded: the document ends as the deciding write leaves it whether or not the replacement ran. Other writes
 * between (an update, an insert, a conditional replacement) read what the replacement wrote, so they keep it.
 */
final class LastWriteWins {

    private LastWriteWins() {}

    /**
     * For each write, the index of the later write that supersedes it, or -1.
     *
     * @return the array, or null when no write is superseded
     */
    static int[] supersededBy(WriteFacts[] facts, int keyCount) {
        int n = facts.length;
        int[] decider = new int[keyCount]; // per key: the deciding write later in the bulk that the next replacement
        // before it would be superseded by, or -1
        Arrays.fill(decider, -1);
        int[] by = null;
        for (int i = n - 1; i >= 0; i--) {
            WriteFacts write = facts[i];
            int key = write.keyNumber;
            if (key < 0 || write.id == null) {
                continue;
            }
            if (write.kind == WriteKind.REPLACE_ONE && decider[key] >= 0) {
                if (by == null) {
                    by = new int[n];
                    Arrays.fill(by, -1);
                }
                by[i] = decider[key];
                continue; // a superseded replacement is not sent: an earlier one before it is superseded too
            }
            decider[key] = decides(write) ? i : -1;
        }
        return by;
    }

    /** A write whose result does not depend on the document before it: its filter is the _id equality alone. */
    private static boolean decides(WriteFacts write) {
        return !write.otherConditions
                && (write.kind == WriteKind.DELETE_ONE || write.kind == WriteKind.REPLACE_ONE && write.upsert());
    }
}
