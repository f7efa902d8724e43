package io.github.mongowriteguard.spring.data;

import io.github.mongowriteguard.exception.CopyStillRunningException;
import io.github.mongowriteguard.exception.GuardedBulkWriteException;
import io.github.mongowriteguard.exception.GuardedWriteConcernException;
import io.github.mongowriteguard.exception.GuardedWriteException;
import io.github.mongowriteguard.exception.WriteGuardException;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;
import org.springframework.dao.DataAccessException;

/**
 * The guard's outcome behind a Spring exception, and how the guard's final answers become Spring's.
 *
 * <pre>{@code
 * try {
 *     template.updateFirst(query(where("_id").is(id)), new Update().inc("stock", -1), Item.class);
 * } catch (DataAccessException e) {
 *     GuardedWriteOutcomes.find(e).ifPresent(outcome -> log.warn("not applied: {}", outcome.counts()));
 *     throw e;
 * }
 * }</pre>
 */
public final class GuardedWriteOutcomes {
    private GuardedWriteOutcomes() {}

    /**
     * The guard's outcome carried by {@code failure} or by any exception in its cause chain: a
     * {@link GuardedDataAccessException}, the guard's {@link WriteGuardException} (e.g. as the cause of Spring's
     * {@code UncategorizedMongoDbException}), {@link GuardedBulkWriteException} (the cause of Spring's
     * {@code BulkOperationException}, or its cause's cause for {@code DuplicateKeyException}), or
     * {@link GuardedWriteException} and {@link GuardedWriteConcernException} (the cause of the driver's exception that
     * Spring translates, e.g. the cause's cause of an {@code UncategorizedMongoDbException} after a write concern
     * error).
     *
     * @param failure any exception, e.g. one a template or a repository threw
     * @return the first outcome found walking from {@code failure} through its causes; empty when none carries one
     */
    public static Optional<WriteOutcome<?>> find(@Nullable Throwable failure) {
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
            WriteOutcome<?> outcome = carried(t);
            if (outcome != null) {
                return Optional.of(outcome);
            }
        }
        return Optional.empty();
    }

    private static @Nullable WriteOutcome<?> carried(Throwable t) {
        if (t instanceof GuardedDataAccessException translated) {
            return translated.outcome();
        }
        if (t instanceof WriteGuardException guard) {
            return guard.outcome();
        }
        if (t instanceof GuardedBulkWriteException bulk) {
            return bulk.outcome();
        }
        if (t instanceof GuardedWriteException write) {
            return write.outcome();
        }
        if (t instanceof GuardedWriteConcernException writeConcern) {
            return writeConcern.outcome();
        }
        return null;
    }

    /**
     * Whether sending the whole call again cannot apply any of its writes twice nor undo a later write: no copy of it
     * is still running or may be ({@link WriteOutcome#stillRunning()}, {@link WriteOutcome#possiblyRunning()}: a copy
     * that applies after the caller's next write of the same document would undo it), none of its writes was applied,
     * and every write that was not applied is {@link IndexOutcome#retrySafe()} (never sent, a transient failure of a
     * single-document write, or an UNKNOWN write that is idempotent on one document).
     * SUPERSEDED writes do not count: sent again with the write that superseded them, they end the same way.
     *
     * @param outcome a call's outcome
     * @return true when a resend of the whole call is safe
     */
    public static boolean resendSafe(WriteOutcome<?> outcome) {
        if (!outcome.stillRunning().isEmpty() || !outcome.possiblyRunning().isEmpty()) {
            return false;
        }
        for (IndexOutcome index : outcome.outcomes()) {
            switch (index.status()) {
                case SUPERSEDED -> {}
                case FAILED, SKIPPED, UNKNOWN -> {
                    if (!index.retrySafe()) {
                        return false;
                    }
                }
                default -> {
                    return false; // APPLIED: a resend sends it again; or a status this version does not know
                }
            }
        }
        return true;
    }

    /**
     * The guard's final answer as Spring's: a {@link GuardedWriteRetryableException} when
     * {@link #resendSafe(WriteOutcome)}, otherwise (and always for {@link CopyStillRunningException}) a
     * {@link GuardedWriteNotRetryableException}.
     *
     * @param failure the guard's exception
     * @return the translation, or null when the exception carries no outcome (Spring's translation then applies)
     */
    static @Nullable DataAccessException translate(WriteGuardException failure) {
        WriteOutcome<?> outcome = failure.outcome();
        if (outcome == null) {
            return null;
        }
        if (!(failure instanceof CopyStillRunningException) && resendSafe(outcome)) {
            return new GuardedWriteRetryableException(failure, outcome);
        }
        return new GuardedWriteNotRetryableException(failure, outcome);
    }

    /** The statuses of a call's writes, e.g. {@code UNKNOWN=1}, for an exception's message (never document values). */
    static String summary(WriteOutcome<?> outcome) {
        Map<WriteStatus, Integer> counts = new TreeMap<>();
        outcome.counts().forEach((status, n) -> {
            if (n > 0) {
                counts.put(status, n);
            }
        });
        return "writes " + counts
                + (outcome.stillRunning().isEmpty()
                        ? ""
                        : ", copies still running " + outcome.stillRunning().size());
    }
}
