package io.github.mongowriteguard.outcome;

import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;

/**
 * The outcome of the write at one index of the caller's bulk.
 *
 * <pre>{@code
 * WriteOutcome<Order> settled = outcome.hasUnknown() ? orders.settle(outcome) : outcome;
 * for (IndexOutcome o : settled.outcomes()) {
 *     if (o.status() == WriteStatus.FAILED && !o.retrySafe()) deadLetter(models.get(o.index()), o.message());
 *     if (o.status() == WriteStatus.UNKNOWN && !o.settleable()) deadLetter(models.get(o.index()), o.message());
 * }
 * }</pre>
 *
 * <p>Read-only; the guard builds it.
 *
 * <p>Implemented by the library only (callers read it; it may gain methods).
 */
public interface IndexOutcome {
    /** {@return the index of this write in the caller's bulk} */
    int index();

    /** {@return what became of this write: applied, failed, skipped or unknown} */
    WriteStatus status();

    /**
     * {@return for {@link WriteStatus#SKIPPED}, the index it depended on (-1 when the whole call stopped); else -1}
     */
    int relatedIndex();

    /** {@return the server's error code for {@link WriteStatus#FAILED}, else 0} */
    int errorCode();

    /** {@return the server's name for {@link #errorCode()} (e.g. {@code DuplicateKey}); empty when it gave none} */
    String codeName();

    /**
     * {@return the server's {@code errInfo} of a write error (e.g. a validation failure's details); empty when none}
     */
    BsonDocument details();

    /**
     * {@return why: the server's message, the reason for a skip or an unknown outcome} Never document contents.
     */
    String message();

    /**
     * True when sending this write again as a new copy cannot apply it twice or change what it means: a
     * single-document write whose failure is transient, a write that was never sent ({@link #wasSent()} false, every
     * SKIPPED write), or an UNKNOWN write that is idempotent on one document (an insert with its {@code _id}, a
     * replacement or an update of idempotent operators by {@code _id}, a delete by {@code _id}). False for an UNKNOWN
     * {@code $inc}, for multi-document writes, and for errors that would repeat (duplicate key, validation). For an
     * UNKNOWN write, settle it first ({@link #settleable()}): a new copy sent after later writes on the same document
     * can undo them, which a settle cannot.
     *
     * @return whether sending this write again is safe
     */
    boolean retrySafe();

    /**
     * True for a FAILED multi-document write: it stopped with an error, and the documents it changed before the error
     * stay changed (a sharded {@code updateMany} failing on one shard has applied on the others).
     *
     * @return whether a failed multi-document write may have changed some documents
     */
    boolean mayHaveChangedDocuments();

    /**
     * True for an UNKNOWN write that the primary applied but whose write concern failed: it stays unless a failover
     * rolls it back before it replicates. Such writes do not stop the call (the driver's bulk goes on after a
     * write-concern error) and are reported as a write-concern error, not an unknown outcome.
     *
     * @return whether this write applied on the primary with a failed write concern
     */
    boolean writeConcernFailed();

    /**
     * {@return whether some attempt of this write reached a server} False for {@code notSent} and every SKIPPED write.
     */
    boolean wasSent();

    /**
     * True for an UNKNOWN write that {@code WriteGuard.settle} (or {@code GuardedCollection.settle}) can turn into
     * APPLIED or FAILED: a single-document write whose command the guard holds, with its session, until
     * {@link WriteOutcome#settleableUntil()}. False for every other status, and for an UNKNOWN write that cannot be
     * settled, whose {@link #message()} then says why (a multi-document write, the hold released it, the server no
     * longer has its statement record).
     *
     * @return whether a settle can tell what became of this write
     */
    default boolean settleable() {
        return false;
    }

    /**
     * {@return the {@code _id} the guard gave this insert (the caller's document had none) when it is not APPLIED, or
     * null} A settle never inserts it twice (a {@code DuplicateKey} on it in a settle is APPLIED); an insert sent
     * again by the application must carry this {@code _id}. An applied insert's {@code _id} is in
     * {@link WriteOutcome#inserts()}, as in the driver's result.
     */
    default @Nullable BsonValue assignedId() {
        return null;
    }
}
