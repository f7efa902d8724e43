package io.github.mongowriteguard.internal.plan;

import org.jspecify.annotations.Nullable;

/**
 * Which inserts carry an {@code _id} the guard assigned that no other write of the bulk names
 * ({@link PlannedBulk#hasOwnAssignedId}): a duplicate-key error on such an insert after an earlier send of the same copy
 * can only come from that earlier send. Computed once per plan, and only when the guard assigned an id.
 */
final class OwnAssignedIds {

    private static final OwnAssignedIds NONE = new OwnAssignedIds(null);

    /** Per key number: whether more than one write names it; null when no insert had its _id assigned. */
    private final boolean @Nullable [] sharedKeys;

    private OwnAssignedIds(boolean @Nullable [] sharedKeys) {
        this.sharedKeys = sharedKeys;
    }

    static OwnAssignedIds of(WriteFacts[] facts) {
        boolean assigned = false;
        int keys = 0;
        for (WriteFacts write : facts) {
            assigned |= write.needsId;
            keys = Math.max(keys, write.keyNumber + 1);
        }
        if (!assigned) {
            return NONE;
        }
        boolean[] seen = new boolean[keys];
        boolean[] shared = new boolean[keys];
        for (WriteFacts write : facts) {
            if (write.keyNumber >= 0) {
                shared[write.keyNumber] |= seen[write.keyNumber];
                seen[write.keyNumber] = true;
            }
        }
        return new OwnAssignedIds(shared);
    }

    /** Whether {@code write} is an insert with a guard-assigned {@code _id} no other write of the bulk names. */
    boolean has(WriteFacts write) {
        return write.needsId
                && write.id != null
                && sharedKeys != null
                && write.keyNumber >= 0
                && !sharedKeys[write.keyNumber];
    }
}
