package io.github.mongowriteguard.testkit.replication;

import io.github.mongowriteguard.testkit.auth.Users;
import io.github.mongowriteguard.testkit.node.CommandExecutor;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.node.NodeIdentity;
import io.github.mongowriteguard.testkit.node.NodeInternals;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiFunction;
import java.util.function.IntFunction;
import java.util.function.IntUnaryOperator;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The replication of an emulated replica set of several members, as the set's facades ({@code EmulatedReplicaSet}, a
 * shard's {@code ShardReplicaSet}) drive it: this class owns the members, their oplogs and the lock that guards them
 * (a condition wakes appliers and write-concern waiters whenever an oplog grows or a state changes), starts the
 * threads and applies the faults (stop, start, partition, paused replication); the rules live in package-private
 * parts named after the mongod components they follow:
 * <ul>
 *   <li>{@link TopologyCoordinator}: terms, elections and votes, heartbeats, {@code replSetStepUp},
 *       {@code replSetGetStatus} ({@code topology_coordinator.cpp}, {@code replication_coordinator_impl_elect_v1.cpp},
 *       {@code replication_coordinator_impl_heartbeat.cpp});</li>
 *   <li>{@link StepDown}: {@code replSetStepDown} and a primary relinquishing
 *       ({@code replication_coordinator_impl.cpp} {@code stepDown});</li>
 *   <li>{@link ReplicationWaiter}: write concern ({@code replication_coordinator_impl.cpp}
 *       {@code _awaitReplication_inlock});</li>
 *   <li>{@link OplogApplier}: a secondary's fetching, applying and rollback ({@code oplog_fetcher.cpp},
 *       {@code oplog_applier.cpp}, {@code rollback_impl.cpp}); what it undid is kept in {@link #rolledBack()};</li>
 *   <li>{@link Member}: one member's oplog, state and the node's hooks into it, and the {@code replSet*} commands'
 *       parsing ({@code repl_set_commands.cpp}).</li>
 * </ul>
 * Public only because the facades live in other packages; a test uses those (TestkitArchitectureTest).
 */
public final class ReplicaSetCoordinator implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ReplicaSetCoordinator.class);

    final ReentrantLock lock = new ReentrantLock();
    final Condition changed = lock.newCondition();
    final String setName;
    private final ServerVersion version;
    final List<Member> members = new ArrayList<>();
    private final List<String> hosts;
    final List<BsonDocument> rolledBack = new CopyOnWriteArrayList<>();
    /** Where a primary that cannot see a majority relinquishes, off the heartbeat thread. */
    final ExecutorService transitions = Executors.newCachedThreadPool(daemon("testkit-stepdown"));

    private final List<Thread> threads = new ArrayList<>();
    volatile boolean closed;

    final TopologyCoordinator topology;
    final StepDown stepDown = new StepDown(this);
    final ReplicationWaiter waiter = new ReplicationWaiter(this);
    private final OplogApplier applier = new OplogApplier(this);

    /**
     * Starts {@code size} members, member 0 elected primary in term 1 (as after {@code replSetInitiate}), the others
     * secondaries replicating from it; each member's commands run by the executor {@code executors} wraps around the
     * member's own (a shard member's routing role around its replicated data, for example).
     *
     * @param setName         the replica set's name
     * @param version         the server version the members emulate
     * @param size            the number of members
     * @param electionTimeout how long the members go without a reachable primary before an election
     * @param users           the users every member authenticates
     * @param names           member index to node name
     * @param executors       member index and the member's own executor (which logs writes) to the node's executor
     * @param ports           member index to its loopback port, 0 for any free port
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
        this.topology = new TopologyCoordinator(this, electionTimeout.toNanos());
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
            topology.elect(members.get(0));
        } finally {
            lock.unlock();
        }
        for (Member member : members) {
            threads.add(start("testkit-" + member.node.name() + "-applier", () -> applier.applyLoop(member)));
        }
        threads.add(start("testkit-" + setName + "-heartbeats", topology::heartbeats));
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
            return topology.primary == null ? null : topology.primary.node;
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

    /** The write concern a command without one gets: {@code w: 1} before 5.0, {@code w: "majority"} from 5.0. */
    BsonDocument defaultWriteConcern() {
        return version.atLeast(ServerVersion.V5_0)
                ? new BsonDocument("w", new BsonString("majority"))
                : new BsonDocument("w", new BsonInt32(1));
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

    // ---- elections and stepdown, from Java --------------------------------------------------------------------

    /**
     * {@code replSetStepDown} from Java ({@link StepDown}); the reply as the command gives it.
     *
     * @param node           the primary's node
     * @param stepDownPeriod how long it stays unelectable
     * @param catchUpPeriod  how long it waits for a majority and an electable secondary to catch up
     * @param force          whether to step down after {@code catchUpPeriod} even when no secondary caught up
     * @return the command's reply
     */
    public BsonDocument stepDown(EmulatedNode node, Duration stepDownPeriod, Duration catchUpPeriod, boolean force) {
        return stepDown.stepDown(member(node), -1, stepDownPeriod.toNanos(), catchUpPeriod.toNanos(), force);
    }

    /**
     * {@code replSetStepUp} from Java ({@link TopologyCoordinator}): elect this member now, if it can win.
     *
     * @param node the member's node
     * @return the command's reply
     */
    public BsonDocument stepUp(EmulatedNode node) {
        return topology.stepUp(member(node));
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
            Member primary;
            while ((primary = topology.primary) == null || !primary.reachable() || primary.steppingDown) {
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
     * Waits until every member that is up, reachable and replicating holds the primary's whole oplog
     * ({@link ReplicationWaiter}).
     *
     * @return false after the timeout
     * @param timeout how long to wait
     * @throws InterruptedException when interrupted while waiting
     */
    public boolean awaitReplication(Duration timeout) throws InterruptedException {
        return waiter.awaitEveryMember(timeout.toNanos());
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
            topology.lost(member);
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
        member.partition = Objects.requireNonNull(mode, "mode");
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

    private static ThreadFactory daemon(String name) {
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
