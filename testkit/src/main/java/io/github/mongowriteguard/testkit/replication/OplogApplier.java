package io.github.mongowriteguard.testkit.replication;

import io.github.mongowriteguard.testkit.engine.StorageEngine;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.node.NodeInternals;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A secondary's replication: it copies the primary's oplog in batches and applies each entry's effects on documents
 * and its retryable-write records (mongodb/mongo {@code src/mongo/db/repl/oplog_fetcher.cpp},
 * {@code oplog_applier.cpp}, {@code session_update_tracker.cpp}), rolling back first where its oplog diverged from
 * the primary's ({@code src/mongo/db/repl/rollback_impl.cpp}). One loop per member, under the coordinator's lock for
 * the set's state.
 */
final class OplogApplier {
    /** The coordinator's logger, as before the applier had its own class. */
    private static final Logger log = LoggerFactory.getLogger(ReplicaSetCoordinator.class);

    private final ReplicaSetCoordinator coordinator;

    OplogApplier(ReplicaSetCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    /** What an applier does next: roll back to {@code common}, then append {@code batch}. */
    private record Plan(
            int common,
            int mine,
            List<OplogEntry> prefix,
            List<OplogEntry> undone,
            List<OplogEntry> batch,
            long incarnation) {}

    /** A secondary copies the primary's oplog and applies it, rolling back first where the oplogs diverged. */
    void applyLoop(Member member) {
        while (!coordinator.closed) {
            Plan plan;
            coordinator.lock.lock();
            try {
                plan = plan(member);
                if (plan == null) {
                    coordinator.changed.awaitNanos(TimeUnit.MILLISECONDS.toNanos(50));
                    continue;
                }
            } catch (InterruptedException e) {
                return;
            } finally {
                coordinator.lock.unlock();
            }
            try {
                apply(member, plan);
            } catch (RuntimeException e) {
                if (!coordinator.closed) {
                    log.warn("{}: applying the oplog on {} failed", coordinator.setName, member.node.name(), e);
                }
            }
        }
    }

    private Plan plan(Member member) {
        Member source = coordinator.topology.primary;
        if (member.state != MemberState.SECONDARY
                || member.partition != null
                || member.paused
                || member.stopReplProducer
                || source == null
                || source == member
                || source.state != MemberState.PRIMARY
                || source.partition != null) {
            return null;
        }
        int mine = member.log.size();
        int theirs = source.log.size();
        int common = Math.min(mine, theirs);
        while (common > 0 && member.log.get(common - 1) != source.log.get(common - 1)) {
            common--;
        }
        if (common == mine && theirs == mine) {
            return null;
        }
        List<OplogEntry> batch = List.copyOf(source.log.subList(common, Math.min(theirs, common + 500)));
        return new Plan(
                common,
                mine,
                common < mine ? List.copyOf(member.log.subList(0, common)) : null,
                List.copyOf(member.log.subList(common, mine)),
                batch,
                member.incarnation);
    }

    private void apply(Member member, Plan plan) {
        member.applyLock.lock();
        try {
            coordinator.lock.lock();
            try {
                if (member.incarnation != plan.incarnation()
                        || member.state != MemberState.SECONDARY
                        || member.log.size() != plan.mine()) {
                    return;
                }
            } finally {
                coordinator.lock.unlock();
            }
            if (plan.prefix() != null) {
                rebuild(member, plan.prefix());
                plan.undone().forEach(entry -> entry.ops().forEach(op -> coordinator.rolledBack.add(op.describe())));
                log.info(
                        "{}: {} rolled back {} oplog entries to its common point with the primary",
                        coordinator.setName,
                        member.node.name(),
                        plan.undone().size());
                coordinator.lock.lock();
                try {
                    member.log.subList(plan.common(), member.log.size()).clear();
                } finally {
                    coordinator.lock.unlock();
                }
            }
            StorageEngine engine = member.node.engine();
            for (OplogEntry entry : plan.batch()) {
                applyEntry(member.node, engine, entry);
            }
            coordinator.lock.lock();
            try {
                if (member.incarnation == plan.incarnation()
                        && member.state == MemberState.SECONDARY
                        && member.log.size() == plan.common()) {
                    member.log.addAll(plan.batch());
                    coordinator.changed.signalAll();
                }
            } finally {
                coordinator.lock.unlock();
            }
        } finally {
            member.applyLock.unlock();
        }
    }

    private static void applyEntry(EmulatedNode node, StorageEngine engine, OplogEntry entry) {
        for (OplogEntry.Op op : entry.ops()) {
            LoggedWrites.apply(engine, op);
        }
        for (OplogEntry.RetryRecord record : entry.records()) {
            NodeInternals.of(node)
                    .applyRetryRecord(
                            record.sessionId(), record.lsid(), record.txnNumber(), record.stmtId(), record.outcome());
        }
    }

    /** Replaces a member's data and retryable-write records with what {@code entries} say, from an empty engine. */
    static void rebuild(Member member, List<OplogEntry> entries) {
        StorageEngine engine = new StorageEngine();
        NodeInternals.of(member.node).clearRetryRecords();
        for (OplogEntry entry : entries) {
            applyEntry(member.node, engine, entry);
        }
        NodeInternals.of(member.node).replaceEngine(engine);
    }
}
