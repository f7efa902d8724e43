package io.github.mongowriteguard.outcome;

import com.mongodb.MongoException;
import com.mongodb.ServerAddress;
import com.mongodb.bulk.BulkWriteInsert;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.bulk.BulkWriteUpsert;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.copies.CopyRecord;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.jspecify.annotations.Nullable;

/**
 * Everything a guarded write did: one {@link IndexOutcome} per index of the caller's bulk, counts like the driver's
 * {@link BulkWriteResult} (what the server did), the rounds and commands it
 * took, and the caller's models that were not applied. An UNKNOWN write is settled ({@code WriteGuard.settle}) before
 * anything is retried or dead-lettered.
 *
 * <pre>{@code
 * WriteOutcome<Order> outcome = orders.execute(models, new BulkWriteOptions().ordered(true));
 * if (outcome.hasUnknown()) outcome = orders.settle(outcome); // the same server copies again: UNKNOWN becomes exact
 * }</pre>
 *
 * <p>Read-only; the guard builds it.
 *
 * <p>Implemented by the library only (callers read it; it may gain methods).
 *
 * @param <T> the collection's document class
 */
public interface WriteOutcome<T> {
    /**
     * What the server reported for one update, replace or delete sent in a command of its own (a client-level bulk
     * with {@code verboseResults(true)}): that command's {@code n} (documents matched or upserted, or deleted) and
     * {@code nModified}, which are then the write's own.
     *
     * @param delete   true for a delete, false for an update or replace
     * @param n        the command's {@code n}
     * @param modified the command's {@code nModified} (0 for a delete)
     */
    record StatementCounts(boolean delete, long n, long modified) {}

    /**
     * The counts of an applied update, replace or delete that was sent in a command of its own, or null (an insert, a
     * write that shared its command with others, a write that did not apply).
     *
     * @param index an index of the caller's bulk
     * @return the counts of that write alone, or null
     */
    @Nullable
    StatementCounts statementCounts(int index);

    /** {@return one outcome per index of the caller's bulk, in index order} */
    List<IndexOutcome> outcomes();

    /**
     * The outcome of one write.
     *
     * @param index an index of the caller's bulk
     * @return that write's outcome
     * @throws IndexOutOfBoundsException when {@code index} is not an index of the caller's bulk
     */
    IndexOutcome outcome(int index);

    /** {@return the number of writes with each status} */
    Map<WriteStatus, Integer> counts();

    /** {@return true when every write was applied, or left out as SUPERSEDED by a later write that was} */
    boolean isComplete();

    /** {@return true when some write's outcome is {@link WriteStatus#UNKNOWN}} */
    boolean hasUnknown();

    /** {@return true when some write is {@link WriteStatus#FAILED}} */
    boolean hasFailures();

    /** {@return the number of documents inserted, as the server reported it} */
    int insertedCount();

    /** {@return the number of documents matched by updates and replacements, as the server reported it} */
    int matchedCount();

    /** {@return the number of documents modified, as the server reported it} */
    int modifiedCount();

    /** {@return the number of documents deleted, as the server reported it} */
    int deletedCount();

    /** {@return the upserts, with the index each write had in the caller's bulk} */
    List<BulkWriteUpsert> upserts();

    /** {@return the inserts applied, with their index in the caller's bulk and their {@code _id}} */
    List<BulkWriteInsert> inserts();

    /**
     * {@return the rounds run} Each is one unordered bulk, or the one ordered bulk when order had to be kept.
     */
    int rounds();

    /** {@return the write commands (distinct server copies) the guard started} */
    int commands();

    /**
     * {@return the times those commands were sent} A resend of the same copy counts here, not in {@link #commands()}.
     */
    int sends();

    /**
     * The first write-concern error the server reported, or null. The writes it concerns were applied on the
     * primary; their durability was not confirmed.
     *
     * @return the write-concern error document, or null
     */
    @Nullable
    BsonDocument writeConcernError();

    /**
     * The server copies this call started, one per write command (a retry of a single-document write resends the
     * same copy): sends, attempts, and whether each may still be running.
     *
     * @return one record per server copy
     */
    List<CopyRecord> copies();

    /**
     * The error of a whole command (the server answered {@code ok: 0}, after the guard's retries), exactly as the
     * driver raised it; null when none. The call stopped there, as the driver's bulk does: later writes are SKIPPED.
     *
     * @return the driver's exception for the failed command, or null
     */
    @Nullable
    MongoException commandError();

    /**
     * {@return the server that answered the call's first command, as the driver reports it; null when nothing was
     * answered}
     */
    @Nullable
    ServerAddress serverAddress();

    /**
     * {@return the error labels of the replies that reported write errors or write-concern errors} Collected as the
     * driver collects them.
     */
    Set<String> errorLabels();

    /** {@return the attempts in all (first sends and retries of every copy)} */
    int attempts();

    /**
     * {@return the copies the server may still be running} The client stopped waiting and nothing showed that they
     * ended.
     */
    List<CopyRecord> possiblyRunning();

    /**
     * {@return the copies whose retry was refused because {@code currentOp} showed them still running; empty when
     * none}
     */
    List<CopyRecord> stillRunning();

    /**
     * {@return the caller's models whose status is FAILED, SKIPPED or UNKNOWN, in index order; never SUPERSEDED ones,
     * which sent after the write that superseded them would undo it} The models alone: to decide what to do with each,
     * read its {@link IndexOutcome} in {@link #outcomes()}, which keeps the status, the error, {@code retrySafe()} and
     * {@code settleable()}. Settle the UNKNOWN ones ({@code WriteGuard.settle}) before anything is sent again: a new
     * copy of an UNKNOWN write can apply it twice, or after later writes on its document.
     */
    List<WriteModel<? extends T>> notApplied();

    /**
     * Until when the writes of this outcome that are {@link IndexOutcome#settleable()} can be settled
     * ({@code WriteGuard.settle}): the guard holds their commands and sessions until then
     * ({@code WriteGuardSettings.getSettleHoldMaxAge()} after the last send, unless more commands than
     * {@code getSettleHoldMaxCopies()} wait). Null when nothing in this outcome can be settled.
     *
     * @return the earliest end of a hold of this outcome's commands, or null
     */
    default @Nullable Instant settleableUntil() {
        return null;
    }

    /** {@return the counts as the driver's result type} */
    BulkWriteResult toBulkWriteResult();
}
