package io.github.mongowriteguard.testkit.replication;

import io.github.mongowriteguard.testkit.ServerVersion;
import io.github.mongowriteguard.testkit.auth.Users;
import io.github.mongowriteguard.testkit.node.CommandExecutor;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.node.NodeIdentity;
import io.github.mongowriteguard.testkit.node.NodeInternals;
import io.github.mongowriteguard.testkit.node.OperationInterruptedException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiFunction;
import java.util.function.IntFunction;
import java.util.function.IntUnaryOperator;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The replication of an emulated replica set of several members: elections, oplogs, appliers, write concern, stepdown,
 * restarts, partitions and rollback. One lock guards the set's state and every member's oplog; a condition wakes
 * appliers and write-concern waiters whenever an oplog grows or a state changes.
 *
 * <p>The rules, each from mongod:
 * <ul>
 *   <li>An election needs a majority of the members up and reachable; the candidate is the most up-to-date electable
 *       secondary, and each voter grants its vote only if the candidate's last optime is not older than its own
 *       ({@code topology_coordinator.cpp} {@code processReplSetRequestVotes}: "candidate's data is staler than mine").
 *       The new primary starts its term with a no-op entry and announces {@code electionId = OID::fromTerm(term)}.</li>
 *   <li>A primary that cannot see a majority for the election timeout steps down ("Can't see a majority of the set,
 *       relinquishing primary", {@code topology_coordinator.cpp}); the others elect after the same timeout.</li>
 *   <li>{@code replSetStepDown} kills the writes that hold the state transition lock ({@code InterruptedDueToReplStateChange}),
 *       takes the lock, waits up to {@code secondaryCatchUpPeriodSecs} for a majority and an electable secondary to
 *       reach its last optime ({@code ExceededTimeLimit} otherwise, unless {@code force}), then steps down; a caught-up
 *       secondary is elected at once (election handoff), otherwise after the election timeout
 *       ({@code replication_coordinator_impl.cpp} {@code stepDown}, {@code _tryToStepDown_inlock}).</li>
 *   <li>Write concern: {@code w: "majority"} (or {@code w: n}) waits until that many members hold the write's entry;
 *       {@code wtimeout} ends the wait with {@code WriteConcernFailed} (64, {@code errInfo.wtimeout}), the command's
 *       deadline with {@code MaxTimeMSExpired}, a stepdown with {@code PrimarySteppedDown} (189)
 *       ({@code _awaitReplication_inlock}, {@code _replicationWaiterList.setErrorAll}).</li>
 *   <li>A secondary whose oplog diverged from the primary's (it was primary, or applied entries of a deposed primary)
 *       rolls back to the common point and rebuilds its data and retryable-write records from its oplog
 *       ({@code rollback_impl.cpp}); what it undid is kept in {@link #rolledBack()}.</li>
 * </ul>
 */
public final class ReplicaSetCoordinator implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ReplicaSetCoordinator.class);
    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    final ReentrantLock lock = new ReentrantLock();
    final Condition changed = lock.newCondition();
    final String setName;
    private final ServerVersion version;
    private final long electionTimeoutNanos;
    private final List<Member> members = new ArrayList<>();
    private final List<String> hosts;
    final List<BsonDocument> rolledBack = new CopyOnWriteArrayList<>();
    private final ExecutorService transitions = Executors.newCachedThreadPool(daemon("testkit-stepdown"));
    private final List<Thread> threads = new ArrayList<>();
    /** The highest term of any election; guarded by the lock. */
    private long term;
    /** The member elected in {@link #term}, while it is primary; guarded by the lock. */
    Member primary;
    /** Since when the reachable members see no primary (-1: they see one); guarded by the lock. */
    private long primaryLostNanos = -1;
    /** A stepped-down primary handed its role to a caught-up secondary: elect now. Guarded by the lock. */
    private boolean handoff;

    volatile boolean closed;
    private final OplogApplier applier = new OplogApplier(this);

    /**
     * Starts {@code size} members named {@code <setName>-0}, {@code <setName>-1}, ..., member 0 elected primary in
     * term 1 (as after {@code replSetInitiate}), the others secondaries replicating from it.
     *
     * @param setName         the replica set's name
     * @param version         the server version the members emulate
     * @param size            the number of members
     * @param electionTimeout how long the members go without a reachable primary before an election
     * @param users           the users every member authenticates
     */
    public ReplicaSetCoordinator(
            String setName, ServerVersion version, int size, Duration electionTimeout, Users users) {
        this(setName, version, size, electionTimeout, users, i -> setName + "-" + i, (i, member) -> member);
    }

    /**
     * Starts {@code size} members as {@link #ReplicaSetCoordinator(String, ServerVersion, int, Duration, Users)} does,
     * with the names {@code names} gives and each member's commands run by the executor {@code executors} wraps around
     * the member's own (a shard member's routing role around its replicated data, for example).
     *
     * @param setName         the replica set's name
     * @param version         the server version the members emulate
     * @param size            the number of members
     * @param electionTimeout how long the members go without a reachable primary before an election
     * @param users           the users every member authenticates
     * @param names           member index to node name
     * @param executors       member index and the member's own executor (which logs writes) to the node's executor
     */
    public ReplicaSetCoordinator(
            String setName,
            ServerVersion version,
            int size,
            Duration electionTimeout,
            Users users,
            IntFunction<String> names,
            BiFunction<Integer, CommandExecutor, CommandExecutor> executors) {
        this(setName, version, size, electionTimeout, users, names, executors, i -> 0);
    }

    /**
     * As the constructor above, each member listening on the loopback port {@code ports} gives (0: any free port).
     *
     * @param setName         the replica set's name
     * @param version         the server version the members emulate
     * @param size            the number of members
     * @param electionTimeout how long the members go without a reachable primary before an election
     * @param users           the users every member authenticates
     * @param names           member index to node name
     * @param executors       member index and the member's own executor to the node's executor
     * @param ports           member index to its port, 0 for any free port
     */
    public ReplicaSetCoordinator(
            String setName,
            ServerVersion version,
            int size,
            Duration electionTimeout,
            Users users,
            IntFunction<String> names,
            BiFunction<Integer, CommandExecutor, CommandExecutor> executors,
            IntUnaryOperator ports) {
        this.setName = setName;
        this.version = version;
        this.electionTimeoutNanos = electionTimeout.toNanos();
        for (int i = 0; i < size; i++) {
            Member member = new Member(this, i);
            member.node = new EmulatedNode(
                    names.apply(i),
                    NodeIdentity.primary(setName, version),
                    ports.applyAsInt(i),
                    executors.apply(i, member));
            NodeInternals.of(member.node).users(users);
            NodeInternals.of(member.node).membership(member);
            members.add(member);
        }
        this.hosts = members.stream().map(Member::address).toList();
        lock.lock();
        try {
            elect(members.get(0));
        } finally {
            lock.unlock();
        }
        for (Member member : members) {
            threads.add(start("testkit-" + member.node.name() + "-applier", () -> applier.applyLoop(member)));
        }
        threads.add(start("testkit-" + setName + "-heartbeats", this::tick));
    }

    // ---- queries ------------------------------------------------------------------------------------------

    /** {@return every member's node, in member order} */
    public List<EmulatedNode> nodes() {
        return members.stream().map(m -> m.node).toList();
    }

    List<String> hosts() {
        return hosts;
    }

    int size() {
        return members.size();
    }

    int majority() {
        return members.size() / 2 + 1;
    }

    /**
     * The primary, or null while there is none (an election is due).
     *
     * @return the primary's node, or null
     */
    public EmulatedNode primary() {
        lock.lock();
        try {
            return primary == null ? null : primary.node;
        } finally {
            lock.unlock();
        }
    }

    /**
     * A member's state now.
     *
     * @param node a member's node
     * @return its state
     */
    public MemberState state(EmulatedNode node) {
        return member(node).state;
    }

    /**
     * The documents of the writes rolled back so far ({@code {op, ns, o}}, as rollback files hold them).
     *
     * @return an unmodifiable view of the documents
     */
    public List<BsonDocument> rolledBack() {
        return Collections.unmodifiableList(rolledBack);
    }

    /** The write concern a command without one gets: {@code w: 1} before 5.0, {@code w: "majority"} from 5.0. */
    BsonDocument defaultWriteConcern() {
        return version.atLeast(ServerVersion.V5_0)
                ? new BsonDocument("w", new BsonString("majority"))
                : new BsonDocument("w", new BsonInt32(1));
    }

    /** The address of the primary {@code asker} can see, or null. */
    String primaryKnownTo(Member asker) {
        lock.lock();
        try {
            return primary != null && primary.reachable() && asker.partition == null ? primary.address() : null;
        } finally {
            lock.unlock();
        }
    }

    long termOf(Member member) {
        lock.lock();
        try {
            return member.state == MemberState.PRIMARY ? member.primaryTerm : -1;
        } finally {
            lock.unlock();
        }
    }

    private Member member(EmulatedNode node) {
        for (Member member : members) {
            if (member.node == node) {
                return member;
            }
        }
        throw new IllegalArgumentException(node + " is not a member of " + setName);
    }

    void signal() {
        lock.lock();
        try {
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    // ---- the primary's writes -----------------------------------------------------------------------------

    /** Whether {@code member} is the primary; records its term and incarnation in the write. */
    boolean primaryInTerm(Member member, Member.WriteState write) {
        lock.lock();
        try {
            write.incarnation = member.incarnation;
            if (member.state != MemberState.PRIMARY) {
                return false;
            }
            write.term = member.primaryTerm;
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Appends a write's operations and records to its primary's oplog, unless the node was restarted meanwhile. */
    void append(Member member, Member.WriteState write) {
        lock.lock();
        try {
            if (member.state == MemberState.PRIMARY
                    && member.primaryTerm == write.term
                    && member.incarnation == write.incarnation) {
                OplogEntry entry = new OplogEntry(write.term, member.log.size() + 1, write.ops, write.records);
                member.log.add(entry);
                write.lastIndex = entry.index();
                changed.signalAll();
            }
            // Otherwise the node crashed: what the write did exists only in the memory it lost.
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until {@code required} members hold the write's last entry (or, for a write that logged nothing, the
     * member's last entry, as mongod waits for the system's last optime).
     *
     * @return null, or the {@code writeConcernError}
     */
    BsonDocument awaitReplication(
            Member member,
            Member.WriteState write,
            int required,
            long wtimeoutMs,
            io.github.mongowriteguard.testkit.node.OperationContext operation) {
        long wtimeoutAt =
                wtimeoutMs > 0 ? System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(wtimeoutMs) : Long.MAX_VALUE;
        lock.lock();
        try {
            long index = write != null && write.lastIndex > 0 ? write.lastIndex : member.log.size();
            long writeTerm = write != null && write.term >= 0 ? write.term : member.primaryTerm;
            long incarnation = write != null ? write.incarnation : member.incarnation;
            while (true) {
                if (member.state != MemberState.PRIMARY
                        || member.primaryTerm != writeTerm
                        || member.incarnation != incarnation) {
                    return Member.wce(189, "PrimarySteppedDown", "Primary stepped down while waiting for replication");
                }
                if (index == 0 || replicatedOn(member, index) >= required) {
                    return null;
                }
                if (operation.killed()) {
                    OperationInterruptedException e = operation.killError();
                    return Member.wce(e.code(), e.codeName(), e.getMessage());
                }
                long now = System.nanoTime();
                long left = Math.min(
                        operation.remainingNanos(), wtimeoutAt == Long.MAX_VALUE ? Long.MAX_VALUE : wtimeoutAt - now);
                if (operation.remainingNanos() == 0) {
                    return Member.wce(50, "MaxTimeMSExpired", "operation exceeded time limit");
                }
                if (left <= 0) {
                    return Member.wce(64, "WriteConcernFailed", "waiting for replication timed out")
                            .append("errInfo", new BsonDocument("wtimeout", BsonBoolean.TRUE));
                }
                changed.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Member.wce(11600, "InterruptedAtShutdown", "interrupted at shutdown");
        } finally {
            lock.unlock();
        }
    }

    /** How many members hold {@code primary}'s entry at {@code index} (the same entry, not just as many entries). */
    private int replicatedOn(Member primaryMember, long index) {
        OplogEntry entry = primaryMember.log.get((int) index - 1);
        int count = 0;
        for (Member member : members) {
            if (member.log.size() >= index && member.log.get((int) index - 1) == entry) {
                count++;
            }
        }
        return count;
    }

    // ---- elections and stepdown ---------------------------------------------------------------------------

    /** Makes {@code candidate} primary in a new term; call with the lock (and the candidate's apply lock) held. */
    private void elect(Member candidate) {
        term++;
        candidate.state = MemberState.PRIMARY;
        candidate.primaryTerm = term;
        candidate.cannotSeeMajoritySinceNanos = -1;
        candidate.log.add(OplogEntry.noop(term, candidate.log.size() + 1, "new primary"));
        primary = candidate;
        primaryLostNanos = -1;
        handoff = false;
        log.info("{}: {} elected primary in term {}", setName, candidate.node.name(), term);
        changed.signalAll();
    }

    /**
     * The member an election would choose now: the most up-to-date electable secondary, if a majority is up and
     * reachable and a majority grants it its vote; null otherwise. Call with the lock held.
     */
    private Member candidate(long now, Member wanted) {
        List<Member> reachable = members.stream().filter(Member::reachable).toList();
        if (reachable.size() < majority()) {
            return null;
        }
        Member best = null;
        for (Member member : reachable) {
            if (member.state != MemberState.SECONDARY || now - member.unelectableUntilNanos < 0) {
                continue;
            }
            if (wanted != null && member != wanted) {
                continue;
            }
            if (best == null || (member.last() != null && member.last().after(best.last()))) {
                best = member;
            }
        }
        if (best == null) {
            return null;
        }
        OplogEntry candidateLast = best.last();
        long votes = reachable.stream()
                .filter(voter -> voter.last() == null || !voter.last().after(candidateLast))
                .count();
        return votes >= majority() ? best : null;
    }

    /** Elects {@code chosen} if it is still the right candidate once its applier is between batches. */
    private boolean tryElect(Member chosen, Member wanted) {
        chosen.applyLock.lock();
        try {
            lock.lock();
            try {
                if (primary != null
                        && primary.reachable()
                        && primary.state == MemberState.PRIMARY
                        && !primary.steppingDown) {
                    return false;
                }
                if (candidate(System.nanoTime(), wanted) != chosen) {
                    return false;
                }
                elect(chosen);
                return true;
            } finally {
                lock.unlock();
            }
        } finally {
            chosen.applyLock.unlock();
        }
    }

    /**
     * {@code replSetStepDown}.
     *
     * @param spare the opid of the stepdown command itself, not killed
     * @return {@code ok: 1}, or the error reply
     */
    BsonDocument stepDown(Member member, long spare, long stepDownNanos, long catchUpNanos, boolean force) {
        lock.lock();
        try {
            if (member.state != MemberState.PRIMARY || member.steppingDown) {
                return Member.error(10107, "NotWritablePrimary", "not primary so can't step down");
            }
            member.steppingDown = true;
        } finally {
            lock.unlock();
        }
        try {
            NodeInternals.of(member.node)
                    .killOperations(
                            OperationInterruptedException.KillReason.REPL_STATE_CHANGE,
                            operation -> operation.opid() != spare
                                    && operation.replicationState() instanceof Member.WriteState write
                                    && write.holdsRstl);
            try {
                if (!member.rstl.writeLock().tryLock(stepDownNanos, TimeUnit.NANOSECONDS)) {
                    return Member.error(
                            262,
                            "ExceededTimeLimit",
                            "Could not acquire the global shared lock within the"
                                    + " amount of time specified that we should step down for");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Member.error(11600, "InterruptedAtShutdown", "interrupted at shutdown");
            }
            try {
                long start = System.nanoTime();
                lock.lock();
                try {
                    while (true) {
                        if (member.state != MemberState.PRIMARY) {
                            return Member.error(
                                    10107,
                                    "NotWritablePrimary",
                                    "Already stepped down from primary while processing step down request");
                        }
                        boolean caughtUp = caughtUp(member);
                        long now = System.nanoTime();
                        if (caughtUp || (force && now - start >= catchUpNanos)) {
                            stepDownNow(member, now, stepDownNanos, caughtUp);
                            return Member.ok();
                        }
                        if (now - start >= catchUpNanos) {
                            return Member.error(
                                    262,
                                    "ExceededTimeLimit",
                                    "No electable secondaries caught up as of "
                                            + Instant.now()
                                            + ". Please use the replSetStepDown command with the argument {force: true}"
                                            + " to force node to step down.");
                        }
                        changed.awaitNanos(Math.min(catchUpNanos - (now - start), TimeUnit.MILLISECONDS.toNanos(20)));
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return Member.error(11600, "InterruptedAtShutdown", "interrupted at shutdown");
                } finally {
                    lock.unlock();
                }
            } finally {
                member.rstl.writeLock().unlock();
            }
        } finally {
            member.steppingDown = false;
            signal();
        }
    }

    /** A majority holds the primary's last entry, and so does an electable secondary. Call with the lock held. */
    private boolean caughtUp(Member member) {
        int index = member.log.size();
        if (replicatedOn(member, index) < majority()) {
            return false;
        }
        OplogEntry last = member.last();
        long now = System.nanoTime();
        return members.stream()
                .anyMatch(m -> m != member
                        && m.reachable()
                        && m.state == MemberState.SECONDARY
                        && now - m.unelectableUntilNanos >= 0
                        && m.log.size() >= index
                        && m.log.get(index - 1) == last);
    }

    /** The primary becomes a secondary; call with the lock held. */
    private void stepDownNow(Member member, long now, long unelectableNanos, boolean handOff) {
        member.state = MemberState.SECONDARY;
        member.cannotSeeMajoritySinceNanos = -1;
        member.unelectableUntilNanos = now + unelectableNanos;
        if (primary == member) {
            primary = null;
            primaryLostNanos = now;
            handoff = handOff;
        }
        log.info(
                "{}: {} stepped down{}",
                setName,
                member.node.name(),
                handOff ? " (handing off to a caught-up secondary)" : "");
        changed.signalAll();
    }

    /** A primary that cannot see a majority steps down by itself (killing its writes first, as a stepdown does). */
    private void relinquish(Member member) {
        NodeInternals.of(member.node)
                .killOperations(
                        OperationInterruptedException.KillReason.REPL_STATE_CHANGE,
                        operation ->
                                operation.replicationState() instanceof Member.WriteState write && write.holdsRstl);
        member.rstl.writeLock().lock();
        try {
            lock.lock();
            try {
                if (member.state == MemberState.PRIMARY) {
                    log.info(
                            "{}: {} can't see a majority of the set, relinquishing primary",
                            setName,
                            member.node.name());
                    stepDownNow(member, System.nanoTime(), 0, false);
                }
            } finally {
                lock.unlock();
            }
        } finally {
            member.rstl.writeLock().unlock();
            member.steppingDown = false;
            signal();
        }
    }

    /** {@code replSetStepUp}: an election with this member as the candidate. */
    BsonDocument stepUp(Member member) {
        lock.lock();
        Member chosen;
        try {
            if (member.state == MemberState.PRIMARY) {
                return Member.ok();
            }
            chosen = candidate(System.nanoTime(), member);
        } finally {
            lock.unlock();
        }
        if (chosen == null || !tryElect(chosen, member)) {
            return Member.error(125, "CommandFailed", "Election failed.");
        }
        return Member.ok();
    }

    /** The heartbeats: primaries that cannot see a majority relinquish; a set without a reachable primary elects. */
    private void tick() {
        while (!closed) {
            try {
                TimeUnit.NANOSECONDS.sleep(TICK_NANOS);
            } catch (InterruptedException e) {
                return;
            }
            List<Member> relinquishing = new ArrayList<>();
            Member chosen = null;
            lock.lock();
            try {
                long now = System.nanoTime();
                long reachable = members.stream().filter(Member::reachable).count();
                for (Member member : members) {
                    if (member.state != MemberState.PRIMARY || member.steppingDown) {
                        continue;
                    }
                    boolean seesMajority = member.partition == null && reachable >= majority();
                    boolean deposed = member != primary && member.reachable();
                    if (deposed) {
                        // It hears of the newer term from the others and steps down at once.
                        member.steppingDown = true;
                        relinquishing.add(member);
                    } else if (seesMajority) {
                        member.cannotSeeMajoritySinceNanos = -1;
                    } else if (member.cannotSeeMajoritySinceNanos < 0) {
                        member.cannotSeeMajoritySinceNanos = now;
                    } else if (now - member.cannotSeeMajoritySinceNanos >= electionTimeoutNanos) {
                        member.steppingDown = true;
                        relinquishing.add(member);
                    }
                }
                boolean seen = primary != null && primary.reachable() && primary.state == MemberState.PRIMARY;
                if (seen) {
                    primaryLostNanos = -1;
                } else {
                    if (primaryLostNanos < 0) {
                        primaryLostNanos = now;
                    }
                    if (handoff || now - primaryLostNanos >= electionTimeoutNanos) {
                        chosen = candidate(now, null);
                    }
                }
            } finally {
                lock.unlock();
            }
            for (Member member : relinquishing) {
                transitions.execute(() -> relinquish(member));
            }
            if (chosen != null) {
                tryElect(chosen, null);
            }
        }
    }

    // ---- faults -------------------------------------------------------------------------------------------

    /**
     * Stops a member at once, as {@code kill -9}: connections closed, running operations lost; its oplog is kept.
     *
     * @param node the member's node
     */
    public void stop(EmulatedNode node) {
        Member member = member(node);
        lock.lock();
        try {
            if (member.state == MemberState.DOWN) {
                return;
            }
            member.state = MemberState.DOWN;
            member.incarnation++;
            if (primary == member) {
                primary = null;
                primaryLostNanos = System.nanoTime();
                handoff = false;
            }
            log.info("{}: {} stopped", setName, node.name());
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        NodeInternals.of(node).restarted();
    }

    /**
     * Starts a stopped member: it recovers its data and retryable-write records from its oplog (everything it had
     * applied; what was not majority-committed may still be rolled back once it syncs from the primary) and rejoins as
     * a secondary.
     *
     * @param node the member's node
     */
    public void start(EmulatedNode node) {
        Member member = member(node);
        member.applyLock.lock();
        try {
            List<OplogEntry> entries;
            lock.lock();
            try {
                if (member.state != MemberState.DOWN) {
                    return;
                }
                entries = List.copyOf(member.log);
            } finally {
                lock.unlock();
            }
            NodeInternals.of(node).restarted();
            member.stopReplProducer = false;
            OplogApplier.rebuild(member, entries);
            lock.lock();
            try {
                member.state = MemberState.SECONDARY;
                member.primaryTerm = -1;
                log.info("{}: {} started as a secondary", setName, node.name());
                changed.signalAll();
            } finally {
                lock.unlock();
            }
        } finally {
            member.applyLock.unlock();
        }
    }

    /**
     * Cuts a member off from clients and the other members until {@link #heal}.
     *
     * @param node the member's node
     * @param mode whether its connections are closed or its requests and replies are lost
     */
    public void partition(EmulatedNode node, PartitionMode mode) {
        Member member = member(node);
        member.partition = java.util.Objects.requireNonNull(mode, "mode");
        log.info("{}: {} partitioned ({})", setName, node.name(), mode);
        signal();
    }

    /**
     * Ends a member's partition (nothing happens when it is not partitioned).
     *
     * @param node the member's node
     */
    public void heal(EmulatedNode node) {
        member(node).partition = null;
        signal();
    }

    /**
     * Stops ({@code true}) or resumes replication to a secondary, as the {@code stopReplProducer} fail point does.
     *
     * @param node   the secondary's node
     * @param paused true to stop replication to it, false to resume it
     */
    public void pauseReplication(EmulatedNode node, boolean paused) {
        member(node).paused = paused;
        signal();
    }

    /**
     * {@code replSetStepDown} from Java; the reply as the command gives it.
     *
     * @param node           the primary's node
     * @param stepDownPeriod how long it stays unelectable
     * @param catchUpPeriod  how long it waits for a majority and an electable secondary to catch up
     * @param force          whether to step down after {@code catchUpPeriod} even when no secondary caught up
     * @return the command's reply
     */
    public BsonDocument stepDown(EmulatedNode node, Duration stepDownPeriod, Duration catchUpPeriod, boolean force) {
        return stepDown(member(node), -1, stepDownPeriod.toNanos(), catchUpPeriod.toNanos(), force);
    }

    /**
     * {@code replSetStepUp} from Java: elect this member now, if it can win.
     *
     * @param node the member's node
     * @return the command's reply
     */
    public BsonDocument stepUp(EmulatedNode node) {
        return stepUp(member(node));
    }

    /**
     * Waits until a primary is elected and reachable.
     *
     * @param timeout how long to wait
     * @return the primary's node, or null after the timeout
     * @throws InterruptedException when interrupted while waiting
     */
    public EmulatedNode awaitPrimary(Duration timeout) throws InterruptedException {
        long until = System.nanoTime() + timeout.toNanos();
        lock.lock();
        try {
            while (primary == null || !primary.reachable() || primary.steppingDown) {
                long left = until - System.nanoTime();
                if (left <= 0) {
                    return null;
                }
                changed.awaitNanos(left);
            }
            return primary.node;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until every member that is up, reachable and replicating holds the primary's whole oplog.
     *
     * @return false after the timeout
     * @param timeout how long to wait
     * @throws InterruptedException when interrupted while waiting
     */
    public boolean awaitReplication(Duration timeout) throws InterruptedException {
        long until = System.nanoTime() + timeout.toNanos();
        lock.lock();
        try {
            while (true) {
                Member source = primary;
                if (source != null) {
                    boolean done = true;
                    for (Member member : members) {
                        if (member == source || !member.reachable() || member.paused || member.stopReplProducer) {
                            continue;
                        }
                        if (member.log.size() != source.log.size() || member.last() != source.last()) {
                            done = false;
                        }
                    }
                    if (done) {
                        return true;
                    }
                }
                long left = until - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                changed.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)));
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * How many oplog entries a member holds.
     *
     * @param node a member's node
     * @return the number of entries in its oplog
     */
    public int oplogSize(EmulatedNode node) {
        lock.lock();
        try {
            return member(node).log.size();
        } finally {
            lock.unlock();
        }
    }

    /** {@code replSetGetStatus}, as the member sees the set. */
    BsonDocument status(Member self) {
        lock.lock();
        try {
            BsonArray list = new BsonArray();
            for (Member member : members) {
                OplogEntry last = member.last();
                BsonDocument entry = new BsonDocument("_id", new BsonInt32(member.id))
                        .append("name", new BsonString(member.address()))
                        .append("health", new BsonInt32(member.reachable() || member == self ? 1 : 0))
                        .append("state", new BsonInt32(member.state.code()))
                        .append(
                                "stateStr",
                                new BsonString(
                                        member.state == MemberState.DOWN
                                                ? "(not reachable/healthy)"
                                                : member.state.name()))
                        .append("optime", last == null ? new BsonDocument() : last.optime());
                if (member == self) {
                    entry.append("self", BsonBoolean.TRUE);
                }
                list.add(entry);
            }
            return Member.ok()
                    .append("set", new BsonString(setName))
                    .append("date", new BsonDateTime(System.currentTimeMillis()))
                    .append("myState", new BsonInt32(self.state.code()))
                    .append("term", new BsonInt64(term))
                    .append("members", list);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void close() {
        closed = true;
        threads.forEach(Thread::interrupt);
        transitions.shutdownNow();
        members.forEach(member -> member.node.close());
    }

    private static Thread start(String name, Runnable body) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        return runnable -> {
            Thread thread = new Thread(runnable, name);
            thread.setDaemon(true);
            return thread;
        };
    }

    @Override
    public String toString() {
        return "ReplicaSetCoordinator{" + setName + ", " + members + "}";
    }
}
