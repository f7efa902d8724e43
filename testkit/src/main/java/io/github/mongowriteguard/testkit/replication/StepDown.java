package io.github.mongowriteguard.testkit.replication;

import io.github.mongowriteguard.testkit.node.NodeInternals;
import io.github.mongowriteguard.testkit.node.OperationInterruptedException;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A primary stepping down, as mongod's replication coordinator does it (mongodb/mongo
 * {@code src/mongo/db/repl/replication_coordinator_impl.cpp} {@code stepDown}, {@code _tryToStepDown_inlock};
 * {@code auto_get_rstl_for_stepup_stepdown.cpp} for the writes it kills): {@code replSetStepDown} kills the writes that
 * hold the replication state transition lock ({@code InterruptedDueToReplStateChange}), takes the lock, waits up to
 * {@code secondaryCatchUpPeriodSecs} for a majority and an electable secondary to reach its last optime
 * ({@code ExceededTimeLimit} otherwise, unless {@code force}), then steps down; a caught-up secondary is elected at
 * once (election handoff), otherwise after the election timeout. A primary that cannot see a majority relinquishes
 * the same way, without waiting ({@code replication_coordinator_impl_heartbeat.cpp}, "Stepping down from primary in
 * response to heartbeat").
 */
final class StepDown {
    /** The coordinator's logger, as before the stepdown had its own class. */
    private static final Logger log = LoggerFactory.getLogger(ReplicaSetCoordinator.class);

    private final ReplicaSetCoordinator set;

    StepDown(ReplicaSetCoordinator set) {
        this.set = set;
    }

    /**
     * {@code replSetStepDown}.
     *
     * @param spare the opid of the stepdown command itself, not killed
     * @return {@code ok: 1}, or the error reply
     */
    BsonDocument stepDown(Member member, long spare, long stepDownNanos, long catchUpNanos, boolean force) {
        set.lock.lock();
        try {
            if (member.state != MemberState.PRIMARY || member.steppingDown) {
                return Member.error(10107, "NotWritablePrimary", "not primary so can't step down");
            }
            member.steppingDown = true;
        } finally {
            set.lock.unlock();
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
                return awaitCatchUp(member, stepDownNanos, catchUpNanos, force);
            } finally {
                member.rstl.writeLock().unlock();
            }
        } finally {
            member.steppingDown = false;
            set.signal();
        }
    }

    /** With the RSTL held: steps down once caught up (or forced after the period), else {@code ExceededTimeLimit}. */
    private BsonDocument awaitCatchUp(Member member, long stepDownNanos, long catchUpNanos, boolean force) {
        long start = System.nanoTime();
        set.lock.lock();
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
                    set.topology.stepDownNow(member, now, stepDownNanos, caughtUp);
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
                set.changed.awaitNanos(Math.min(catchUpNanos - (now - start), TimeUnit.MILLISECONDS.toNanos(20)));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Member.error(11600, "InterruptedAtShutdown", "interrupted at shutdown");
        } finally {
            set.lock.unlock();
        }
    }

    /** A majority holds the primary's last entry, and so does an electable secondary. Call with the lock held. */
    private boolean caughtUp(Member member) {
        int index = member.log.size();
        if (set.waiter.replicatedOn(member, index) < set.majority()) {
            return false;
        }
        OplogEntry last = member.last();
        long now = System.nanoTime();
        return set.members.stream()
                .anyMatch(m -> m != member
                        && m.reachable()
                        && m.state == MemberState.SECONDARY
                        && now - m.unelectableUntilNanos >= 0
                        && m.log.size() >= index
                        && m.log.get(index - 1) == last);
    }

    /** A primary that cannot see a majority steps down by itself (killing its writes first, as a stepdown does). */
    void relinquish(Member member) {
        NodeInternals.of(member.node)
                .killOperations(
                        OperationInterruptedException.KillReason.REPL_STATE_CHANGE,
                        operation ->
                                operation.replicationState() instanceof Member.WriteState write && write.holdsRstl);
        member.rstl.writeLock().lock();
        try {
            set.lock.lock();
            try {
                if (member.state == MemberState.PRIMARY) {
                    log.info(
                            "{}: {} can't see a majority of the set, relinquishing primary",
                            set.setName,
                            member.node.name());
                    set.topology.stepDownNow(member, System.nanoTime(), 0, false);
                }
            } finally {
                set.lock.unlock();
            }
        } finally {
            member.rstl.writeLock().unlock();
            member.steppingDown = false;
            set.signal();
        }
    }
}
