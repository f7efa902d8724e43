package io.github.mongowriteguard.testkit.server;

/**
 * Where an emulated node keeps what it is asked to write.
 *
 * <pre>{@code
 * try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().storage(Storage.NONE).start()) { ... }
 * }</pre>
 */
public enum Storage {
    /** mongo-java-server's in-memory engine: documents are stored, queried, indexed (the default). */
    MEMORY,
    /**
     * Nothing is stored: {@code insert}, {@code update}, {@code delete} and {@code findAndModify} are answered by count
     * from the command alone, so that a benchmark measures the client (encoding, planning, decoding, bookkeeping) and
     * not the emulator's storage engine. The wire front end, sessions, retryable-write replay by {@code (lsid,
     * txnNumber, stmtId)}, fail points, stalls and the server truth are the same as with {@link #MEMORY}. Every update
     * statement answers as if its filter matched one document, unless it is an upsert, which answers as an insert:
     * {@code n: 1, nModified: 0, upserted: [{index, _id}]} with the replacement's {@code _id}, else the filter's
     * {@code _id} equality, else a new {@code ObjectId}; a non-upsert update answers {@code n: 1, nModified: 1}; a
     * delete statement {@code n: 1}; an insert never fails with a duplicate key. Reads find nothing.
     */
    NONE
}
