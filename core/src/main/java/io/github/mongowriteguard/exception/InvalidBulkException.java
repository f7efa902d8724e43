package io.github.mongowriteguard.exception;

/**
 * A write the guard refuses before anything is sent (a bulk, or a single-document write, which the guard runs as a bulk
 * of one): the message names the write's index, the problem and the fix. Where the driver itself refuses the same input
 * with an {@code IllegalArgumentException}, this is one too.
 *
 * <pre>{@code
 * try {
 *     planner.plan(models, options);
 * } catch (InvalidBulkException e) {
 *     deadLetter(models.get(e.index()), e.getMessage());   // index is -1 for a problem of the whole bulk
 * }
 * }</pre>
 */
public final class InvalidBulkException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    /** What is wrong. */
    public enum Problem {
        /** The list of write models is {@code null}. */
        NULL_MODELS,
        /** A write model, or its document, filter, update or pipeline stage, is {@code null}. */
        NULL_ELEMENT,
        /** A model class this version of the guard does not know. */
        UNSUPPORTED_MODEL,
        /** An update document that is empty or has a field that is not an update operator, or an empty pipeline. */
        UPDATE_WITHOUT_OPERATORS,
        /** A replacement document with a top-level field starting with {@code $}. */
        REPLACEMENT_WITH_OPERATORS,
        /** A document over the 16 MiB BSON limit. */
        DOCUMENT_TOO_LARGE,
        /** An unacknowledged write concern ({@code w:0}): nobody would confirm the outcome. */
        UNACKNOWLEDGED_WRITE_CONCERN,
        /** A multi-document write under the idempotent-retry opt-in that is not provably idempotent. */
        NOT_IDEMPOTENT,
        /** An options object of a class the guard does not know. */
        UNSUPPORTED_OPTIONS,
        /** An empty list of writes to a driver-style bulk method, which the driver refuses too. */
        EMPTY_BULK,
        /** An option value the driver refuses too, such as a negative {@code maxTime}. */
        INVALID_OPTION,
        /**
         * Caller-chosen statement ids ({@code StatementIds}) that do not fit the bulk: another number of ids than
         * writes, a write that cannot be one retryable statement, or a client that sends no {@code txnNumber}.
         */
        INVALID_STATEMENT_IDS
    }

    /** The index of the refused write in the caller's list, or -1. */
    private final int index;
    /** What is wrong. */
    private final Problem problem;

    /**
     * A refusal of the write at {@code index} of the caller's list.
     *
     * @param index   the index in the caller's list, or -1 for a problem of the whole call
     * @param problem what is wrong
     * @param message the problem and its fix, ending with "Nothing was sent."
     */
    public InvalidBulkException(int index, Problem problem, String message) {
        super(message);
        this.index = index;
        this.problem = problem;
    }

    /**
     * The index of the offending write.
     *
     * @return its index in the caller's list, or -1 when the problem is the list or the call itself
     */
    public int index() {
        return index;
    }

    /**
     * What is wrong, for code that reacts to it.
     *
     * @return the problem
     */
    public Problem problem() {
        return problem;
    }
}
