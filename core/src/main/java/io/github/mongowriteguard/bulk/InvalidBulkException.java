package io.github.mongowriteguard.bulk;

/**
 * A bulk write that the guard refuses before anything is sent: the message names the write's index, the problem and
 * the fix.
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
        DOCUMENT_TOO_LARGE
    }

    /** The offending write's index in the caller's list, or -1 when the problem is the list itself. */
    private final int index;
    /** What is wrong. */
    private final Problem problem;

    InvalidBulkException(int index, Problem problem, String message) {
        super(message);
        this.index = index;
        this.problem = problem;
    }

    /**
     * A refusal at {@code index} of the caller's list; for callers outside this package that plan parts of a larger
     * list (a client-level bulk plans each namespace's writes) and report the caller's index.
     *
     * @param index   the offending write's index in the caller's list, or -1 when the problem is the list itself
     * @param problem what is wrong
     * @param message the message: the index, the problem and the fix, and that nothing was sent
     * @return the exception, to throw
     */
    public static InvalidBulkException of(int index, Problem problem, String message) {
        return new InvalidBulkException(index, problem, message);
    }

    /**
     * Where the problem is.
     *
     * @return the index of the offending write in the caller's list, or -1 when the problem is the list itself
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
