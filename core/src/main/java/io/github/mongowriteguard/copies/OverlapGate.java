package io.github.mongowriteguard.copies;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoDatabase;

/**
 * The overlap gate: before a retry of a write whose last attempt ended without a server answer, wait until that
 * attempt's server deadline has passed (plus a grace), then ask the server ({@code currentOp}, filtered to the copy's
 * session and transaction number) whether the copy still runs; if it does, try {@code killSessions} once and ask
 * again. A copy that still runs refuses the retry: the write then fails with a
 * {@link CopyStillRunningException} naming the copy, instead of starting another copy beside it.
 *
 * <p>Where the user may not run {@code currentOp} (error 13, Unauthorized), the gate relies on the deadline alone and
 * says so once in the log.
 */
public final class OverlapGate {
    private static final Logger log = LoggerFactory.getLogger(OverlapGate.class);
    private static final int UNAUTHORIZED = 13;

    private final Duration grace;
    private final AtomicBoolean warnedNoCurrentOp = new AtomicBoolean();

    /**
     * A gate that waits for an attempt's server deadline plus {@code grace} before asking {@code currentOp}.
     *
     * @param grace the wait after the deadline ({@link io.github.mongowriteguard.retry.RetryPolicy#gateGrace()})
     */
    public OverlapGate(Duration grace) {
        this.grace = grace;
    }

    /** What the gate decided. */
    public enum Verdict {
        /** No copy runs (or none was left running): go on. */
        PROCEED,
        /** A running copy was killed and is gone: go on. */
        KILLED,
        /** {@code currentOp} is not permitted: the deadline passed, go on. */
        DEADLINE_ONLY,
        /** A copy still runs: do not start another attempt. */
        REFUSED
    }

    /**
     * Decides whether the next attempt of {@code copy} may start.
     *
     * @param admin           the {@code admin} database of the client
     * @param copy            the copy whose last attempt ended without an answer
     * @param lastSendNanos   {@link System#nanoTime()} when the last attempt was sent
     * @param maxTimeMs       the server deadline that attempt carried
     * @return whether the attempt may start, and why
     */
    public Verdict beforeRetry(MongoDatabase admin, CopyLedger.Copy copy, long lastSendNanos, long maxTimeMs) {
        if (!copy.isPossiblyRunning()) {
            return Verdict.PROCEED;
        }
        sleepUntil(lastSendNanos + TimeUnit.MILLISECONDS.toNanos(maxTimeMs) + grace.toNanos());
        try {
            BsonDocument running = runningOp(admin, copy);
            if (running == null) {
                copy.markEnded();
                return Verdict.PROCEED;
            }
            copy.seenRunning(running.get("opid", new BsonInt64(-1)).asNumber().longValue(),
                running.get("secs_running", new BsonInt64(-1)).asNumber().longValue());
            killSession(admin, copy);
            sleepUntil(System.nanoTime() + grace.toNanos());
            running = runningOp(admin, copy);
            if (running == null) {
                copy.markEnded();
                return Verdict.KILLED;
            }
            copy.seenRunning(running.get("opid", new BsonInt64(-1)).asNumber().longValue(),
                running.get("secs_running", new BsonInt64(-1)).asNumber().longValue());
            return Verdict.REFUSED;
        } catch (MongoCommandException e) {
            if (e.getErrorCode() != UNAUTHORIZED) {
                throw e;
            }
            if (warnedNoCurrentOp.compareAndSet(false, true)) {
                log.warn("mongo-write-guard: currentOp is not permitted for this user; the overlap gate relies on the"
                    + " server deadline alone (grant the inprog and killAnySession actions to let it confirm that no copy"
                    + " of a write is still running before a retry)");
            }
            return Verdict.DEADLINE_ONLY;
        }
    }

    /** The {@code currentOp} entry of the copy, or null when the server shows none. */
    private static @Nullable BsonDocument runningOp(MongoDatabase admin, CopyLedger.Copy copy) {
        BsonDocument command = new BsonDocument("currentOp", new BsonInt32(1))
            .append("lsid.id", uuid(copy.lsid()));
        if (copy.txnNumber() != null) {
            command.append("command.txnNumber", new BsonInt64(copy.txnNumber()));
        }
        BsonDocument reply = admin.runCommand(command, ReadPreference.primary(), BsonDocument.class);
        List<BsonValue> ops = reply.getArray("inprog", new BsonArray()).getValues();
        for (BsonValue op : ops) {
            BsonDocument document = op.asDocument();
            // A command on the session that is not a write of this copy (e.g. currentOp itself) does not count.
            String name = document.getDocument("command", new BsonDocument()).isEmpty() ? ""
                : document.getDocument("command").getFirstKey();
            if (List.of("insert", "update", "delete").contains(name)) {
                return document;
            }
        }
        return null;
    }

    private static void killSession(MongoDatabase admin, CopyLedger.Copy copy) {
        try {
            admin.runCommand(new BsonDocument("killSessions",
                new BsonArray(List.of(new BsonDocument("id", uuid(copy.lsid()))))), ReadPreference.primary(), BsonDocument.class);
        } catch (MongoException e) {
            log.debug("mongo-write-guard: killSessions for a running copy failed: {}", e.getCode());
        }
    }

    private static BsonValue uuid(String lsid) {
        try {
            return new BsonBinary(UUID.fromString(lsid));
        } catch (IllegalArgumentException e) {
            return new BsonString(lsid);
        }
    }

    private static void sleepUntil(long nanos) {
        long left;
        while ((left = nanos - System.nanoTime()) > 0) {
            try {
                TimeUnit.NANOSECONDS.sleep(left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new MongoException("interrupted while waiting for the server deadline of an earlier attempt", e);
            }
        }
    }
}
