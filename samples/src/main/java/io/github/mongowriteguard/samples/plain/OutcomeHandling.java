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
 * as one guarded bulk, settle what is UNKNOWN (the same server copies sent again, never a new one), then decide for
 * each record from its own outcome, never from the model alone.
 *
 * <pre>{@code
 * Written<Order> written = OutcomeHandling.write(orders, models);
 * for (Decision d : written.decisions()) {
 *     switch (d.action()) {
 *         case ACK -> queue.ack(records.get(d.index()));
 *         case RESEND_NOW -> retryNow.add(records.get(d.index()));
 *         case RESEND_LATER -> retryLater.add(records.get(d.index()));
 *         case SETTLE_LATER -> unsettled.add(written);          // OutcomeHandling.settleAgain(orders, written) later
 *         case DEAD_LETTER -> deadLetters.send(records.get(d.index()), d.reason());
 *     }
 * }
 * }</pre>
 */
public final class OutcomeHandling {
    private OutcomeHandling() {}

    /** What to do with one record. */
    public enum Action {
        /** The write applied (first time, or proven by a settle): acknowledge the record. */
        ACK,
        /**
         * The write was never sent (its key or the call stopped because of a write that is now APPLIED or FAILED):
         * send it again now.
         */
        RESEND_NOW,
        /**
         * The write failed with a transient error after the guard's own retries, or reached no server: it was not
         * applied, send it again later.
         */
        RESEND_LATER,
        /**
         * The outcome is still UNKNOWN and settleable (its first copy still runs), or the write waits behind such a
         * write on its key: keep the outcome and settle it again later ({@link #settleAgain}), before
         * {@link WriteOutcome#settleableUntil()}. Never send the write again as a new one.
         */
        SETTLE_LATER,
        /** The write failed for good, or its outcome cannot be settled (the reason says why): a person decides. */
        DEAD_LETTER
    }

    /**
     * The decision for one record, with what a dead-letter handler needs.
     *
     * @param index     the record's index in the bulk
     * @param action    what to do
     * @param status    the write's status, after the settle
     * @param retrySafe whether a new copy cannot apply it twice
     * @param reason    why, with the server's error where there is one
     */
    public record Decision(int index, Action action, WriteStatus status, boolean retrySafe, String reason) {}

    /**
     * A batch written: its outcome (settled once) and a decision per record.
     *
     * @param outcome   the settled outcome, to settle again for the records to {@link Action#SETTLE_LATER}
     * @param decisions one decision per record, in order
     * @param <T>       the document class
     */
    public record Written<T>(WriteOutcome<T> outcome, List<Decision> decisions) {}

    /**
     * Writes the records' models as one ORDERED guarded bulk (per key, in order), settles what is UNKNOWN, and
     * decides for each record.
     *
     * @param <T>        the document class
     * @param collection the guarded collection
     * @param models     one model per record
     * @return the settled outcome and one decision per record, in order
     */
    public static <T> Written<T> write(
            GuardedCollection<T> collection, List<? extends WriteModel<? extends T>> models) {
        WriteOutcome<T> outcome = collection.execute(models, new BulkWriteOptions().ordered(true));
        return settleAgain(collection, outcome);
    }

    /**
     * Settles the UNKNOWN writes of an outcome (again) and decides for every record: for a batch whose decisions
     * said {@link Action#SETTLE_LATER}, once the stall or outage is over.
     *
     * @param <T>        the document class
     * @param collection the guarded collection the outcome is of
     * @param outcome    the outcome of {@code execute}, or of an earlier settle
     * @return the settled outcome and one decision per record, in order
     */
    public static <T> Written<T> settleAgain(GuardedCollection<T> collection, WriteOutcome<T> outcome) {
        WriteOutcome<T> settled = outcome.hasUnknown() ? collection.settle(outcome) : outcome;
        return new Written<>(settled, decide(settled));
    }

    /**
     * Decides for every index of an outcome (settle it first: an UNKNOWN write that is settleable is only ever
     * settled, never sent again).
     *
     * @param outcome the outcome of {@code execute} or {@code settle}
     * @return one decision per index
     */
    public static List<Decision> decide(WriteOutcome<?> outcome) {
        return outcome.outcomes().stream().map(o -> decide(outcome, o)).toList();
    }

    static Decision decide(WriteOutcome<?> outcome, IndexOutcome o) {
        return switch (o.status()) {
            case APPLIED -> decision(o, Action.ACK, "applied");
            case SKIPPED -> skipped(outcome, o);
            case FAILED ->
                o.retrySafe()
                        ? decision(o, Action.RESEND_LATER, failure(o))
                        : decision(o, Action.DEAD_LETTER, failure(o));
            case UNKNOWN ->
                o.settleable()
                        ? decision(o, Action.SETTLE_LATER, "not settled yet, settle again later: " + o.message())
                        : decision(o, Action.DEAD_LETTER, "outcome unknown and cannot be settled: " + o.message());
            // A status this recipe does not know (a newer guard): a person decides, nothing is resent blindly.
            default -> decision(o, Action.DEAD_LETTER, "status " + o.status() + ": " + o.message());
        };
    }

    /**
     * A write not sent: sent again now, unless the write it waits for (an earlier write on its key) is still UNKNOWN,
     * in which case it waits for that one's settle, or goes to the dead letters with it.
     */
    private static Decision skipped(WriteOutcome<?> outcome, IndexOutcome o) {
        String why = "not sent (because of write " + o.relatedIndex() + "): " + o.message();
        if (o.relatedIndex() >= 0) {
            IndexOutcome blocker = outcome.outcome(o.relatedIndex());
            if (blocker.status() == WriteStatus.UNKNOWN) {
                return blocker.settleable()
                        ? decision(o, Action.SETTLE_LATER, why)
                        : decision(o, Action.DEAD_LETTER, why + "; write " + o.relatedIndex() + " cannot be settled");
            }
        }
        return decision(o, Action.RESEND_NOW, why);
    }

    private static String failure(IndexOutcome o) {
        return o.wasSent()
                ? "failed: " + o.codeName() + " (" + o.errorCode() + "): " + o.message()
                : "not sent (no server reached): " + o.message();
    }

    private static Decision decision(IndexOutcome o, Action action, String reason) {
        return new Decision(o.index(), action, o.status(), o.retrySafe(), reason);
    }
}
