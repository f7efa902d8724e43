package io.github.mongowriteguard.internal.execution;

import com.mongodb.session.ClientSession;
import io.github.mongowriteguard.bulk.Round;
import io.github.mongowriteguard.copies.StatementIds;
import io.github.mongowriteguard.internal.ClientBinding;
import io.github.mongowriteguard.internal.command.CommandOptions;
import io.github.mongowriteguard.internal.command.WriteCommand;
import io.github.mongowriteguard.internal.command.WriteCommandEncoder;
import io.github.mongowriteguard.internal.outcome.RecordedIndexOutcome;
import io.github.mongowriteguard.internal.outcome.RecordedWriteOutcome;
import io.github.mongowriteguard.internal.plan.KeyPlacement;
import io.github.mongowriteguard.internal.plan.PlannedBulk;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonValue;
import org.bson.codecs.configuration.CodecRegistry;
import org.jspecify.annotations.Nullable;

/**
 * The state of one guarded bulk while it runs ({@link BulkExecutor} plans it): the round loop, each round's commands
 * sent one by one as server copies ({@link CopySender}) and recorded ({@link OutcomeRecorder}), and when the call
 * stops. A round's ORDERED key runs that reach several shards go side by side ({@link SideBySideKeyRuns}); everything
 * else is sent and recorded one command after another: on the calling thread over the synchronous driver (every step
 * complete at once), in the completions of the replies and backoffs over the reactive one ({@link Continuations}), the
 * same loop either way.
 *
 * @param <T> the collection's document class
 */
final class BulkRun<T> implements AutoCloseable {
    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);
    private static final CompletableFuture<Boolean> STOP = CompletableFuture.completedFuture(false);
    private static final CompletableFuture<Boolean> AGAIN = CompletableFuture.completedFuture(true);

    /** What every run of one executor shares: how commands are encoded and sent. */
    record Tools<T>(
            WriteCommandEncoder<T> encoder,
            CopySender sender,
            GuardRuntime runtime,
            Sessions.Source access,
            CodecRegistry registry,
            long maxTimeMs,
            ClientBinding binding) {}

    /** What one call asks for. */
    record Call(
            PlannedBulk plan,
            boolean perKeyFailures,
            @Nullable BsonDocument writeConcern,
            CommandOptions commandOptions,
            boolean idempotentMultiRetries,
            boolean statementCounts,
            boolean ownSessions,
            @Nullable KeyPlacement placement,
            @Nullable StatementIds statementIds) {}

    final Tools<T> tools;
    final PlannedBulk plan;
    /** An ordered request run in rounds: after a write on a key does not apply, that key's later writes are skipped. */
    final boolean perKeyFailures;

    final RecordedWriteOutcome.Builder<T> outcome;
    final CopySender.Tally tally;
    final Call call;
    final Sessions sessions;
    final OutcomeRecorder<T> recorder;
    private final @Nullable SideBySideKeyRuns<T> sideBySide;
    /** The names of this call's copies, from one random write id. */
    private final CopyNames copyNames = new CopyNames();

    private int commandNumber;
    /** Why nothing more is sent (a whole command failed, an outcome is unknown, an ORDERED round stopped), or null. */
    private @Nullable String stopped;

    private int stoppedAt = -1;
    /** Writes of this call that did not apply for their key (ordered requests); null until the first. */
    private boolean @Nullable [] dead;
    /** Writes held back (not sent) because an earlier write on their key is UNKNOWN; null until the first. */
    private boolean @Nullable [] heldBack;

    BulkRun(Tools<T> tools, Sessions sessions, Call call, RecordedWriteOutcome.Builder<T> outcome) {
        this.tools = tools;
        this.sessions = sessions;
        this.call = call;
        this.plan = call.plan();
        this.perKeyFailures = call.perKeyFailures();
        this.outcome = outcome;
        this.tally = CopySender.Tally.of(outcome);
        this.recorder = new OutcomeRecorder<>(plan, outcome, tools.registry(), tools.binding());
        if (call.statementIds() != null) {
            recorder.callerStatementIds();
        }
        // Side by side only with sessions of the guard's own (a caller's session serves one command at a time), a
        // parallelism above 1, and shards known: otherwise today's one ORDERED command of key runs.
        this.sideBySide = call.ownSessions()
                        && call.placement() != null
                        && !call.placement().isSingleTarget()
                        && tools.runtime().sideBySide().enabled()
                ? new SideBySideKeyRuns<>(this, call.placement())
                : null;
    }

    /**
     * Runs the plan's rounds one after another; complete on return over the synchronous driver, else completed in the
     * last command's answer (no thread held while a command's answer or a backoff is pending).
     */
    CompletableFuture<Void> rounds(Iterable<? extends Round> rounds) {
        java.util.Iterator<? extends Round> next = rounds.iterator();
        return Continuations.repeat(() -> next.hasNext() ? round(next.next()).thenApply(done -> true) : STOP);
    }

    CompletableFuture<Void> round(Round round) {
        List<Integer> together = runnable(round, round.unorderedPart());
        List<Integer> keyRuns = runnable(round, round.keyRuns());
        if (together.isEmpty() && keyRuns.isEmpty()) {
            return DONE;
        }
        outcome.round();
        CompletableFuture<Void> first =
                together.isEmpty() ? DONE : sendAll(round, commands(together, round.isOrdered()));
        if (keyRuns.isEmpty()) {
            return first;
        }
        if (sideBySide == null) {
            return first.thenCompose(done -> sendKeyRuns(round, keyRuns));
        }
        // side by side: the commands go on the guard's daemon threads and this thread waits for them, so over the
        // reactive driver it is one of the guard's threads, never the driver's thread the first part ended on
        return first.thenCompose(done -> tools.sender()
                .mayBlock(() -> CompletableFuture.completedFuture(sideBySide.send(round, keyRuns)))
                .thenCompose(sent -> sent ? DONE : sendKeyRuns(round, keyRuns)));
    }

    WriteCommandEncoder<T>.Commands commands(List<Integer> indices, boolean ordered) {
        return tools.encoder()
                .commands(
                        plan,
                        indices,
                        ordered,
                        call.commandOptions(),
                        call.statementCounts(),
                        call.statementIds() == null
                                ? WriteCommandEncoder.MAX_STATEMENTS
                                : WriteCommandEncoder.MAX_STATEMENTS_WITH_IDS);
    }

    /** The writes of {@code part} still to send: not after a stop, not after a write on their key that did not apply. */
    private List<Integer> runnable(Round round, List<Integer> part) {
        if (part.isEmpty()) {
            return part;
        }
        // Made at the first write that is not run: until then every write of the part runs, and the part is the list.
        List<Integer> runnable = null;
        for (int position = 0; position < part.size(); position++) {
            int index = part.get(position);
            int previous = plan.previousOnKey(index);
            boolean skipped = true;
            if (stopped != null) {
                skipAfterStop(index);
            } else if (previous >= 0 && behindUnknown(previous)) {
                holdBack(index, previous);
            } else if (perKeyFailures && previous >= 0 && !appliedBefore(round, previous)) {
                skipOnKey(index, previous);
            } else {
                skipped = false;
            }
            if (skipped && runnable == null) {
                runnable = new ArrayList<>(part.subList(0, position));
            } else if (!skipped && runnable != null) {
                runnable.add(index);
            }
        }
        return runnable == null ? part : runnable;
    }

    /**
     * Whether {@code previous}, the write before another on its key, leaves that key alive: applied in an earlier
     * round, or, in this round's key runs (not sent yet), not itself skipped.
     */
    private boolean appliedBefore(Round round, int previous) {
        if (plan.roundOf(previous) == round.number()) {
            return !isDead(previous);
        }
        return applied(outcome.get(previous));
    }

    /**
     * Whether a later write on the key of {@code previous} must wait: {@code previous} is UNKNOWN (its write concern
     * failed: the call goes on, as the driver's; any other UNKNOWN stops the call), or was itself held back. Sent now,
     * the later write would be applied before the earlier one is settled, and a recipe that sent the earlier one again
     * after it would undo it (a replacement sent again after a later {@code $inc}); or a failover that rolled the
     * earlier one back would apply it after the later one, when the settle runs it again.
     */
    private boolean behindUnknown(int previous) {
        if (heldBack != null && heldBack[previous]) {
            return true;
        }
        IndexOutcome earlier = outcome.get(previous);
        return earlier != null && earlier.status() == WriteStatus.UNKNOWN;
    }

    /**
     * Holds back a write whose key has an earlier UNKNOWN write: not sent, naming that UNKNOWN write (behind a write
     * held back itself, the one that one names), so that a recipe sends the key's held-back writes only once it is
     * settled, and then in order.
     */
    void holdBack(int index, int previous) {
        int unknown =
                heldBack != null && heldBack[previous] ? outcome.get(previous).relatedIndex() : previous;
        if (heldBack == null) {
            heldBack = new boolean[plan.size()];
        }
        heldBack[index] = true;
        markDead(index);
        outcome.set(RecordedIndexOutcome.skipped(
                index,
                unknown,
                "not sent: the earlier write on the same key (index " + unknown + ") is UNKNOWN; settle it first"
                        + " (WriteGuard.settle), then send this write, so that it is never applied before that one"));
    }

    void skipOnKey(int index, int previous) {
        markDead(index);
        outcome.set(RecordedIndexOutcome.skipped(
                index,
                previous,
                "not run: the earlier write on the same key (index " + previous + ") is "
                        + outcome.get(previous).status()));
    }

    /** Sends the commands one by one: each is encoded when the one before it (and every resend of it) is done. */
    private CompletableFuture<Void> sendAll(Round round, WriteCommandEncoder<T>.Commands commands) {
        return Continuations.repeat(() -> {
            if (!commands.hasNext()) {
                return STOP;
            }
            WriteCommand command = commands.next();
            int blocked = command.ordered() && stopped == null ? firstBehindUnknown(command) : -1;
            if (blocked >= 0) {
                // A bulk run as given, in the caller's order: what comes before the held-back write goes, then the
                // bulk stops there, as an ORDERED bulk stops, rather than apply later writes before it.
                List<Integer> before = new ArrayList<>(blocked);
                for (int position = 0; position < blocked; position++) {
                    before.add(command.index(position));
                }
                CompletableFuture<Void> sentBefore = before.isEmpty() ? DONE : sendAll(round, commands(before, true));
                return sentBefore.thenApply(done -> {
                    int index = command.index(blocked);
                    if (stopped == null) {
                        holdBack(index, plan.previousOnKey(index));
                        stop(
                                index,
                                "the bulk keeps the caller's order and stopped before index " + index
                                        + ", whose earlier write on the same key (index "
                                        + outcome.get(index).relatedIndex()
                                        + ") is UNKNOWN");
                    }
                    for (int position = blocked + 1; position < command.size(); position++) {
                        skipAfterStop(command.index(position));
                    }
                    return true;
                });
            }
            return sent(round, command).thenApply(wasSent -> {
                if (wasSent && command.ordered()) {
                    int failed = firstNotApplied(command);
                    if (failed >= 0) {
                        int index = command.index(failed);
                        stop(
                                index,
                                "the bulk keeps the caller's order and stopped after index " + index
                                        + " did not apply");
                    }
                }
                return true;
            });
        });
    }

    /**
     * Sends a round's key runs as ORDERED commands, one after another. The server runs an ORDERED command's statements
     * in order and stops at the first that does not apply (write_ops_exec.cpp; through mongos, batch_write_exec.cpp
     * stops the same way): the statements before it applied, none after it ran. Those after it are sent again, in the
     * same order, without the remaining writes of the failed write's key, which are SKIPPED as in rounds.
     */
    private CompletableFuture<Void> sendKeyRuns(Round round, List<Integer> keyRuns) {
        // the loop's state: the statements still to encode, and the commands being sent
        var state = new Object() {
            List<Integer> pending = keyRuns;
            WriteCommandEncoder<T>.@Nullable Commands commands;
        };
        return Continuations.repeat(() -> {
            if (state.commands == null) {
                if (state.pending.isEmpty()) {
                    return STOP;
                }
                state.commands = commands(state.pending, true);
                state.pending = List.of();
            }
            WriteCommandEncoder<T>.Commands commands = state.commands;
            if (!commands.hasNext()) {
                state.commands = null;
                return AGAIN;
            }
            WriteCommand command = commands.next();
            return sent(round, command).thenApply(wasSent -> {
                List<Integer> resend = wasSent ? resendAfterFailure(command, commands) : null;
                if (resend != null) {
                    state.pending = resend;
                    state.commands = null;
                }
                return true;
            });
        });
    }

    /**
     * After an ORDERED command of key runs was recorded: when one of its statements did not apply, marks it dead and
     * gives the statements to send again (those after it, then {@code later}'s not encoded yet, in order) without the
     * remaining writes of its key, which are SKIPPED; null when every statement applied.
     */
    @Nullable
    List<Integer> resendAfterFailure(WriteCommand command, WriteCommandEncoder<T>.@Nullable Commands later) {
        int failed = firstNotApplied(command);
        if (failed < 0 && (later == null || !later.hasNext() || !anyUnknown(command))) {
            return null;
        }
        List<Integer> rest = new ArrayList<>();
        if (failed >= 0) {
            markDead(command.index(failed));
            for (int position = failed + 1; position < command.size(); position++) {
                rest.add(command.index(position));
            }
        }
        if (later != null) {
            rest.addAll(later.remaining()); // the later commands' statements, in order
        }
        List<Integer> pending = new ArrayList<>(rest.size());
        for (int index : rest) {
            int previous = plan.previousOnKey(index);
            if (previous >= 0 && behindUnknown(previous)) {
                // after a write-concern error: the later writes of the same key wait for the settle
                holdBack(index, previous);
            } else if (previous >= 0 && isDead(previous)) {
                skipOnKey(index, previous);
            } else {
                pending.add(index);
            }
        }
        return pending;
    }

    private boolean anyUnknown(WriteCommand command) {
        for (int position = 0; position < command.size(); position++) {
            if (outcome.get(command.index(position)).status() == WriteStatus.UNKNOWN) {
                return true;
            }
        }
        return false;
    }

    /** The position of the first statement of {@code command} whose key has an earlier UNKNOWN write, or -1. */
    private int firstBehindUnknown(WriteCommand command) {
        for (int position = 0; position < command.size(); position++) {
            int previous = plan.previousOnKey(command.index(position));
            if (previous >= 0 && behindUnknown(previous)) {
                return position;
            }
        }
        return -1;
    }

    /**
     * Sends {@code command} and records its outcome; after a stop, skips its writes instead.
     *
     * @return whether it was sent and the call goes on
     */
    private CompletableFuture<Boolean> sent(Round round, WriteCommand command) {
        if (stopped != null) {
            skipAfterStop(command);
            return STOP;
        }
        Prepared prepared = prepare(sessions, round, command);
        // an UNKNOWN statement hands its session to the settle hold and starts a fresh one
        return send(sessions, prepared, tally, false)
                .thenCompose(sent -> tools.sender()
                        .mayBlockIf(
                                !CopySender.endsHere(sent.result()),
                                () -> Continuations.completed(() -> record(sessions, prepared, command, sent))));
    }

    /**
     * Sends a prepared command as one server copy on {@code on}, counting into {@code into}, waiting on the calling
     * thread (a side-by-side send on a worker thread).
     */
    CopySender.Sent send(Sessions on, Prepared prepared, CopySender.Tally into) {
        return Continuations.now(send(on, prepared, into, true));
    }

    /**
     * Sends a prepared command as one server copy: on the calling thread ({@code onThisThread}), or driven as the
     * transport drives it.
     */
    private CompletableFuture<CopySender.Sent> send(
            Sessions on, Prepared prepared, CopySender.Tally into, boolean onThisThread) {
        return copy(on, prepared.body(), prepared.txnNumber(), prepared, into, onThisThread)
                .thenCompose(sent -> sentOrAgain(on, prepared, into, onThisThread, sent));
    }

    private CompletableFuture<CopySender.Sent> copy(
            Sessions on,
            BsonDocument body,
            @Nullable Long txnNumber,
            Prepared prepared,
            CopySender.Tally into,
            boolean onThisThread) {
        CopySender sender = tools.sender();
        return onThisThread
                ? Continuations.completed(
                        () -> sender.send(on, body, txnNumber, prepared.newCopies(), prepared.copyName(), into))
                : sender.sendAsync(on, body, txnNumber, prepared.newCopies(), prepared.copyName(), into);
    }

    private CompletableFuture<CopySender.Sent> sentOrAgain(
            Sessions on, Prepared prepared, CopySender.Tally into, boolean onThisThread, CopySender.Sent sent) {
        if (prepared.txnNumber() != null
                && call.statementIds() == null
                && sent.result() instanceof SendResult.ServerError refused
                && ClientBinding.isStandaloneRefusal(refused.error())) {
            // A standalone mongod refused the txnNumber before the command ran (the guard's first write raced the
            // driver's discovery of the server): from now on, and for this command, none, as the driver sends none.
            tools.binding().refusedTxnNumber();
            BsonDocument body =
                    prepared.command().toCommand(null, tools.maxTimeMs(), call.writeConcern(), prepared.comment());
            return copy(on, body, null, prepared, into, onThisThread);
        }
        return CompletableFuture.completedFuture(sent);
    }

    /**
     * Records what the sends of {@code command} came to.
     *
     * @return whether the call goes on
     */
    boolean record(Sessions on, Prepared prepared, WriteCommand command, CopySender.Sent sent) {
        String stop = recorder.record(command, sent);
        holdIfUnknown(on, prepared, command, sent);
        if (stop != null) {
            stop(command.index(0), stop);
            return false;
        }
        return true;
    }

    /**
     * Holds a retryable command some statement of which is UNKNOWN for a settle: its session (taken out of
     * {@code on}, so that later commands go on a fresh one and the server keeps this one's statement record), a copy
     * of its bytes and what recording it needs.
     */
    private void holdIfUnknown(Sessions on, Prepared prepared, WriteCommand command, CopySender.Sent sent) {
        // A command a standalone refused for its txnNumber went again without one: no same copy exists to settle.
        if (prepared.txnNumber() == null || !tools.binding().sendsTxnNumber() || !anyUnknown(command)) {
            return;
        }
        boolean own = on.own();
        on.handOver(prepared.session());
        outcome.held(tools.runtime()
                .ledger()
                .settleHold()
                .hold(new Settle.HeldCommand(
                        prepared.session(),
                        own,
                        prepared.body().clone(),
                        prepared.txnNumber(),
                        prepared.copyName(),
                        command,
                        plan,
                        tools.sender(),
                        tools.registry(),
                        sent.result() instanceof SendResult.Reply reply ? reply.reply() : null)));
    }

    /**
     * A command ready to send as one server copy: its body, transaction number, the comment that names it and the
     * session it goes on.
     */
    record Prepared(
            BsonDocument body,
            @Nullable Long txnNumber,
            @Nullable String copyName,
            ClientSession session,
            WriteCommand command,
            @Nullable BsonValue comment,
            boolean newCopies) {}

    /**
     * One command as one server copy on the current session of {@code on}: its transaction number, the server
     * deadline, the comment that names it. On the calling thread, so that numbers and names come out in order.
     */
    Prepared prepare(Sessions on, Round round, WriteCommand command) {
        // Without a retryable-write identity (retryWrites=false, a standalone) no command carries a txnNumber, as the
        // driver sends none: there is then no same-copy resend, and only the caller's opt-in multi-document writes may
        // be retried, as new copies after the overlap gate.
        ClientSession session = on.current();
        StatementIds ids = call.statementIds();
        Long txnNumber;
        BsonArray stmtIds = null;
        if (ids != null) {
            // The caller's identity: its transaction number, each statement's id (the planner refused every write
            // that is not one single-document statement, so every command here is retryable).
            txnNumber = ids.txnNumber();
            stmtIds = new BsonArray(new ArrayList<>(command.size()));
            for (int position = 0; position < command.size(); position++) {
                stmtIds.add(new BsonInt32(ids.stmtId(command.index(position))));
            }
        } else {
            txnNumber = command.retryable() && tools.binding().sendsTxnNumber()
                    ? session.getServerSession().advanceTransactionNumber()
                    : null;
        }
        String guardComment = copyNames.name(round.number(), ++commandNumber);
        BsonValue comment = tools.sender().comment(call.commandOptions().comment(), guardComment);
        BsonDocument body = command.toCommand(txnNumber, stmtIds, tools.maxTimeMs(), call.writeConcern(), comment);
        return new Prepared(
                body,
                txnNumber,
                comment == null ? null : guardComment,
                session,
                command,
                comment,
                call.idempotentMultiRetries() && !command.retryable());
    }

    /** The position of the first statement of {@code command} that did not apply, or -1. */
    private int firstNotApplied(WriteCommand command) {
        for (int position = 0; position < command.size(); position++) {
            if (!applied(outcome.get(command.index(position)))) {
                return position;
            }
        }
        return -1;
    }

    /** Marks a write of an ordered request as not applied for its key (failed, or skipped for its key). */
    private void markDead(int index) {
        if (dead == null) {
            dead = new boolean[plan.size()];
        }
        dead[index] = true;
    }

    private boolean isDead(int index) {
        return dead != null && dead[index];
    }

    /** Applied as far as ORDERED goes: a write-concern error stops no driver bulk, so it stops no key either. */
    private static boolean applied(IndexOutcome result) {
        return result.status() == WriteStatus.APPLIED || result.writeConcernFailed();
    }

    /** Stops the call, keeping the first reason when several commands sent side by side stop it. */
    void stop(int index, String why) {
        if (stopped == null) {
            stopped = why;
            stoppedAt = index;
        }
    }

    boolean isStopped() {
        return stopped != null;
    }

    void skipAfterStop(WriteCommand command) {
        for (int position = 0; position < command.size(); position++) {
            skipAfterStop(command.index(position));
        }
    }

    void skipAfterStop(int index) {
        outcome.set(RecordedIndexOutcome.skipped(index, stoppedAt, "not sent: " + stopped));
    }

    @Override
    public void close() {
        try {
            if (sideBySide != null) {
                sideBySide.close();
            }
        } finally {
            sessions.close();
        }
    }
}
