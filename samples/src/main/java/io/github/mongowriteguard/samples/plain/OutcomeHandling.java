package io.github.mongowriteguard.samples.plain;

import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import java.util.List;

/**
 * The README's recipe for a consumer without Spring (a queue, a file, a request handler): write a batch of records
 * as one guarded bulk, then decide for each record from its own outcome, never from the model alone.
 *
 * <pre>{@code
 * for (Decision d : OutcomeHandling.write(orders, models)) {
 *     switch (d.action()) {
 *         case ACK -> queue.ack(records.get(d.index()));
 *         case RESEND_NOW -> retryNow.add(records.get(d.index()));
 *         case RESEND_LATER -> retryLater.add(records.get(d.index()));
 *         case DEAD_LETTER -> deadLetters.send(records.get(d.index()), d.reason());
 *     }
 * }
 * }</pre>
 */
public final class OutcomeHandling {
    private OutcomeHandling() {}

    /** What to do with one record. */
    public enum Action {
        /** The write applied: acknowledge the record. */
        ACK,
        /** The write was never sent (its key or the call stopped): send it again now. */
        RESEND_NOW,
        /**
         * Sending it again is safe but not yet useful: a transient failure, or an unknown outcome that a new copy
         * cannot apply twice. Send it again later, and not while a copy of it may still run ({@code copyMayStillRun}).
         */
        RESEND_LATER,
        /** The write failed for good, or may have applied and a new copy could apply it twice: a person decides. */
        DEAD_LETTER
    }

    /**
     * The decision for one record, with what a dead-letter handler needs.
     *
     * @param index           the record's index in the bulk
     * @param action          what to do
     * @param status          the write's status
     * @param retrySafe       whether a new copy cannot apply it twice
     * @param copyMayStillRun whether a copy of this call may still run on the server (do not resend before it ends)
     * @param reason          why, with the server's error where there is one
     */
    public record Decision(
            int index, Action action, WriteStatus status, boolean retrySafe, boolean copyMayStillRun, String reason) {}

    /**
     * Writes the records' models as one ORDERED guarded bulk (per key, in order) and decides for each.
     *
     * @param <T>        the document class
     * @param collection the guarded collection
     * @param models     one model per record
     * @return one decision per record, in order
     */
    public static <T> List<Decision> write(
            GuardedCollection<T> collection, List<? extends WriteModel<? extends T>> models) {
        WriteOutcome<T> outcome = collection.execute(models, new BulkWriteOptions().ordered(true));
        return decide(outcome);
    }

    /**
     * Decides for every index of an outcome.
     *
     * @param outcome the outcome of {@code execute}
     * @return one decision per index
     */
    public static List<Decision> decide(WriteOutcome<?> outcome) {
        // A copy still running (the gate refused a retry) or possibly running (the client stopped waiting): its
        // writes may still apply, so no record of this call is resent before it ends.
        boolean copyMayStillRun =
                !outcome.stillRunning().isEmpty() || !outcome.possiblyRunning().isEmpty();
        return outcome.outcomes().stream().map(o -> decide(o, copyMayStillRun)).toList();
    }

    static Decision decide(IndexOutcome o, boolean copyMayStillRun) {
        return switch (o.status()) {
            case APPLIED -> decision(o, Action.ACK, copyMayStillRun, "applied");
            case SKIPPED ->
                decision(
                        o,
                        Action.RESEND_NOW,
                        copyMayStillRun,
                        "not sent (because of write " + o.relatedIndex() + "): " + o.message());
            case FAILED ->
                o.retrySafe()
                        ? decision(o, Action.RESEND_LATER, copyMayStillRun, failure(o))
                        : decision(o, Action.DEAD_LETTER, copyMayStillRun, failure(o));
            case UNKNOWN ->
                o.retrySafe()
                        ? decision(
                                o,
                                Action.RESEND_LATER,
                                copyMayStillRun,
                                "outcome unknown, a new copy cannot apply it" + " twice: " + o.message())
                        : decision(
                                o,
                                Action.DEAD_LETTER,
                                copyMayStillRun,
                                "outcome unknown, may have applied, a new copy" + " could apply it twice: "
                                        + o.message());
            // A status this recipe does not know (a newer guard): a person decides, nothing is resent blindly.
            default -> decision(o, Action.DEAD_LETTER, copyMayStillRun, "status " + o.status() + ": " + o.message());
        };
    }

    private static String failure(IndexOutcome o) {
        return o.wasSent()
                ? "failed: " + o.codeName() + " (" + o.errorCode() + "): " + o.message()
                : "not sent (no server reached): " + o.message();
    }

    private static Decision decision(IndexOutcome o, Action action, boolean copyMayStillRun, String reason) {
        return new Decision(o.index(), action, o.status(), o.retrySafe(), copyMayStillRun, reason);
    }
}
