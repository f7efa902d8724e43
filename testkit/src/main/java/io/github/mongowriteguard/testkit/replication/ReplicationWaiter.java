package io.github.mongowriteguard.testkit.replication;

import io.github.mongowriteguard.testkit.node.OperationContext;
import io.github.mongowriteguard.testkit.node.OperationInterruptedException;
import java.util.concurrent.TimeUnit;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;

/**
 * Waiting for a write's replication, as mongod's replication coordinator does for a write concern (mongodb/mongo
 * {@code src/mongo/db/repl/replication_coordinator_impl.cpp} {@code _awaitReplication_inlock}, its waiters woken by
 * every oplog advance and failed together by a stepdown, {@code _replicationWaiterList.setErrorAll}):
 * {@code w: "majority"} (or {@code w: n}) waits until that many members hold the write's entry; {@code wtimeout}
 * ends the wait with {@code WriteConcernFailed} (64, {@code errInfo.wtimeout}), the command's deadline with
 * {@code MaxTimeMSExpired} (50), a kill with the kill's error, a stepdown or restart of the primary with
 * {@code PrimarySteppedDown} (189). Each ending is a {@code writeConcernError}: the write itself stays applied.
 */
final class ReplicationWaiter {
    private final ReplicaSetCoordinator set;

    ReplicationWaiter(ReplicaSetCoordinator set) {
        this.set = set;
    }

    /**
     * Waits until {@code required} members hold the write's last entry (or, for a write that logged nothing, the
     * member's last entry, as mongod waits for the system's last optime).
     *
     * @return null, or the {@code writeConcernError}
     */
    BsonDocument awaitReplication(
            Member member, Member.WriteState write, int required, long wtimeoutMs, OperationContext operation) {
        long wtimeoutAt =
                wtimeoutMs > 0 ? System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(wtimeoutMs) : Long.MAX_VALUE;
        set.lock.lock();
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
                set.changed.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Member.wce(11600, "InterruptedAtShutdown", "interrupted at shutdown");
        } finally {
            set.lock.unlock();
        }
    }

    /**
     * How many members hold {@code primary}'s entry at {@code index} (the same entry, not just as many entries). Call
     * with the lock held.
     */
    int replicatedOn(Member primaryMember, long index) {
        OplogEntry entry = primaryMember.log.get((int) index - 1);
        int count = 0;
        for (Member member : set.members) {
            if (member.log.size() >= index && member.log.get((int) index - 1) == entry) {
                count++;
            }
        }
        return count;
    }

    /**
     * The test's wait: until every member that is up, reachable and replicating holds the primary's whole oplog.
     *
     * @return false after the timeout
     */
    boolean awaitEveryMember(long timeoutNanos) throws InterruptedException {
        long until = System.nanoTime() + timeoutNanos;
        set.lock.lock();
        try {
            while (true) {
                Member source = set.topology.primary;
                if (source != null) {
                    boolean done = true;
                    for (Member member : set.members) {
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
                set.changed.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)));
            }
        } finally {
            set.lock.unlock();
        }
    }
}
