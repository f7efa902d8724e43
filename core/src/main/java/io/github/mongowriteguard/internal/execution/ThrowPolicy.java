package io.github.mongowriteguard.internal.execution;

/**
 * What a guarded call throws for its outcome, applied by {@link DriverExceptions} inside the call's observation (so the
 * observation records it): by {@link BulkExecutor#execute} for a collection's calls, by
 * {@link ClientBulkExecutor#execute} for the client-level bulk. Not API.
 */
public enum ThrowPolicy {
    /** The guard's own {@code execute}: every write failure is in the outcome; nothing is thrown for it. */
    OUTCOME_ONLY,
    /**
     * {@code bulkWrite} and {@code insertMany}: the driver's bulk exception ({@code MongoBulkWriteException}) or the
     * failed command's, typed where the guard knows more ({@link DriverExceptions#throwIfNotComplete}).
     */
    BULK,
    /**
     * The single-write methods: the one write's failure as the driver's single-write method throws it
     * ({@link DriverExceptions#throwIfNotApplied}).
     */
    SINGLE_WRITE,
    /**
     * The client-level {@code bulkWrite}: the driver's {@code ClientBulkWriteException} with the caller's indices, or
     * the failed command's, typed where the guard knows more ({@link DriverExceptions#throwIfClientBulkNotComplete}).
     */
    CLIENT_BULK
}
