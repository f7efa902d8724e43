package io.github.mongowriteguard.internal.execution;

import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.session.ClientSession;
import io.github.mongowriteguard.copies.StatementIds;
import org.jspecify.annotations.Nullable;

/**
 * What one guarded call asks of {@link BulkExecutor#execute}: the caller's method (for metrics), session and options,
 * the opt-ins, and what the call throws for its outcome. Not API.
 *
 * <pre>{@code
 * executor.execute(GuardedCall.of("insertOne", session, options, ThrowPolicy.SINGLE_WRITE), List.of(model));
 * }</pre>
 *
 * @param operation              the caller's method ({@code bulkWrite}, {@code insertOne}, ...), for metrics
 * @param session                the caller's session (outside a transaction), or null for sessions of the guard's own
 * @param options                the bulk's options
 * @param idempotentMultiRetries the caller's explicit opt-in to retry multi-document updates that are provably
 *                               idempotent
 * @param statementCounts        every update, replace and delete in a command of its own (the rounds, their order and
 *                               every other rule unchanged), so each applied one has its own counts
 *                               ({@code WriteOutcome.statementCounts(int)})
 * @param throwPolicy            what the call throws for its outcome, inside its observation
 * @param statementIds           the caller's chosen server identity of the writes (session id, transaction number,
 *                               statement ids), or null for the guard's own sessions and numbers
 */
public record GuardedCall(
        String operation,
        @Nullable ClientSession session,
        BulkWriteOptions options,
        boolean idempotentMultiRetries,
        boolean statementCounts,
        ThrowPolicy throwPolicy,
        @Nullable StatementIds statementIds) {

    /** A call without opt-ins. */
    public static GuardedCall of(
            String operation, @Nullable ClientSession session, BulkWriteOptions options, ThrowPolicy throwPolicy) {
        return new GuardedCall(operation, session, options, false, false, throwPolicy, null);
    }

    /** This call, its writes sent with the caller's chosen identity. */
    public GuardedCall statementIds(StatementIds ids) {
        return new GuardedCall(operation, session, options, idempotentMultiRetries, statementCounts, throwPolicy, ids);
    }

    /** This call, with every update, replace and delete in a command of its own. */
    public GuardedCall statementCounts(boolean counts) {
        return new GuardedCall(operation, session, options, idempotentMultiRetries, counts, throwPolicy, statementIds);
    }
}
