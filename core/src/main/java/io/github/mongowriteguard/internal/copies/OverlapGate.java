package io.github.mongowriteguard.internal.copies;

import com.mongodb.MongoCommandException;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoDatabase;
import io.github.mongowriteguard.copies.GateVerdict;
import io.github.mongowriteguard.exception.CopyStillRunningException;
import io.github.mongowriteguard.internal.GuardTime;
import io.github.mongowriteguard.internal.server.ErrorCodes;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The overlap gate: before a retry of a write whose last attempt ended without a server answer, wait until that
 * attempt's server deadline has passed (plus a grace), then ask the server ({@code currentOp}) whether the copy still
 * runs; if it does, try {@code killSessions} once and ask again. A copy that still runs refuses the retry: the write
 * then fails with a {@link CopyStillRunningException} naming the copy, instead of starting another copy beside it.
 *
 * <p>How the copy is found, so that it works on mongod and through mongos, for any command size:
 * <ul>
 *   <li>{@code currentOp} is filtered on the operation's top-level {@code lsid.id} only: {@code currentOp} cuts a
 *       {@code command} larger than 1,000 bytes down to {@code {$truncated: <text>, comment: <comment>}}, so a filter
 *       on {@code command.txnNumber} finds nothing for a large write (server {@code src/mongo/db/curop.cpp});</li>
 *   <li>among the session's operations, a write ({@code op} insert, update or remove, or a {@code findAndModify}, whose
 *       {@code op} is {@code "command"}) is the copy unless what
 *       survives of its {@code command} shows it is another one: another of the guard's unique {@code mwg:...}
 *       comments (the comment survives truncation) or, when not truncated, another {@code txnNumber}; when in
 *       doubt it is taken for the copy (a false "still runs" costs a refusal, a false "gone" a second copy);</li>
 *   <li>{@code opid} is read as the server gives it: a number on mongod, {@code "<shard>:<opid>"} through mongos;</li>
 *   <li>without the {@code inprog} privilege, {@code currentOp} is asked again with {@code $ownOps: true}, which a
 *       mongod allows for the user's own operations (a mongos always requires {@code inprog}).</li>
 * </ul>
 *
 * <p>The gate never throws: when it cannot tell whether the copy still runs (its own {@code currentOp} fails, is
 * refused even with {@code $ownOps}, or its connection is closed or times out, or the copy ledger forgot the copy:
 * {@link LiveCopyLedger.Copy#isForgotten()}) it answers {@link GateVerdict#BLIND} and
 * the caller decides what a blind retry may do.
 */
public final class OverlapGate {
    private static final Logger log = LoggerFactory.getLogger(OverlapGate.class);
    private static final List<String> WRITE_OPS = List.of("insert", "update", "remove");
    /**
     * Write commands by name. A running {@code findAndModify} shows {@code op: "command"}: the write commands set their
     * logical op ({@code src/mongo/db/ops/write_ops_exec.cpp}: {@code setLogicalOp} to insert, update, remove), while
     * {@code src/mongo/db/commands/find_and_modify.cpp} keeps the command's, which {@code currentOp} reports as
     * {@code "command"} ({@code src/mongo/db/curop.cpp} {@code reportState}, {@code logicalOpToString} in
     * {@code src/mongo/rpc/message.h}); only its {@code command} names it.
     */
    private static final List<String> WRITE_COMMANDS =
            List.of("insert", "update", "delete", "findAndModify", "findandmodify");

    private static final String GUARD_COMMENT_PREFIX = "mwg:";

    private final Duration grace;
    private final GuardTime time;
    private final AtomicBoolean ownOpsOnly = new AtomicBoolean();
    private final AtomicBoolean warnedBlindUnauthorized = new AtomicBoolean();

    /**
     * A gate that waits for an attempt's server deadline plus {@code grace} before asking {@code currentOp}.
     *
     * @param grace the wait after the deadline ({@link io.github.mongowriteguard.retry.RetryPolicy#getGateGrace()})
     */
    public OverlapGate(Duration grace) {
        this(grace, GuardTime.SYSTEM);
    }

    /**
     * A gate that waits on {@code time}.
     *
     * @param grace the wait after the deadline
     * @param time  the clock the deadline is read on and the sleeper that waits for it
     */
    public OverlapGate(Duration grace, GuardTime time) {
        this.grace = grace;
        this.time = time;
    }

    /**
     * Decides whether the next attempt of {@code copy} may start. Never throws.
     *
     * @param admin           the {@code admin} database of the client
     * @param copy            the copy whose last attempt ended without an answer
     * @param lastSendNanos   {@link System#nanoTime()} when the last attempt was sent
     * @param maxTimeMs       the server deadline that attempt carried
     * @return whether the attempt may start, and why
     */
    public GateVerdict beforeRetry(MongoDatabase admin, LiveCopyLedger.Copy copy, long lastSendNanos, long maxTimeMs) {
        return beforeRetry(
                command -> admin.runCommand(command, ReadPreference.primary(), BsonDocument.class),
                copy,
                lastSendNanos,
                maxTimeMs);
    }

    /**
     * The commands the gate sends to {@code admin} on the primary ({@code currentOp}, {@code killSessions}): the
     * synchronous driver's {@code runCommand}, or another driver's awaited on the guard's thread. Throws what the
     * driver throws.
     */
    @FunctionalInterface
    public interface AdminCommands {
        BsonDocument run(BsonDocument command);
    }

    /**
     * As {@link #beforeRetry(MongoDatabase, LiveCopyLedger.Copy, long, long)}, asking through {@code admin}.
     *
     * @param admin         runs a command on the {@code admin} database of the client's primary
     * @param copy          the copy whose last attempt ended without an answer
     * @param lastSendNanos the runtime's clock when the last attempt was sent
     * @param maxTimeMs     the server deadline that attempt carried
     * @return whether the attempt may start, and why
     */
    public GateVerdict beforeRetry(AdminCommands admin, LiveCopyLedger.Copy copy, long lastSendNanos, long maxTimeMs) {
        if (!copy.isPossiblyRunning()) {
            return GateVerdict.PROCEED;
        }
        if (copy.isForgotten()) {
            // the ledger dropped it while it may still run (past its count or retention): not known to be gone
            return GateVerdict.BLIND;
        }
        if (!time.sleepUntil(lastSendNanos + TimeUnit.MILLISECONDS.toNanos(maxTimeMs) + grace.toNanos())) {
            return GateVerdict.BLIND;
        }
        Sight first = look(admin, copy);
        if (first.blind()) {
            return GateVerdict.BLIND;
        }
        if (first.running == null) {
            copy.markEnded();
            return GateVerdict.PROCEED;
        }
        seen(copy, first.running);
        killSession(admin, copy);
        if (!time.sleepUntil(time.nanoTime() + grace.toNanos())) {
            return GateVerdict.BLIND;
        }
        Sight second = look(admin, copy);
        if (second.blind()) {
            return GateVerdict.BLIND;
        }
        if (second.running == null) {
            copy.markEnded();
            return GateVerdict.KILLED;
        }
        seen(copy, second.running);
        return GateVerdict.REFUSED;
    }

    /** What one look showed: the copy's operation, none, or nothing could be seen. */
    private record Sight(@Nullable BsonDocument running, boolean blind) {
        static final Sight GONE = new Sight(null, false);
        static final Sight BLIND = new Sight(null, true);
    }

    /** Asks {@code currentOp}, with {@code $ownOps: true} when the user lacks {@code inprog}; never throws. */
    private Sight look(AdminCommands admin, LiveCopyLedger.Copy copy) {
        try {
            if (!ownOpsOnly.get()) {
                try {
                    return new Sight(runningOp(admin, copy, false), false);
                } catch (MongoCommandException e) {
                    if (e.getErrorCode() != ErrorCodes.UNAUTHORIZED) {
                        throw e;
                    }
                    ownOpsOnly.set(true);
                }
            }
            return new Sight(runningOp(admin, copy, true), false);
        } catch (MongoCommandException e) {
            if (e.getErrorCode() == ErrorCodes.UNAUTHORIZED && warnedBlindUnauthorized.compareAndSet(false, true)) {
                log.warn("mongo-write-guard: currentOp is refused for this user even with $ownOps (no inprog privilege,"
                        + " or connected through mongos, which requires inprog for currentOp); the overlap gate cannot tell"
                        + " whether an earlier copy of a write still runs and answers 'blind' (grant the inprog action to let"
                        + " it see)");
            } else {
                log.warn(
                        "mongo-write-guard: the overlap gate's currentOp failed ({} {}); it cannot tell whether {} still"
                                + " runs",
                        e.getErrorCode(),
                        e.getErrorCodeName(),
                        copy.snapshot());
            }
            return Sight.BLIND;
        } catch (RuntimeException e) {
            log.warn(
                    "mongo-write-guard: the overlap gate's currentOp failed ({}); it cannot tell whether {} still runs",
                    e.toString(),
                    copy.snapshot());
            return Sight.BLIND;
        }
    }

    /** The {@code currentOp} entry of the copy, or null when the server shows none. */
    private static @Nullable BsonDocument runningOp(AdminCommands admin, LiveCopyLedger.Copy copy, boolean ownOps) {
        BsonDocument command = new BsonDocument("currentOp", new BsonInt32(1));
        if (ownOps) {
            command.append("$ownOps", BsonBoolean.TRUE);
        }
        command.append("lsid.id", uuid(copy.lsid()));
        BsonDocument reply = admin.run(command);
        BsonValue inprog = reply.get("inprog");
        if (inprog == null || !inprog.isArray()) {
            throw new IllegalStateException("currentOp replied without an inprog array");
        }
        BsonValue sessionId = uuid(copy.lsid());
        for (BsonValue value : inprog.asArray()) {
            // only the copy's own session counts, whatever the server's filter let through
            if (value.isDocument()
                    && SessionOfOperation.isOf(value.asDocument(), sessionId)
                    && isTheCopy(value.asDocument(), copy)) {
                return value.asDocument();
            }
        }
        return null;
    }

    /**
     * Whether an operation on the copy's session is the copy: a write whose visible {@code comment} and
     * {@code txnNumber} (where {@code currentOp} did not truncate them away) do not name another copy.
     */
    static boolean isTheCopy(BsonDocument op, LiveCopyLedger.Copy copy) {
        BsonValue commandValue = op.get("command");
        BsonDocument command =
                commandValue != null && commandValue.isDocument() ? commandValue.asDocument() : new BsonDocument();
        boolean truncated = command.containsKey("$truncated");
        String kind = op.get("op") != null && op.get("op").isString()
                ? op.getString("op").getValue()
                : "";
        boolean write = WRITE_OPS.contains(kind) || WRITE_COMMANDS.contains(commandName(command, truncated));
        if (!write) {
            return false;
        }
        // Only the guard's own comments are unique per copy; a caller's comment may be shared by many writes (and
        // the one sent may be the caller's), so only two different mwg: comments tell two copies apart.
        BsonValue comment = command.get("comment");
        if (copy.comment() != null
                && copy.comment().startsWith(GUARD_COMMENT_PREFIX)
                && comment != null
                && comment.isString()
                && comment.asString().getValue().startsWith(GUARD_COMMENT_PREFIX)
                && !comment.asString().getValue().equals(copy.comment())) {
            return false;
        }
        BsonValue txnNumber = command.get("txnNumber");
        return copy.txnNumber() == null
                || txnNumber == null
                || !txnNumber.isNumber()
                || txnNumber.asNumber().longValue() == copy.txnNumber();
    }

    /**
     * The command's name; for a command {@code currentOp} truncated, read from the start of its {@code $truncated} text
     * ({@code curop.cpp}: the command's {@code toString()}, cut to 1,000 bytes: {@code "{ findAndModify: ..."}).
     */
    static String commandName(BsonDocument command, boolean truncated) {
        if (!truncated) {
            return command.isEmpty() ? "" : command.getFirstKey();
        }
        BsonValue text = command.get("$truncated");
        if (text == null || !text.isString()) {
            return "";
        }
        String value = text.asString().getValue().stripLeading();
        if (value.startsWith("{")) {
            value = value.substring(1).stripLeading();
        }
        int end = 0;
        while (end < value.length() && Character.isJavaIdentifierPart(value.charAt(end))) {
            end++;
        }
        return value.substring(0, end);
    }

    private static void seen(LiveCopyLedger.Copy copy, BsonDocument op) {
        copy.seenRunning(opid(op.get("opid")), secsRunning(op.get("secs_running")));
    }

    /** The opid as the server shows it: a number on mongod, {@code "<shard>:<opid>"} through mongos. */
    static String opid(@Nullable BsonValue value) {
        if (value == null) {
            return "?";
        }
        if (value.isNumber()) {
            return Long.toString(value.asNumber().longValue());
        }
        return value.isString() ? value.asString().getValue() : value.toString();
    }

    /** {@code secs_running}, absent before the server started the operation's clock (then -1). */
    private static long secsRunning(@Nullable BsonValue value) {
        return value != null && value.isNumber() ? value.asNumber().longValue() : -1;
    }

    private static void killSession(AdminCommands admin, LiveCopyLedger.Copy copy) {
        try {
            admin.run(new BsonDocument(
                    "killSessions", new BsonArray(List.of(new BsonDocument("id", uuid(copy.lsid()))))));
        } catch (RuntimeException e) {
            log.debug("mongo-write-guard: killSessions for a running copy failed: {}", e.toString());
        }
    }

    private static BsonValue uuid(String lsid) {
        try {
            return new BsonBinary(UUID.fromString(lsid));
        } catch (IllegalArgumentException e) {
            return new BsonString(lsid);
        }
    }
}
