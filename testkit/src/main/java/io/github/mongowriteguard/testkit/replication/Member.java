package io.github.mongowriteguard.testkit.replication;

import io.github.mongowriteguard.testkit.engine.StorageEngine;
import io.github.mongowriteguard.testkit.node.CommandExecutor;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.node.Membership;
import io.github.mongowriteguard.testkit.node.OperationContext;
import io.github.mongowriteguard.testkit.node.OperationInterruptedException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.types.ObjectId;

/**
 * One member of a replicating set: its oplog, its state and the node's hooks into it. On the primary, writes run under
 * the replication state transition lock (shared; a stepdown takes it exclusively, after killing them) and under the
 * member's apply lock (one write changes the engine and appends its oplog entry at a time, so the oplog's order is the
 * engine's); on a secondary, the applier thread copies the primary's oplog and applies it.
 */
final class Member implements Membership, CommandExecutor {
    private final ReplicaSetCoordinator set;
    final int id;
    EmulatedNode node;

    /** The oplog; guarded by the set's lock. Entries are shared (by reference) between members' oplogs. */
    final List<OplogEntry> log = new ArrayList<>();
    /** Guarded by the set's lock for changes; read freely. */
    volatile MemberState state = MemberState.SECONDARY;
    /** The term in which this member is primary; guarded by the set's lock. */
    long primaryTerm = -1;

    volatile long incarnation = 1;
    volatile PartitionMode partition;
    volatile boolean paused;
    volatile boolean stopReplProducer;
    volatile boolean steppingDown;
    /** Not electable before this ({@code replSetStepDown}'s period); guarded by the set's lock. */
    long unelectableUntilNanos = System.nanoTime();
    /** Since when this primary cannot see a majority (-1: it can); guarded by the set's lock. */
    long cannotSeeMajoritySinceNanos = -1;

    /** mongod's replication state transition lock (RSTL): writes hold it shared, a stepdown exclusively. */
    final ReentrantReadWriteLock rstl = new ReentrantReadWriteLock(true);
    /** Held while the engine changes and the oplog grows together (a write's statements, an applier batch, a rebuild). */
    final ReentrantLock applyLock = new ReentrantLock();

    Member(ReplicaSetCoordinator set, int id) {
        this.set = set;
        this.id = id;
    }

    /** What one write on this primary has done so far: its term, and the oplog operations not committed yet. */
    static final class WriteState {
        long term = -1;
        long incarnation;
        long lastIndex;
        boolean holdsRstl;
        boolean holdsApplyLock;
        final List<OplogEntry.Op> ops = new ArrayList<>();
        final List<OplogEntry.RetryRecord> records = new ArrayList<>();
    }

    private static WriteState writeState(OperationContext operation) {
        return operation.replicationState() instanceof WriteState state ? state : null;
    }

    String address() {
        return node.address();
    }

    /** The optime of the last entry, null for an empty oplog; call with the set's lock held. */
    OplogEntry last() {
        return log.isEmpty() ? null : log.get(log.size() - 1);
    }

    boolean up() {
        return state != MemberState.DOWN;
    }

    boolean reachable() {
        return up() && partition == null;
    }

    // ---- Membership ------------------------------------------------------------------------------------

    @Override
    public Reach reach() {
        if (state == MemberState.DOWN) {
            return Reach.CLOSED;
        }
        PartitionMode mode = partition;
        if (mode == null) {
            return Reach.SERVING;
        }
        return mode == PartitionMode.BLACK_HOLE ? Reach.BLACKHOLED : Reach.CLOSED;
    }

    @Override
    public long incarnation() {
        return incarnation;
    }

    @Override
    public boolean isWritablePrimary() {
        return state == MemberState.PRIMARY;
    }

    @Override
    public boolean isSecondary() {
        return state == MemberState.SECONDARY;
    }

    @Override
    public List<String> hosts() {
        return set.hosts();
    }

    @Override
    public String primaryAddress() {
        return state == MemberState.PRIMARY ? address() : set.topology.primaryKnownTo(this);
    }

    @Override
    public ObjectId electionId() {
        long term = set.topology.termOf(this);
        return term < 0 ? null : fromTerm(term);
    }

    /** mongod's {@code OID::fromTerm}: {@code 7fffffff} then the term, big-endian, so it grows with the term. */
    static ObjectId fromTerm(long term) {
        return new ObjectId(String.format("7fffffff%016x", term));
    }

    @Override
    public BsonDocument beginWrite(OperationContext operation) {
        WriteState write = new WriteState();
        operation.replicationState(write);
        try {
            long wait = operation.remainingNanos();
            if (!rstl.readLock().tryLock(wait, TimeUnit.NANOSECONDS)) {
                return error(50, "MaxTimeMSExpired", "operation exceeded time limit");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return error(11600, "InterruptedAtShutdown", "interrupted at shutdown");
        }
        write.holdsRstl = true;
        if (!set.primaryInTerm(this, write)) {
            return error(10107, "NotWritablePrimary", "Not primary while writing to " + operation.database());
        }
        return null;
    }

    @Override
    public void flush(OperationContext operation) {
        WriteState write = writeState(operation);
        if (write == null) {
            return;
        }
        if (!write.ops.isEmpty() || !write.records.isEmpty()) {
            set.append(this, write);
            write.ops.clear();
            write.records.clear();
        }
        if (write.holdsApplyLock) {
            write.holdsApplyLock = false;
            applyLock.unlock();
        }
    }

    @Override
    public void endWrite(OperationContext operation) {
        WriteState write = writeState(operation);
        if (write == null) {
            return;
        }
        flush(operation);
        if (write.holdsRstl) {
            write.holdsRstl = false;
            rstl.readLock().unlock();
        }
    }

    @Override
    public void statementRecorded(
            OperationContext operation,
            String sessionId,
            BsonDocument lsid,
            long txnNumber,
            int stmtId,
            BsonDocument outcome) {
        WriteState write = writeState(operation);
        if (write != null) {
            write.records.add(new OplogEntry.RetryRecord(sessionId, lsid, txnNumber, stmtId, outcome.clone()));
        }
    }

    @Override
    public BsonDocument awaitWriteConcern(OperationContext operation) {
        BsonValue given = operation.command().get("writeConcern");
        BsonDocument writeConcern =
                given != null && given.isDocument() ? given.asDocument() : set.defaultWriteConcern();
        BsonValue w = writeConcern.get("w", set.defaultWriteConcern().get("w"));
        int required;
        if (w.isNumber()) {
            required = w.asNumber().intValue();
        } else if (w.isString() && w.asString().getValue().equals("majority")) {
            required = set.majority();
        } else {
            return wce(79, "UnknownReplWriteConcern", "unrecognized write concern mode: " + w);
        }
        if (required <= 1) {
            return null;
        }
        long wtimeoutMs = writeConcern.containsKey("wtimeout")
                        && writeConcern.get("wtimeout").isNumber()
                ? writeConcern.get("wtimeout").asNumber().longValue()
                : 0;
        return set.waiter.awaitReplication(
                this, writeState(operation), Math.min(required, set.size()), wtimeoutMs, operation);
    }

    @Override
    public BsonDocument command(OperationContext operation) {
        BsonDocument command = operation.command();
        switch (command.getFirstKey()) {
            case "replSetStepDown": {
                BsonValue secs = command.get("replSetStepDown");
                long stepDownSecs =
                        secs != null && secs.isNumber() ? secs.asNumber().longValue() : 60;
                BsonValue catchUp = command.get("secondaryCatchUpPeriodSecs");
                long catchUpSecs = catchUp != null && catchUp.isNumber()
                        ? catchUp.asNumber().longValue()
                        : 10;
                boolean force = command.getBoolean("force", BsonBoolean.FALSE).getValue();
                return set.stepDown.stepDown(
                        this,
                        operation.opid(),
                        TimeUnit.SECONDS.toNanos(stepDownSecs),
                        TimeUnit.SECONDS.toNanos(catchUpSecs),
                        force);
            }
            case "replSetStepUp":
                return set.topology.stepUp(this);
            case "replSetFreeze":
                return ok();
            default:
                return set.topology.status(this);
        }
    }

    @Override
    public BsonDocument configureFailPoint(String failPoint, BsonDocument command) {
        if (!failPoint.equals("stopReplProducer")) {
            return null;
        }
        BsonValue mode = command.get("mode");
        stopReplProducer =
                mode != null && !(mode.isString() && mode.asString().getValue().equals("off"));
        set.signal();
        return ok().append("count", new BsonInt32(0));
    }

    // ---- CommandExecutor: the primary's writes, logged -------------------------------------------------

    @Override
    public BsonDocument execute(OperationContext operation, BsonDocument command) {
        WriteState write = writeState(operation);
        StorageEngine engine = node.engine();
        if (write == null || !WRITE_COMMANDS.contains(command.getFirstKey())) {
            return engine.run(operation.database(), command);
        }
        if (!write.holdsApplyLock) {
            applyLock.lock();
            write.holdsApplyLock = true;
        }
        if (incarnation != write.incarnation || state != MemberState.PRIMARY) {
            // A restarted node runs nothing of its earlier life.
            throw OperationInterruptedException.of(OperationInterruptedException.KillReason.SHUTDOWN);
        }
        return LoggedWrites.run(node.engine(), operation.database(), command, write.ops);
    }

    static BsonDocument ok() {
        return new BsonDocument("ok", new BsonDouble(1));
    }

    static BsonDocument error(int code, String codeName, String message) {
        return StorageEngine.error(code, codeName, message);
    }

    static BsonDocument wce(int code, String codeName, String message) {
        return new BsonDocument("code", new BsonInt32(code))
                .append("codeName", new BsonString(codeName))
                .append("errmsg", new BsonString(message));
    }

    @Override
    public String toString() {
        return node == null ? "member" + id : node.name() + "@" + node.address() + " " + state;
    }
}
