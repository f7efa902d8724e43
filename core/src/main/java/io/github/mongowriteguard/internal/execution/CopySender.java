package io.github.mongowriteguard.internal.execution;

import com.mongodb.MongoException;
import com.mongodb.MongoExecutionTimeoutException;
import com.mongodb.MongoServerException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.ServerAddress;
import com.mongodb.client.MongoDatabase;
import com.mongodb.session.ClientSession;
import io.github.mongowriteguard.copies.CopyRecord;
import io.github.mongowriteguard.copies.GateVerdict;
import io.github.mongowriteguard.internal.ClientBinding;
import io.github.mongowriteguard.internal.GuardTime;
import io.github.mongowriteguard.internal.copies.LiveCopyLedger;
import io.github.mongowriteguard.internal.outcome.RecordedWriteOutcome;
import io.github.mongowriteguard.metrics.GuardEventListener;
import io.github.resilience4j.retry.Retry;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;

/**
 * Sends one command as one server copy, with up to the policy's attempts. A retryable command (one with a
 * {@code txnNumber}: single-document statements on the guard's session) resends the same copy right after the backoff,
 * without the overlap gate, because the server itself keeps two sends of one copy from overlapping and from applying a
 * statement twice (mongodb/mongo):
 * <ul>
 *   <li>{@code src/mongo/db/session/session_catalog.cpp}: a command checks its session out for its whole run
 *       ({@code SessionCatalog::checkOutSession}); a second command on the same session waits in
 *       {@code _checkOutSessionInner} until the first checks it back in, or until its own {@code maxTimeMS} ends, which
 *       answers the resend with {@code MaxTimeMSExpired} and proves nothing about the first send (the send loop then
 *       says UNKNOWN unless a later resend gets an answer);</li>
 *   <li>{@code src/mongo/db/transaction/transaction_participant.cpp}: {@code checkStatementExecuted} finds a statement
 *       of the session's current {@code txnNumber} in the session's record; {@code src/mongo/db/ops/write_ops_exec.cpp}
 *       answers such a statement from that record instead of running it again ({@code performInserts},
 *       {@code performUpdates}, {@code performDeletes}: the executed statement's result is rebuilt from its oplog
 *       entry, e.g. {@code parseOplogEntryForUpdate}), and runs a statement not in the record;</li>
 *   <li>through mongos nothing changes: {@code src/mongo/s/commands/strategy.cpp} checks the router's session out
 *       ({@code RouterOperationContextSession}, {@code src/mongo/s/session_catalog_router.cpp}) only for a transaction
 *       ({@code autocommit}), so a retryable write passes mongos unserialised, and each shard's session catalog and
 *       statement record above serialise and replay its child batches.</li>
 * </ul>
 * So a lost reply costs one round trip: the resend waits behind a copy still running and is then answered from the
 * record. Any other command is sent once, unless the caller allowed a retry (the idempotent multi-document opt-in),
 * each retry then a new copy started only after the overlap gate saw the previous one gone. Records every copy in the
 * ledger and tallies sends, copies and servers in a {@link Tally}: the outcome's builder itself on the calling thread,
 * or, for a command sent on a worker thread beside others ({@link SideBySideSends}), a {@link DeferredTally} that the
 * calling thread replays into the builder in a fixed order. Everything else it touches (the ledger, the overlap gate,
 * the retry policy, the event listeners, the command listener's per-thread server) is shared by every thread of the
 * application already and thread-safe.
 */
final class CopySender {
    private final GuardRuntime runtime;
    private final CommandChannel channel;
    private final Gate gate;
    private final String namespace;
    private final long maxTimeMs;
    /** Whether mongos may answer: its {@code MaxTimeMSExpired} leaves the shard's copy possibly running. */
    private final ClientBinding binding;
    /** How {@link #sendAsync} waits: in completions over a reactive transport, else on the calling thread. */
    private final Driving driving;
    /** The last session identifier this sender saw, with its text ({@link #lsid}); null before the first send. */
    private volatile @Nullable LsidText lastLsid;

    /**
     * What the sends of one copy came to.
     *
     * @param result        the last send's result (or the gate's refusal)
     * @param resent        whether the copy was sent more than once
     * @param reachedServer whether any send reached a server
     * @param unanswered    whether a send got no answer and no later answer proved what the copy did
     * @param earlier       the answers of earlier sends that no later answer proved (a resend's refusal proves nothing
     *                      about what an earlier send did)
     */
    record Sent(
            SendResult result,
            boolean resent,
            boolean reachedServer,
            boolean unanswered,
            java.util.List<SendResult> earlier) {}

    /** Where the sends of a copy are counted: the outcome's commands, sends, servers and copies. */
    interface Tally {
        void command();

        void send();

        void server(@Nullable ServerAddress address);

        void copy(CopyRecord copy);

        void stillRunning(CopyRecord copy);

        /** Counts straight into {@code outcome}: for the thread that builds it. */
        static Tally of(RecordedWriteOutcome.Builder<?> outcome) {
            return of(outcome, false);
        }

        /**
         * Counts into {@code outcome}; for a settle, no command (a settle starts no copy) and the copy's record
         * replaces the one the call recorded.
         */
        static Tally of(RecordedWriteOutcome.Builder<?> outcome, boolean settle) {
            return new Tally() {
                @Override
                public void command() {
                    if (!settle) {
                        outcome.command();
                    }
                }

                @Override
                public void send() {
                    outcome.send();
                }

                @Override
                public void server(@Nullable ServerAddress address) {
                    outcome.server(address);
                }

                @Override
                public void copy(CopyRecord copy) {
                    if (settle) {
                        outcome.replaceCopy(copy);
                    } else {
                        outcome.copy(copy);
                    }
                }

                @Override
                public void stillRunning(CopyRecord copy) {
                    outcome.stillRunning(copy);
                }
            };
        }
    }

    /**
     * Whether the next copy of a command may start (the overlap gate, {@link
     * io.github.mongowriteguard.internal.copies.OverlapGate#beforeRetry}).
     */
    @FunctionalInterface
    interface Gate {
        GateVerdict beforeRetry(LiveCopyLedger.Copy copy, long lastSendNanos, long maxTimeMs);
    }

    /** A sender over the synchronous driver: commands through {@code database}, the gate's reads on {@code admin}. */
    CopySender(
            GuardRuntime runtime,
            MongoDatabase database,
            MongoDatabase admin,
            String namespace,
            long maxTimeMs,
            ClientBinding binding) {
        this(
                runtime,
                CommandChannel.of(database, runtime.servers()),
                (copy, lastSendNanos, deadlineMs) -> runtime.gate().beforeRetry(admin, copy, lastSendNanos, deadlineMs),
                namespace,
                maxTimeMs,
                binding,
                null);
    }

    /**
     * A sender over any transport.
     *
     * @param channel the wire: one command, one answer
     * @param gate    the overlap gate of the transport
     * @param resume  where {@link #sendAsync} continues after an answer or a backoff that held no thread, or null for
     *                a transport whose answers come on the calling thread (then every send is driven there)
     */
    CopySender(
            GuardRuntime runtime,
            CommandChannel channel,
            Gate gate,
            String namespace,
            long maxTimeMs,
            ClientBinding binding,
            @Nullable Resume resume) {
        this.driving = resume == null ? Driving.BLOCKING : Driving.async(resume);
        this.runtime = runtime;
        this.channel = channel;
        this.gate = gate;
        this.namespace = namespace;
        this.maxTimeMs = maxTimeMs;
        this.binding = binding;
    }

    /**
     * This sender over another transport's channel, gate and resume (the reactive guard's, with another call's
     * subscriber context): the same collection, deadline and binding.
     */
    CopySender over(Transport transport) {
        return new CopySender(
                runtime, transport.channel(), transport.gate(), namespace, maxTimeMs, binding, transport.resume());
    }

    /** The wire this sender sends on. */
    CommandChannel channel() {
        return channel;
    }

    /**
     * The comment a command carries: the caller's as given; without one, the guard's, which names the copy (servers
     * 4.4+ take a comment on write commands), or none.
     */
    @Nullable
    BsonValue comment(@Nullable BsonValue callers, String guards) {
        if (callers != null) {
            return callers;
        }
        return runtime.servers().maxWireVersion() >= 9 ? new BsonString(guards) : null;
    }

    /**
     * Sends {@code body} on the current session of {@code sessions}; a copy left possibly running moves later commands
     * to a fresh session, so that they do not queue behind it on the server's session check-out.
     *
     * @param txnNumber    the body's transaction number, or null for a command without one (a new copy per attempt)
     * @param retryAllowed whether a command without {@code txnNumber} may be retried (the caller's explicit opt-in)
     * @param copyName     the guard's comment naming the copy, or null
     * @return what the sends came to, every wait made on the calling thread
     */
    Sent send(
            Sessions sessions,
            BsonDocument body,
            @Nullable Long txnNumber,
            boolean retryAllowed,
            @Nullable String copyName,
            Tally tally) {
        return Continuations.now(
                new CopyLoop(sessions, body, txnNumber, retryAllowed, copyName, tally, false, Driving.BLOCKING).run());
    }

    /**
     * Sends a held copy again, for a settle: the same body on the same session, with the policy's attempts; never a
     * new copy (the tally counts sends, no command). The earlier sends of the copy count as unanswered, so that only an
     * answer that proves what the copy did settles a statement.
     */
    Sent resend(Sessions sessions, BsonDocument body, long txnNumber, @Nullable String copyName, Tally tally) {
        return Continuations.now(
                new CopyLoop(sessions, body, txnNumber, false, copyName, tally, true, Driving.BLOCKING).run());
    }

    /**
     * As {@link #send(Sessions, BsonDocument, Long, boolean, String, Tally)}, driven by completions when the transport
     * has them: no thread is held while the driver's reply or a backoff is pending, and the loop continues on the
     * transport's executor. Over the synchronous driver the same loop runs on the calling thread, complete on return.
     */
    CompletableFuture<Sent> sendAsync(
            Sessions sessions,
            BsonDocument body,
            @Nullable Long txnNumber,
            boolean retryAllowed,
            @Nullable String copyName,
            Tally tally) {
        return new CopyLoop(sessions, body, txnNumber, retryAllowed, copyName, tally, false, driving).run();
    }

    /**
     * How the loop's waits are driven: the driver's answer, the backoff, the overlap gate, and the steps that may block.
     * {@link #BLOCKING} waits on the calling thread and gives completed futures (the synchronous driver; settle and
     * side-by-side sends of the reactive one); {@link #async} holds no thread for an answer or a backoff. There the
     * loop goes on in the answer's completion, on the driver's thread, only while it cannot block: a reply that proves
     * what the copy did and ends the loop (as the driver's own completion goes on there). Any other answer, a backoff's
     * end and the overlap gate continue on the transport's executor (the guard's threads), where a step may wait.
     */
    interface Driving {
        CompletableFuture<CommandChannel.Answer> send(CommandChannel channel, ClientSession session, BsonDocument body);

        CompletableFuture<Boolean> pause(GuardTime time, long nanos);

        CompletableFuture<GateVerdict> gate(Gate gate, LiveCopyLedger.Copy copy, long sentAt, long maxTimeMs);

        /** Runs {@code step}, which may block, where blocking is allowed: here when driven on the calling thread. */
        <R> CompletableFuture<R> mayBlock(Supplier<CompletableFuture<R>> step);

        /** Runs {@code step} here when it cannot block, else as {@link #mayBlock}. */
        default <R> CompletableFuture<R> mayBlockIf(boolean blocks, Supplier<CompletableFuture<R>> step) {
            return blocks ? mayBlock(step) : step.get();
        }

        Driving BLOCKING = new Driving() {
            @Override
            public CompletableFuture<CommandChannel.Answer> send(
                    CommandChannel channel, ClientSession session, BsonDocument body) {
                return CompletableFuture.completedFuture(channel.send(session, body));
            }

            @Override
            public CompletableFuture<Boolean> pause(GuardTime time, long nanos) {
                return CompletableFuture.completedFuture(time.sleepNanos(nanos));
            }

            @Override
            public CompletableFuture<GateVerdict> gate(
                    Gate gate, LiveCopyLedger.Copy copy, long sentAt, long maxTimeMs) {
                return CompletableFuture.completedFuture(gate.beforeRetry(copy, sentAt, maxTimeMs));
            }

            @Override
            public <R> CompletableFuture<R> mayBlock(Supplier<CompletableFuture<R>> step) {
                return step.get();
            }
        };

        /** Driven by completions: what may block runs on {@code then}'s threads. */
        static Driving async(Resume then) {
            return new Driving() {
                @Override
                public CompletableFuture<CommandChannel.Answer> send(
                        CommandChannel channel, ClientSession session, BsonDocument body) {
                    return channel.sendAsync(session, body);
                }

                @Override
                public CompletableFuture<Boolean> pause(GuardTime time, long nanos) {
                    return time.delayNanos(nanos, then);
                }

                @Override
                public CompletableFuture<GateVerdict> gate(
                        Gate gate, LiveCopyLedger.Copy copy, long sentAt, long maxTimeMs) {
                    return mayBlock(() -> Continuations.completed(() -> gate.beforeRetry(copy, sentAt, maxTimeMs)));
                }

                @Override
                public <R> CompletableFuture<R> mayBlock(Supplier<CompletableFuture<R>> step) {
                    if (then.isCurrentThread()) {
                        return step.get();
                    }
                    return CompletableFuture.supplyAsync(step, then).thenCompose(Function.identity());
                }
            };
        }
    }

    /**
     * Runs {@code step}, which may block (a session started, commands sent side by side and waited for), where this
     * sender's transport allows it: on the calling thread for the synchronous driver, on the guard's threads for the
     * reactive one (never on the driver's thread an answer completed on).
     */
    <R> CompletableFuture<R> mayBlock(Supplier<CompletableFuture<R>> step) {
        return driving.mayBlock(step);
    }

    /** Runs {@code step} on the calling thread when it cannot block ({@code blocks} false), else as {@link #mayBlock}. */
    <R> CompletableFuture<R> mayBlockIf(boolean blocks, Supplier<CompletableFuture<R>> step) {
        return driving.mayBlockIf(blocks, step);
    }

    /**
     * The send loop of one copy, as a state machine: each turn sends once, then decides from the answer whether to
     * stop, back off, pass the overlap gate and send again. Its waits are the {@link Driving}'s, so the same turns run
     * on the calling thread (every wait complete at once) or in completions.
     */
    private final class CopyLoop {
        private final Sessions sessions;
        private final BsonDocument body;
        private final boolean retryAllowed;
        private final @Nullable String copyName;
        private final Tally tally;
        private final Driving driving;
        private final ClientSession session;
        private final boolean retryable;
        private final LiveCopyLedger ledger = runtime.ledger();
        private final GuardEventListener events = runtime.events();
        private final GuardTime time = runtime.time();
        private LiveCopyLedger.Copy copy;
        // made when a result is first worth retrying: most copies get their answer at the first send
        private Retry.AsyncContext<SendResult> retryContext;
        private SendResult result;
        private int attempt;
        private boolean reachedServer;
        private boolean unanswered;
        private long sentAt;
        // the answers no later answer proved; made at the first resend (most copies are sent once)
        private java.util.List<SendResult> earlier;

        CopyLoop(
                Sessions sessions,
                BsonDocument body,
                @Nullable Long txnNumber,
                boolean retryAllowed,
                @Nullable String copyName,
                Tally tally,
                boolean settle,
                Driving driving) {
            this.sessions = sessions;
            this.body = body;
            this.retryAllowed = retryAllowed;
            this.copyName = copyName;
            this.tally = tally;
            this.driving = driving;
            this.session = sessions.current();
            this.retryable = txnNumber != null;
            this.unanswered = settle;
            if (settle && txnNumber != null) {
                copy = ledger.resume(namespace, lsid(session), txnNumber, copyName);
            } else {
                copy = ledger.start(namespace, lsid(session), txnNumber, copyName);
                tally.command();
            }
        }

        CompletableFuture<Sent> run() {
            // a copy left running gets the next command a fresh session (finish): the driver may select a server
            return Continuations.repeat(this::turn)
                    .thenCompose(done ->
                            driving.mayBlockIf(copy.isPossiblyRunning(), () -> Continuations.completed(this::finish)));
        }

        /** One send and what follows it; completes with whether to send again. */
        private CompletableFuture<Boolean> turn() {
            if (attempt > 0) {
                if (earlier == null) {
                    earlier = new java.util.ArrayList<>();
                }
                earlier.add(result);
            }
            attempt++;
            copy.attempt();
            if (runtime.listening()) {
                events.attemptStarted(
                        new GuardEventListener.AttemptStarted(namespace, attempt, attempt > 1 && retryable));
            }
            sentAt = time.nanoTime();
            copy.sent();
            tally.send();
            return driving.send(channel, session, body).thenCompose(this::answered);
        }

        private CompletableFuture<Boolean> answered(CommandChannel.Answer answer) {
            result = classify(answer, copy, tally);
            // Driven in completions, the loop goes on here (the driver's thread) only for a reply that proves what
            // the copy did and ends the loop: nothing after it blocks (no backoff, gate or fresh session).
            return driving.mayBlockIf(!endsHere(result), this::afterAnswer);
        }

        private CompletableFuture<Boolean> afterAnswer() {
            reachedServer |= !(result instanceof SendResult.NoServer);
            if (result instanceof SendResult.GaveUp) {
                unanswered = true;
            } else if (result.lostAnswer()) {
                // mongos lost a shard's answer: as after a socket timeout, the shard may still be applying the copy.
                unanswered = true;
                copy.clientGaveUp();
            } else if (result.provesOutcome()) {
                unanswered = false;
                if (earlier != null) {
                    earlier.clear();
                }
                copy.markEnded();
            }
            if (result.hitDeadline() && (binding.mayBeMongos() || !copy.isPossiblyRunning())) {
                events.deadlineHit(new GuardEventListener.DeadlineHit(namespace, maxTimeMs));
            }
            if (result.hitDeadline() && binding.mayBeMongos()) {
                // mongos stopped waiting for the shard at its deadline (async_requests_sender.cpp): as after a socket
                // timeout, the shard may still be applying the copy.
                copy.clientGaveUp();
            }
            if (!(retryable || retryAllowed) || !result.worthRetrying()) {
                return STOP;
            }
            if (retryContext == null) {
                retryContext = runtime.retry().asyncContext();
            }
            // the policy's backoff, waited by the driving (resilience4j only tells it): a sleep, or a timer
            long backoffMs = retryContext.onResult(result);
            if (backoffMs < 0) {
                return STOP;
            }
            if (backoffMs == 0) {
                return afterBackoff(true);
            }
            return driving.pause(time, java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(backoffMs))
                    .thenCompose(this::afterBackoff);
        }

        private CompletableFuture<Boolean> afterBackoff(boolean waited) {
            if (!waited) {
                // interrupted during the backoff: no further send (the interrupt flag is kept)
                return STOP;
            }
            if (retryable) {
                // The same copy again, at once: the server runs it at most once and tells what it did (see the class
                // comment), so no wait for the first send's deadline and no currentOp.
                return AGAIN;
            }
            long gateStart = time.nanoTime();
            return driving.gate(gate, copy, sentAt, maxTimeMs).thenApply(verdict -> {
                events.gateDecided(new GuardEventListener.GateDecided(
                        namespace, verdict, Duration.ofNanos(time.nanoTime() - gateStart)));
                if (verdict == GateVerdict.REFUSED) {
                    result = result.refused(copy.snapshot());
                    return false;
                }
                if (verdict == GateVerdict.BLIND && unanswered) {
                    // A new copy of a multi-document write may only start once the old one is shown gone.
                    result = result.blind();
                    return false;
                }
                // A command without a retryable-write identity: the next attempt is a new copy.
                tally.copy(copy.snapshot());
                copy.close();
                copy = ledger.start(namespace, lsid(session), null, copyName);
                tally.command();
                return true;
            });
        }

        private Sent finish() {
            if (retryContext != null) {
                retryContext.onComplete();
            }
            tally.copy(copy.snapshot());
            if (result instanceof SendResult.Refused refused) {
                tally.stillRunning(refused.runningCopy());
            }
            if (copy.isPossiblyRunning()) {
                sessions.replace();
            }
            copy.close();
            return new Sent(
                    result,
                    attempt > 1,
                    reachedServer,
                    unanswered,
                    earlier == null ? java.util.List.of() : java.util.List.copyOf(earlier));
        }
    }

    /**
     * Whether {@code result} ends the send loop with a proven outcome and leaves nothing that may block: a reply whose
     * statements all succeeded or failed for reasons of their own, no lost answer, no deadline, no write-concern error.
     */
    static boolean endsHere(SendResult result) {
        return result instanceof SendResult.Reply reply
                && reply.provesOutcome()
                && !reply.lostAnswer()
                && !reply.hitDeadline()
                && !reply.worthRetrying()
                && reply.reply().writeConcernError() == null;
    }

    private static final CompletableFuture<Boolean> STOP = CompletableFuture.completedFuture(false);
    private static final CompletableFuture<Boolean> AGAIN = CompletableFuture.completedFuture(true);

    /** What one send's answer is (the driver's exception classified here, once). */
    private static SendResult classify(CommandChannel.Answer answer, LiveCopyLedger.Copy copy, Tally tally) {
        MongoException e = answer.error();
        if (e == null) {
            tally.server(answer.server());
            return SendResult.reply(java.util.Objects.requireNonNull(answer.reply()));
        }
        if (e instanceof MongoSocketException) {
            // A socket timeout is not a cancellation: the server may still be applying this copy.
            copy.clientGaveUp();
            return SendResult.gaveUp(e);
        }
        if (e instanceof MongoTimeoutException) {
            return SendResult.noServer(e);
        }
        if (e instanceof MongoServerException || e instanceof MongoExecutionTimeoutException) {
            // ok: 0. The driver raises MaxTimeMSExpired as MongoExecutionTimeoutException, not a server exception.
            tally.server(answer.server());
            return SendResult.serverError(e);
        }
        // Anything else the driver raises after sending (an interrupted thread, a client-side failure): the server
        // may have received the command, so its outcome is not known.
        copy.clientGaveUp();
        return SendResult.gaveUp(e);
    }

    /**
     * The session id as text, for the ledger. The driver's pool hands the same server sessions out again and again
     * (most recently released first), so the text of the last identifier seen is kept and reused while the identifier
     * is the same object; threads that race on it only compute it again.
     */
    private String lsid(ClientSession session) {
        BsonDocument identifier = session.getServerSession().getIdentifier();
        LsidText last = lastLsid;
        if (last != null && last.identifier() == identifier) {
            return last.text();
        }
        String text = identifier.getBinary("id").asUuid().toString();
        lastLsid = new LsidText(identifier, text);
        return text;
    }

    /** A session identifier and its text. */
    private record LsidText(BsonDocument identifier, String text) {}
}
