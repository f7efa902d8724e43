package io.github.mongowriteguard.internal.execution;

import com.mongodb.session.ClientSession;
import io.github.mongowriteguard.internal.command.CommandReply;
import io.github.mongowriteguard.internal.command.WriteCommand;
import io.github.mongowriteguard.internal.copies.SettleHold;
import io.github.mongowriteguard.internal.outcome.RecordedIndexOutcome;
import io.github.mongowriteguard.internal.outcome.RecordedWriteOutcome;
import io.github.mongowriteguard.internal.plan.PlannedBulk;
import io.github.mongowriteguard.internal.server.ErrorCodes;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import java.util.List;
import java.util.function.UnaryOperator;
import org.bson.BsonDocument;
import org.bson.codecs.configuration.CodecRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Settles UNKNOWN writes: sends each held command of an outcome again, the same server copy (same session,
 * {@code txnNumber}, statements and {@code _id}s), and records what its answer proves. The server answers a statement
 * the copy executed from its statement record and runs one it did not
 * ({@code src/mongo/db/transaction/transaction_participant.cpp} {@code checkStatementExecuted},
 * {@code src/mongo/db/ops/write_ops_exec.cpp}); while the first send still runs, the resend waits for the session
 * ({@code src/mongo/db/session/session_catalog.cpp}) until its deadline, which proves nothing, and the write stays
 * UNKNOWN and held. Only a reply ({@code ok: 1}) settles; a statement the server can no longer tell about
 * ({@code TransactionTooOld} 225: the session moved on; {@code IncompleteTransactionHistory} 217: a migration without
 * the history, or the oplog rolled over) stays UNKNOWN and cannot be settled. A settle never starts a new copy.
 */
public final class Settle {
    private Settle() {}

    /** Codes that say the server no longer has the statement record a settle reads. */
    private static boolean recordGone(int code) {
        return code == ErrorCodes.TRANSACTION_TOO_OLD || code == ErrorCodes.INCOMPLETE_TRANSACTION_HISTORY;
    }

    /**
     * The outcome with every held command sent again and recorded; itself when it holds none.
     *
     * @throws IllegalArgumentException for an outcome the guard did not build
     */
    public static <T> WriteOutcome<T> settle(WriteOutcome<T> outcome) {
        return settle(outcome, UnaryOperator.identity());
    }

    /**
     * As {@link #settle(WriteOutcome)}, each held copy resent by {@code resendWith} applied to the sender that held it
     * (the reactive guard's: the same sender on a channel carrying the settle's subscriber context).
     */
    static <T> WriteOutcome<T> settle(WriteOutcome<T> outcome, UnaryOperator<CopySender> resendWith) {
        if (!(outcome instanceof RecordedWriteOutcome<T> recorded)) {
            throw new IllegalArgumentException("settle takes the WriteOutcome a guarded call returned (or a settle"
                    + " returned), not "
                    + (outcome == null ? "null" : outcome.getClass().getName())
                    + "; nothing was sent");
        }
        List<SettleHold.Entry> held = recorded.held();
        if (held.isEmpty()) {
            return outcome;
        }
        RecordedWriteOutcome.Builder<T> builder = new RecordedWriteOutcome.Builder<>(recorded);
        for (SettleHold.Entry entry : held) {
            ((HeldCommand) entry.held()).settle(entry, builder, resendWith);
        }
        mark(builder);
        return builder.build();
    }

    /**
     * Marks the UNKNOWN writes of the held commands settleable, and names why every other UNKNOWN write cannot be
     * settled; gives each insert the {@code _id} the guard assigned. Before an outcome is built.
     */
    static void mark(RecordedWriteOutcome.Builder<?> builder, PlannedBulk plan, int size) {
        // Made only when something is held: a call whose writes all applied allocates nothing here.
        boolean[] settleable = null;
        for (SettleHold.Entry entry : builder.heldSoFar()) {
            if (entry.releasedBecause() == null) {
                if (settleable == null) {
                    settleable = new boolean[size];
                }
                WriteCommand command = ((HeldCommand) entry.held()).command;
                for (int position = 0; position < command.size(); position++) {
                    settleable[command.index(position)] = true;
                }
            }
        }
        for (int index = 0; index < size; index++) {
            IndexOutcome outcome = builder.get(index);
            if (outcome == null || (outcome.status() == WriteStatus.APPLIED && !outcome.settleable())) {
                continue;
            }
            if (outcome.status() == WriteStatus.UNKNOWN) {
                if (settleable != null && settleable[index]) {
                    outcome = RecordedIndexOutcome.settleable(outcome, true, "");
                } else if (!outcome.message().contains("cannot be settled")) {
                    outcome = RecordedIndexOutcome.settleable(outcome, false, whyNot(plan, index));
                }
            } else if (outcome.settleable()) {
                outcome = RecordedIndexOutcome.settleable(outcome, false, "");
            }
            // Not for an applied insert, whose _id the outcome's inserts() lists as the driver's result does: one
            // more object per insert of a large bulk for nothing a caller acts on.
            if (outcome.status() != WriteStatus.APPLIED
                    && outcome.assignedId() == null
                    && plan.hasOwnAssignedId(index)) {
                IndexOutcome withoutId = outcome;
                outcome = plan.id(index)
                        .map(id -> RecordedIndexOutcome.withAssignedId(withoutId, id))
                        .orElse(outcome);
            }
            if (outcome != builder.get(index)) {
                builder.set(outcome);
            }
        }
    }

    private static void mark(RecordedWriteOutcome.Builder<?> builder) {
        List<SettleHold.Entry> held = builder.heldSoFar();
        if (!held.isEmpty()) {
            PlannedBulk plan = ((HeldCommand) held.get(0).held()).plan;
            mark(builder, plan, plan.size());
        }
    }

    private static String whyNot(PlannedBulk plan, int index) {
        if (plan.sentAs(index).isMulti()) {
            return "cannot be settled: a multi-document write has no statement record to be answered from (read the"
                    + " documents to learn what it changed)";
        }
        return "cannot be settled: the guard holds no copy of its command (sent on the caller's session, or its"
                + " command did not end in a way a settle can resend)";
    }

    /** A command whose outcome is UNKNOWN, held with its session for a settle. */
    static final class HeldCommand implements SettleHold.Held {
        private final ClientSession session;
        private final boolean ownSession;
        private final BsonDocument body;
        private final long txnNumber;
        private final @Nullable String copyName;
        private final WriteCommand command;
        private final PlannedBulk plan;
        private final CopySender sender;
        private final CodecRegistry registry;
        /**
         * The reply of the copy that was recorded (a write-concern error, statements mongos failed at its deadline):
         * its counts and ids are in the outcome; null when the copy got none.
         */
        private final @Nullable CommandReply counted;

        HeldCommand(
                ClientSession session,
                boolean ownSession,
                BsonDocument body,
                long txnNumber,
                @Nullable String copyName,
                WriteCommand command,
                PlannedBulk plan,
                CopySender sender,
                CodecRegistry registry,
                @Nullable CommandReply counted) {
            this.session = session;
            this.ownSession = ownSession;
            this.body = body;
            this.txnNumber = txnNumber;
            this.copyName = copyName;
            this.command = command;
            this.plan = plan;
            this.sender = sender;
            this.registry = registry;
            this.counted = counted;
        }

        /** Closes the session if the guard started it: the server may forget it, and its record, from now on. */
        @Override
        public void release() {
            if (ownSession) {
                try {
                    session.close();
                } catch (RuntimeException e) {
                    // closing a session only returns it to the driver's pool
                }
            }
        }

        <T> void settle(
                SettleHold.Entry entry, RecordedWriteOutcome.Builder<T> builder, UnaryOperator<CopySender> resendWith) {
            String gone = entry.releasedBecause();
            if (gone != null) {
                cannotSettle(builder, gone);
                return;
            }
            CopySender.Sent sent;
            try {
                sent = resendWith
                        .apply(sender)
                        .resend(Sessions.held(session), body, txnNumber, copyName, CopySender.Tally.of(builder, true));
            } catch (IllegalStateException e) {
                // the caller closed its own session: the driver refuses to send on it
                release(entry, builder, "the session it was sent on is closed (" + e.getMessage() + ")");
                return;
            }
            entry.touch();
            SendResult result = sent.result();
            if (result instanceof SendResult.Reply reply) {
                new OutcomeRecorder<>(plan, builder, registry, true, counted).record(command, sent);
                CommandReply answer = reply.reply();
                int stoppedAt = -1;
                for (int position = 0; position < command.size(); position++) {
                    CommandReply.StatementError error =
                            answer.firstErrorPosition() >= 0 ? answer.error(position) : null;
                    int index = command.index(position);
                    if (error != null && recordGone(error.code())) {
                        stoppedAt = stoppedAt < 0 ? position : stoppedAt;
                        builder.set(RecordedIndexOutcome.unknown(
                                index,
                                "cannot be settled: the server no longer has the statement record (" + error.code()
                                        + " " + error.codeName() + ")",
                                RetrySafety.ofNewCopy(plan, index, registry)));
                    } else if (stoppedAt >= 0 && command.ordered()) {
                        builder.set(RecordedIndexOutcome.unknown(
                                index,
                                "cannot be settled: the settle of its ORDERED command stopped at index "
                                        + command.index(stoppedAt) + ", whose statement record is gone",
                                RetrySafety.ofNewCopy(plan, index, registry)));
                    }
                }
                boolean unsettled = false;
                for (int position = 0; position < command.size(); position++) {
                    IndexOutcome now = builder.get(command.index(position));
                    if (now.status() == WriteStatus.UNKNOWN && !now.message().contains("cannot be settled")) {
                        unsettled = true;
                    }
                }
                if (unsettled) {
                    builder.held(entry);
                } else {
                    entry.release("it was settled already: read the outcome that settle returned");
                }
                return;
            }
            if (result instanceof SendResult.ServerError error && recordGone(error.code())) {
                release(
                        entry,
                        builder,
                        "the server no longer has the statement record (" + error.code() + " "
                                + error.error().getMessage() + ")");
                return;
            }
            // No answer that proves anything (the copy still runs, the deadline, no primary): held for a later settle.
            for (int position = 0; position < command.size(); position++) {
                int index = command.index(position);
                IndexOutcome before = builder.get(index);
                if (before.status() == WriteStatus.UNKNOWN) {
                    builder.set(RecordedIndexOutcome.settleable(
                            before,
                            true,
                            "not settled yet: a settle's send ended with " + result
                                    + " (the first copy may still run); settle again later"));
                }
            }
            builder.held(entry);
        }

        private void release(SettleHold.Entry entry, RecordedWriteOutcome.Builder<?> builder, String because) {
            entry.release(because);
            cannotSettle(builder, because);
        }

        private void cannotSettle(RecordedWriteOutcome.Builder<?> builder, String because) {
            for (int position = 0; position < command.size(); position++) {
                int index = command.index(position);
                IndexOutcome before = builder.get(index);
                if (before.status() == WriteStatus.UNKNOWN) {
                    builder.set(RecordedIndexOutcome.settleable(before, false, "cannot be settled: " + because));
                }
            }
        }
    }
}
