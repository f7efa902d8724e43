package io.github.mongowriteguard.bulk;

import io.github.mongowriteguard.bulk.InvalidBulkException.Problem;

import java.util.Arrays;

/**
 * Rejects a bulk that inserts the same {@code _id} twice with no {@code DeleteOneModel} of it in between: the second
 * insert would always fail with a duplicate-key error (if the first failed, the document already existed).
 * Insert, delete, insert is allowed: it can succeed; so is a delete not named by {@code _id} between the two inserts
 * ({@code DeleteManyModel}, or a filter on other fields), which may remove the first document.
 */
final class DuplicateInsertCheck {

    private DuplicateInsertCheck() {
    }

    /** Writes without a key number yet (an insert whose {@code _id} is not assigned) are skipped. */
    static void check(WriteFacts[] facts, int keyCount) {
        int[] lastInsert = new int[keyCount];
        Arrays.fill(lastInsert, -1);
        boolean[] deletedSince = new boolean[keyCount];
        for (WriteFacts write : facts) {
            int key = write.keyNumber;
            if (key < 0) {
                if (write.kind == WriteKind.DELETE_MANY || write.kind == WriteKind.DELETE_ONE) {
                    // A delete not named by _id (DeleteMany, or a filter on other fields) may remove any inserted
                    // document, so a later insert of the same _id can succeed.
                    Arrays.fill(deletedSince, true);
                }
                continue;
            }
            if (write.kind == WriteKind.INSERT_ONE) {
                int earlier = lastInsert[key];
                if (earlier >= 0 && !deletedSince[key]) {
                    throw WriteInspector.invalid(write.index, write.kind.modelName(), Problem.DUPLICATE_INSERT_ID,
                            "_id " + Ids.format(write.id) + " is already inserted by the write at index " + earlier
                                    + ", so this insert would always fail with a duplicate key error; remove the"
                                    + " duplicate, or use ReplaceOneModel with upsert(true) to write the latest version");
                }
                lastInsert[key] = write.index;
                deletedSince[key] = false;
            } else if (write.kind == WriteKind.DELETE_ONE) {
                deletedSince[key] = true;
            }
        }
    }
}
