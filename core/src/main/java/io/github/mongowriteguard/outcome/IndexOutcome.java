package io.github.mongowriteguard.outcome;

import java.util.Objects;

/**
 * The outcome of the write at one index of the caller's bulk.
 *
 * <pre>{@code
 * for (IndexOutcome o : outcome.outcomes()) {
 *     if (o.status() == WriteStatus.FAILED && !o.retrySafe()) deadLetter(models.get(o.index()), o.message());
 * }
 * }</pre>
 */
public final class IndexOutcome {
    private final int index;
    private final WriteStatus status;
    private final int relatedIndex;
    private final int errorCode;
    private final String message;
    private final boolean retrySafe;
    private final boolean sent;

    private IndexOutcome(int index, WriteStatus status, int relatedIndex, int errorCode, String message, boolean retrySafe) {
        this(index, status, relatedIndex, errorCode, message, retrySafe, true);
    }

    private IndexOutcome(int index, WriteStatus status, int relatedIndex, int errorCode, String message, boolean retrySafe,
                         boolean sent) {
        this.index = index;
        this.status = Objects.requireNonNull(status, "status");
        this.relatedIndex = relatedIndex;
        this.errorCode = errorCode;
        this.message = message == null ? "" : message;
        this.retrySafe = retrySafe;
        this.sent = sent;
    }

    public static IndexOutcome applied(int index) {
        return new IndexOutcome(index, WriteStatus.APPLIED, -1, 0, "", false);
    }

    public static IndexOutcome applied(int index, String note) {
        return new IndexOutcome(index, WriteStatus.APPLIED, -1, 0, note, false);
    }

    public static IndexOutcome superseded(int index, int by) {
        return new IndexOutcome(index, WriteStatus.SUPERSEDED, by, 0,
            "superseded by index " + by + ", which decides the final document", false);
    }

    public static IndexOutcome skipped(int index, int because, String reason) {
        return new IndexOutcome(index, WriteStatus.SKIPPED, because, 0, reason, true);
    }

    public static IndexOutcome failed(int index, int code, String message, boolean retrySafe) {
        return new IndexOutcome(index, WriteStatus.FAILED, -1, code, message, retrySafe);
    }

    /**
     * A write that failed before any attempt reached a server (no server could be selected, or no connection was free
     * in time): certainly not applied, safe to send again. Its code is the client's ({@code -3}).
     */
    public static IndexOutcome notSent(int index, int code, String reason) {
        return new IndexOutcome(index, WriteStatus.FAILED, -1, code, reason, true, false);
    }

    public static IndexOutcome unknown(int index, String reason, boolean retrySafe) {
        return new IndexOutcome(index, WriteStatus.UNKNOWN, -1, 0, reason, retrySafe);
    }

    /** The index in the caller's bulk. */
    public int index() {
        return index;
    }

    public WriteStatus status() {
        return status;
    }

    /** For {@link WriteStatus#SUPERSEDED}: the superseding index; for {@link WriteStatus#SKIPPED}: the index it waited for; else -1. */
    public int relatedIndex() {
        return relatedIndex;
    }

    /** The server's error code for {@link WriteStatus#FAILED}, else 0. */
    public int errorCode() {
        return errorCode;
    }

    /** Why: the server's message, the reason for a skip or an unknown outcome. Never document contents. */
    public String message() {
        return message;
    }

    /**
     * True when sending this write again cannot apply it twice or change what it means: a single-document write
     * whose failure is transient, a write that was never sent ({@link #wasSent()} false), or a skipped write. False for multi-document writes with an unknown outcome and
     * for errors that would repeat (duplicate key, validation).
     */
    public boolean retrySafe() {
        return retrySafe;
    }

    /** False for a {@link #notSent} write: no attempt of it reached a server. */
    public boolean wasSent() {
        return sent;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof IndexOutcome)) {
            return false;
        }
        IndexOutcome that = (IndexOutcome) o;
        return index == that.index && status == that.status && relatedIndex == that.relatedIndex
            && errorCode == that.errorCode && retrySafe == that.retrySafe && sent == that.sent && message.equals(that.message);
    }

    @Override
    public int hashCode() {
        return Objects.hash(index, status, relatedIndex, errorCode, message, retrySafe, sent);
    }

    @Override
    public String toString() {
        StringBuilder text = new StringBuilder().append('#').append(index).append(' ').append(status);
        if (errorCode != 0) {
            text.append(" code=").append(errorCode);
        }
        if (!sent) {
            text.append(" not sent");
        }
        if (!message.isEmpty()) {
            text.append(" (").append(message).append(')');
        }
        return text.toString();
    }
}
