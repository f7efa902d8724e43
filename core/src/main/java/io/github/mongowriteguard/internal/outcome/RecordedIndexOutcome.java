package io.github.mongowriteguard.internal.outcome;

import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import java.util.Objects;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;

/**
 * The {@link IndexOutcome}s the guard records, made by the factories below ({@link #applied}, {@link #failed},
 * {@link #unknown}, ...). Not API.
 */
public final class RecordedIndexOutcome implements IndexOutcome {
    /**
     * The details of every outcome without any: one shared document, never changed ({@link #details()} hands out
     * copies), rather than one empty document per write.
     */
    private static final BsonDocument NO_DETAILS = new BsonDocument();

    private final int index;
    private final WriteStatus status;
    private final int relatedIndex;
    private final int errorCode;
    private final String codeName;
    private final BsonDocument details;
    private final String message;
    private final boolean retrySafe;
    private final boolean sent;
    private final boolean mayHaveChangedDocuments;
    private final boolean writeConcernFailed;
    private final boolean settleable;
    private final @Nullable BsonValue assignedId;

    private RecordedIndexOutcome(
            int index,
            WriteStatus status,
            int relatedIndex,
            int errorCode,
            String codeName,
            @Nullable BsonDocument details,
            @Nullable String message,
            boolean retrySafe,
            boolean sent) {
        this(
                index,
                status,
                relatedIndex,
                errorCode,
                codeName,
                details,
                message,
                retrySafe,
                sent,
                false,
                false,
                false,
                null);
    }

    private RecordedIndexOutcome(
            int index,
            WriteStatus status,
            int relatedIndex,
            int errorCode,
            String codeName,
            @Nullable BsonDocument details,
            @Nullable String message,
            boolean retrySafe,
            boolean sent,
            boolean mayHaveChangedDocuments,
            boolean writeConcernFailed,
            boolean settleable,
            @Nullable BsonValue assignedId) {
        this.index = index;
        this.status = Objects.requireNonNull(status, "status");
        this.relatedIndex = relatedIndex;
        this.errorCode = errorCode;
        this.codeName = codeName == null ? "" : codeName;
        this.details = details == null ? NO_DETAILS : details;
        this.message = message == null ? "" : message;
        this.retrySafe = retrySafe;
        this.sent = sent;
        this.mayHaveChangedDocuments = mayHaveChangedDocuments;
        this.writeConcernFailed = writeConcernFailed;
        this.settleable = settleable;
        this.assignedId = assignedId;
    }

    /**
     * {@code outcome} with whether a settle can resolve it and, when {@code note} is not empty, the note added to its
     * message (why it cannot be settled).
     */
    public static IndexOutcome settleable(IndexOutcome outcome, boolean settleable, String note) {
        String message = note.isEmpty() || outcome.message().contains(note)
                ? outcome.message()
                : outcome.message().isEmpty() ? note : outcome.message() + "; " + note;
        return copy(outcome, outcome.index(), outcome.relatedIndex(), message, settleable, outcome.assignedId());
    }

    /** {@code outcome} with the {@code _id} the guard gave its insert. */
    public static IndexOutcome withAssignedId(IndexOutcome outcome, BsonValue id) {
        return copy(outcome, outcome.index(), outcome.relatedIndex(), outcome.message(), outcome.settleable(), id);
    }

    /** {@code outcome} with the fields a copy may change. */
    private static IndexOutcome copy(
            IndexOutcome outcome,
            int index,
            int relatedIndex,
            String message,
            boolean settleable,
            @Nullable BsonValue assignedId) {
        return new RecordedIndexOutcome(
                index,
                outcome.status(),
                relatedIndex,
                outcome.errorCode(),
                outcome.codeName(),
                outcome.details(),
                message,
                outcome.retrySafe(),
                outcome.wasSent(),
                outcome.mayHaveChangedDocuments(),
                outcome.writeConcernFailed(),
                settleable,
                assignedId);
    }

    public static IndexOutcome applied(int index) {
        return applied(index, "");
    }

    public static IndexOutcome applied(int index, String note) {
        return new RecordedIndexOutcome(index, WriteStatus.APPLIED, -1, 0, "", null, note, false, true);
    }

    /** Not sent, because of the write at index {@code because} (or -1 when the whole call stopped); safe to send again. */
    public static IndexOutcome skipped(int index, int because, String reason) {
        return new RecordedIndexOutcome(index, WriteStatus.SKIPPED, because, 0, "", null, reason, true, false);
    }

    /** Left out under last-write-wins: the later write at {@code by} decides the document. Never sent. */
    public static IndexOutcome superseded(int index, int by, String reason) {
        return new RecordedIndexOutcome(index, WriteStatus.SUPERSEDED, by, 0, "", null, reason, false, false);
    }

    /** The server's write error or command error for this write, with its code name and {@code errInfo}. */
    public static IndexOutcome failed(
            int index, int code, String codeName, String message, @Nullable BsonDocument details, boolean retrySafe) {
        return new RecordedIndexOutcome(
                index, WriteStatus.FAILED, -1, code, codeName, details, message, retrySafe, true);
    }

    /**
     * The write error of a multi-document write ({@code updateMany}, {@code deleteMany}), which is not atomic: the
     * documents it changed before the error (earlier in its scan, or on other shards) stay changed, and the outcome's
     * counts include those the server reported. Never retry-safe.
     */
    public static IndexOutcome failedMultiDocument(
            int index, int code, String codeName, String message, @Nullable BsonDocument details) {
        return new RecordedIndexOutcome(
                index, WriteStatus.FAILED, -1, code, codeName, details, message, false, true, true, false, false, null);
    }

    /**
     * A write the server applied on the primary whose write concern then failed (a write-concern error, after the
     * guard resent the copy for a retryable one): UNKNOWN, since a write no majority had is rolled back if the primary
     * fails over. {@link #writeConcernFailed()} is true; the driver-style methods report the write-concern error as the
     * driver does.
     */
    public static IndexOutcome writeConcernFailed(int index, String reason, boolean retrySafe) {
        return new RecordedIndexOutcome(
                index, WriteStatus.UNKNOWN, -1, 0, "", null, reason, retrySafe, true, false, true, false, null);
    }

    /**
     * A write that failed before any attempt reached a server (no server could be selected, or no connection was free
     * in time): certainly not applied, safe to send again. Its code is the client's ({@code -3}).
     */
    public static IndexOutcome notSent(int index, int code, String reason) {
        return new RecordedIndexOutcome(index, WriteStatus.FAILED, -1, code, "", null, reason, true, false);
    }

    /**
     * Nothing proves whether the write was applied.
     *
     * @param retrySafe whether a new copy of the write, sent by the caller, cannot apply it twice (an insert with its
     *                  {@code _id}, a replacement or an update of idempotent operators on one {@code _id}, a delete by
     *                  {@code _id})
     */
    public static IndexOutcome unknown(int index, String reason, boolean retrySafe) {
        return new RecordedIndexOutcome(index, WriteStatus.UNKNOWN, -1, 0, "", null, reason, retrySafe, true);
    }

    /**
     * The same outcome at another index: a client-level bulk runs each namespace's writes as a bulk of their own and
     * reports every outcome at its index in the caller's list ({@code relatedIndex} likewise, -1 for none). Not
     * settleable there: the client-level outcome does not keep the namespaces' commands.
     */
    public static IndexOutcome atIndex(IndexOutcome outcome, int callerIndex, int callerRelatedIndex) {
        return copy(outcome, callerIndex, callerRelatedIndex, outcome.message(), false, outcome.assignedId());
    }

    /** The index in the caller's bulk. */
    public int index() {
        return index;
    }

    public WriteStatus status() {
        return status;
    }

    /** For {@link WriteStatus#SKIPPED}: the index it depended on (-1 when the whole call stopped); else -1. */
    public int relatedIndex() {
        return relatedIndex;
    }

    /** The server's error code for {@link WriteStatus#FAILED}, else 0. */
    public int errorCode() {
        return errorCode;
    }

    /** The server's name for {@link #errorCode()} (e.g. {@code DuplicateKey}); empty when it gave none. */
    public String codeName() {
        return codeName;
    }

    /** The server's {@code errInfo} of a write error (e.g. a validation failure's details); empty when none. */
    public BsonDocument details() {
        return details.clone();
    }

    /** Why: the server's message, the reason for a skip or an unknown outcome. Never document contents. */
    public String message() {
        return message;
    }

    /**
     * True when sending this write again cannot apply it twice or change what it means: a single-document write whose
     * failure is transient, a write that was never sent ({@link #wasSent()} false, every SKIPPED write), or an UNKNOWN
     * write that is idempotent on one document (an insert with its {@code _id}, a replacement or an update of
     * idempotent operators by {@code _id}, a delete by {@code _id}). False for an UNKNOWN {@code $inc}, for
     * multi-document writes, and for errors that would repeat (duplicate key, validation).
     */
    public boolean retrySafe() {
        return retrySafe;
    }

    /**
     * True for a FAILED multi-document write: it stopped with an error, and the documents it changed before the error
     * stay changed (a sharded {@code updateMany} failing on one shard has applied on the others).
     */
    public boolean mayHaveChangedDocuments() {
        return mayHaveChangedDocuments;
    }

    /**
     * True for an UNKNOWN write that the primary applied but whose write concern failed: it stays unless a failover
     * rolls it back before it replicates. Such writes do not stop the call (the driver's bulk goes on after a
     * write-concern error) and are reported as a write-concern error, not an unknown outcome.
     */
    public boolean writeConcernFailed() {
        return writeConcernFailed;
    }

    /** False for a write no attempt of which reached a server ({@link #notSent}, every SKIPPED write). */
    public boolean wasSent() {
        return sent;
    }

    @Override
    public boolean settleable() {
        return settleable;
    }

    @Override
    public @Nullable BsonValue assignedId() {
        return assignedId;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof RecordedIndexOutcome)) {
            return false;
        }
        RecordedIndexOutcome that = (RecordedIndexOutcome) o;
        return index == that.index
                && status == that.status
                && relatedIndex == that.relatedIndex
                && errorCode == that.errorCode
                && retrySafe == that.retrySafe
                && sent == that.sent
                && message.equals(that.message)
                && codeName.equals(that.codeName)
                && details.equals(that.details)
                && mayHaveChangedDocuments == that.mayHaveChangedDocuments
                && writeConcernFailed == that.writeConcernFailed
                && settleable == that.settleable
                && Objects.equals(assignedId, that.assignedId);
    }

    @Override
    public int hashCode() {
        return Objects.hash(index, status, relatedIndex, errorCode, message, retrySafe, sent);
    }

    @Override
    public String toString() {
        StringBuilder text =
                new StringBuilder().append('#').append(index).append(' ').append(status);
        if (errorCode != 0) {
            text.append(" code=").append(errorCode);
        }
        if (mayHaveChangedDocuments) {
            text.append(" may have changed documents");
        }
        if (writeConcernFailed) {
            text.append(" applied on the primary, write concern failed");
        }
        if (settleable) {
            text.append(" settleable");
        }
        if (!sent && status != WriteStatus.SKIPPED && status != WriteStatus.SUPERSEDED) {
            text.append(" not sent");
        }
        if (!message.isEmpty()) {
            text.append(" (").append(message).append(')');
        }
        return text.toString();
    }
}
