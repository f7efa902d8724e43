package io.github.mongowriteguard.testkit.replication;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
 * Who is primary in which term, and the elections that decide it, as mongod's topology coordinator and the
 * replication coordinator's election and heartbeat paths do (mongodb/mongo
 * {@code src/mongo/db/repl/topology_coordinator.cpp}, {@code replication_coordinator_impl_elect_v1.cpp},
 * {@code replication_coordinator_impl_heartbeat.cpp}):
 * <ul>
 *   <li>An election needs a majority of the members up and reachable; the candidate is the most up-to-date electable
 *       secondary, and each voter grants its vote only if the candidate's last optime is not older than its own
 *       ({@code topology_coordinator.cpp} {@code processReplSetRequestVotes}: "candidate's data is staler than mine").
 *       The new primary starts its term with a no-op entry and announces {@code electionId = OID::fromTerm(term)}.</li>
 *   <li>A primary that cannot see a majority for the election timeout steps down ("Can't see a majority of the set,
 *       relinquishing primary", {@code topology_coordinator.cpp}); the others elect after the same timeout.</li>
 *   <li>{@code replSetStepUp} runs an election with this member as the only candidate and fails with
 *       {@code CommandFailed} "Election failed." when it does not become primary
 *       ({@code replication_coordinator_impl_elect_v1.cpp} {@code stepUpIfEligible}).</li>
 *   <li>{@code replSetGetStatus} reports each member as this member sees it ({@code topology_coordinator.cpp}
 *       {@code prepareStatusResponse}).</li>
 * </ul>
 * Its state is guarded by the coordinator's lock.
 */
final class TopologyCoordinator {
    /** The coordinator's logger, as before the elections had their own class. */
    private static final Logger log = LoggerFactory.getLogger(ReplicaSetCoordinator.class);

    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final ReplicaSetCoordinator set;
    private final long electionTimeoutNanos;
    /** The highest term of any election; guarded by the lock. */
    private long term;
    /** The member elected in {@link #term}, while it is primary; guarded by the lock. */
    Member primary;
    /** Since when the reachable members see no primary (-1: they see one); guarded by the lock. */
    private long primaryLostNanos = -1;
    /** A stepped-down primary handed its role to a caught-up secondary: elect now. Guarded by the lock. */
    private boolean handoff;

    TopologyCoordinator(ReplicaSetCoordinator set, long electionTimeoutNanos) {
        this.set = set;
        this.electionTimeoutNanos = electionTimeoutNanos;
    }

    /** The address of the primary {@code asker} can see, or null. */
    String primaryKnownTo(Member asker) {
        set.lock.lock();
        try {
            return primary != null && primary.reachable() && asker.partition == null ? primary.address() : null;
        } finally {
            set.lock.unlock();
        }
    }

    long termOf(Member member) {
        set.lock.lock();
        try {
            return member.state == MemberState.PRIMARY ? member.primaryTerm : -1;
        } finally {
            set.lock.unlock();
        }
    }

    /** {@code member} is no longer primary (it stopped); an election follows after the timeout. Lock held. */
    void lost(Member member) {
        if (primary == member) {
            primary = null;
            primaryLostNanos = System.nanoTime();
            handoff = false;
        }
    }

    /** Makes {@code candidate} primary in a new term; call with the lock (and the candidate's apply lock) held. */
    void elect(Member candidate) {
        term++;
        candidate.state = MemberState.PRIMARY;
        candidate.primaryTerm = term;
        candidate.cannotSeeMajoritySinceNanos = -1;
        candidate.log.add(OplogEntry.noop(term, candidate.log.size() + 1, "new primary"));
        primary = candidate;
        primaryLostNanos = -1;
        handoff = false;
        log.info("{}: {} elected primary in term {}", set.setName, candidate.node.name(), term);
        set.changed.signalAll();
    }

    /**
     * The member an election would choose now: the most up-to-date electable secondary, if a majority is up and
     * reachable and a majority grants it its vote; null otherwise. Call with the lock held.
     */
    Member candidate(long now, Member wanted) {
        List<Member> reachable = set.members.stream().filter(Member::reachable).toList();
        if (reachable.size() < set.majority()) {
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
        return votes >= set.majority() ? best : null;
    }

    /** Elects {@code chosen} if it is still the right candidate once its applier is between batches. */
    private boolean tryElect(Member chosen, Member wanted) {
        chosen.applyLock.lock();
        try {
            set.lock.lock();
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
                set.lock.unlock();
            }
        } finally {
            chosen.applyLock.unlock();
        }
    }

    /**
     * The primary becomes a secondary, unelectable for {@code unelectableNanos}; with {@code handOff} a caught-up
     * secondary is elected at once. Call with the lock held.
     */
    void stepDownNow(Member member, long now, long unelectableNanos, boolean handOff) {
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
                set.setName,
                member.node.name(),
                handOff ? " (handing off to a caught-up secondary)" : "");
        set.changed.signalAll();
    }

    /** {@code replSetStepUp}: an election with this member as the candidate. */
    BsonDocument stepUp(Member member) {
        set.lock.lock();
        Member chosen;
        try {
            if (member.state == MemberState.PRIMARY) {
                return Member.ok();
            }
            chosen = candidate(System.nanoTime(), member);
        } finally {
            set.lock.unlock();
        }
        if (chosen == null || !tryElect(chosen, member)) {
            return Member.error(125, "CommandFailed", "Election failed.");
        }
        return Member.ok();
    }

    /** The heartbeats: primaries that cannot see a majority relinquish; a set without a reachable primary elects. */
    void heartbeats() {
        while (!set.closed) {
            try {
                TimeUnit.NANOSECONDS.sleep(TICK_NANOS);
            } catch (InterruptedException e) {
                return;
            }
            List<Member> relinquishing = new ArrayList<>();
            Member chosen = null;
            set.lock.lock();
            try {
                long now = System.nanoTime();
                long reachable = set.members.stream().filter(Member::reachable).count();
                for (Member member : set.members) {
                    if (member.state != MemberState.PRIMARY || member.steppingDown) {
                        continue;
                    }
                    boolean seesMajority = member.partition == null && reachable >= set.majority();
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
                set.lock.unlock();
            }
            for (Member member : relinquishing) {
                set.transitions.execute(() -> set.stepDown.relinquish(member));
            }
            if (chosen != null) {
                tryElect(chosen, null);
            }
        }
    }

    /** {@code replSetGetStatus}, as the member sees the set. */
    BsonDocument status(Member self) {
        set.lock.lock();
        try {
            BsonArray list = new BsonArray();
            for (Member member : set.members) {
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
                    .append("set", new BsonString(set.setName))
                    .append("date", new BsonDateTime(System.currentTimeMillis()))
                    .append("myState", new BsonInt32(self.state.code()))
                    .append("term", new BsonInt64(term))
                    .append("members", list);
        } finally {
            set.lock.unlock();
        }
    }
}
