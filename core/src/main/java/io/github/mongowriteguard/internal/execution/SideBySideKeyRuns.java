package io.github.mongowriteguard.internal.execution;

import io.github.mongowriteguard.bulk.Round;
import io.github.mongowriteguard.internal.command.WriteCommand;
import io.github.mongowriteguard.internal.command.WriteCommandEncoder;
import io.github.mongowriteguard.internal.plan.KeyPlacement;
import io.github.mongowriteguard.internal.plan.PlannedBulk;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;

/**
 * Sends a round's ORDERED key runs as one ORDERED command per shard, the shards' commands side by side: one mongos
 * round instead of one per shard.
 *
 * <p>Why: mongos sends an ORDERED command's child batches one after another, a new one at every change of target shard
 * ({@code src/mongo/s/write_ops/batch_write_op.cpp}, {@code isNewBatchRequiredOrdered}; {@code batch_write_exec.cpp}
 * waits for each before it targets the next), so the round's key runs in one ORDERED command cost one mongos round per
 * shard they reach. An UNORDERED command would reach every shard at once, but its child batches carry
 * {@code ordered: false} and the shard goes on after a failing write ({@code src/mongo/db/ops/write_ops_exec.cpp},
 * {@code handleError}): a key's later writes would run after its failure. An ORDERED command whose writes all target
 * one shard is one child batch, and commands of different clients' sessions run on mongos independently: so each
 * shard's key runs go in an ORDERED command of their own, all sent at once.
 *
 * <p>How, per round:
 * <ol>
 *   <li>The runs are grouped by the shard {@link KeyPlacement} gives their {@code _id} (the runs of unknown shard in one
 *       group of their own), in the order of the round's key runs (by command type, then shard).</li>
 *   <li>In waves: the calling thread encodes each group's next command and gives it its transaction number and name
 *       ({@link BulkRun#prepare}) on the group's own session (a transaction number belongs to one session; a session
 *       serves one command at a time); the commands are sent at once, the first on the calling thread, the others on
 *       the guard's threads ({@link SideBySideSends}), each one server copy through {@link CopySender}: its ledger
 *       entry, deadline, same-copy retries and overlap gate as for any command.</li>
 *   <li>When every send of the wave has ended, the calling thread records the outcomes in group order
 *       ({@link OutcomeRecorder}, then the copies each send counted, {@link DeferredTally}), so the outcome does not
 *       depend on which thread finished first. Each group runs the key-run failure loop of its own: the server stopped
 *       at the key's first write that did not apply; the group sends the rest again, without that key's later writes
 *       (SKIPPED), in the next wave.</li>
 * </ol>
 * A command that stops the call (its outcome unknown, or the whole command failed) stops it after its wave: the other
 * groups' commands of that wave were sent beside it and are recorded as they ended; nothing more is sent. A send that
 * threw inside the guard, or that had not ended when the calling thread was interrupted, leaves its statements UNKNOWN
 * (it may have reached the server), never "not applied"; an interrupted call's sessions still in use close when their
 * send ends. A placement gone stale (a chunk moved since it was read) makes a group's command reach two shards: two
 * child batches in sequence in that command, the same result.
 *
 * @param <T> the collection's document class
 */
final class SideBySideKeyRuns<T> implements AutoCloseable {
    private final BulkRun<T> run;
    private final PlannedBulk plan;
    private final KeyPlacement placement;
    /** The sessions of groups after the first (which uses the run's), by group position, kept across rounds. */
    private final List<Sessions> sessions = new ArrayList<>();

    SideBySideKeyRuns(BulkRun<T> run, KeyPlacement placement) {
        this.run = run;
        this.plan = run.plan;
        this.placement = placement;
    }

    /** One shard's key runs in one round: what is left to send. */
    private final class Group {
        final Sessions on;
        List<Integer> pending;
        WriteCommandEncoder<T>.@Nullable Commands commands;

        Group(Sessions on, List<Integer> pending) {
            this.on = on;
            this.pending = pending;
        }

        @Nullable
        WriteCommand next() {
            if (commands == null || !commands.hasNext()) {
                if (pending.isEmpty()) {
                    return null;
                }
                commands = run.commands(pending, true);
                pending = List.of();
            }
            return commands.next();
        }

        void skipRest() {
            pending.forEach(run::skipAfterStop);
            if (commands != null) {
                commands.remaining().forEach(run::skipAfterStop);
            }
            pending = List.of();
            commands = null;
        }
    }

    /**
     * Sends the round's key runs side by side.
     *
     * @return false when they reach fewer than two groups: nothing was sent, send them as one ORDERED command
     */
    boolean send(Round round, List<Integer> keyRuns) {
        List<List<Integer>> byShard = byShard(round, keyRuns);
        if (byShard.size() < 2) {
            return false;
        }
        List<Group> groups = new ArrayList<>(byShard.size());
        for (int i = 0; i < byShard.size(); i++) {
            groups.add(new Group(sessionsOf(i), byShard.get(i)));
        }
        while (true) {
            List<Group> sending = new ArrayList<>(groups.size());
            List<WriteCommand> commands = new ArrayList<>(groups.size());
            List<BulkRun.Prepared> prepareds = new ArrayList<>(groups.size());
            List<DeferredTally> tallies = new ArrayList<>(groups.size());
            List<Supplier<CopySender.Sent>> tasks = new ArrayList<>(groups.size());
            for (Group group : groups) {
                if (run.isStopped()) {
                    group.skipRest();
                    continue;
                }
                WriteCommand command = group.next();
                if (command == null) {
                    continue;
                }
                BulkRun.Prepared prepared = run.prepare(group.on, round, command);
                DeferredTally tally = new DeferredTally();
                Sessions on = group.on;
                tasks.add(run.tools.runtime().observer().propagate(() -> run.send(on, prepared, tally)));
                sending.add(group);
                commands.add(command);
                prepareds.add(prepared);
                tallies.add(tally);
            }
            if (tasks.isEmpty()) {
                return true;
            }
            List<SideBySideSends.Ended<CopySender.Sent>> ended =
                    run.tools.runtime().sideBySide().run(tasks);
            for (int k = 0; k < ended.size(); k++) {
                record(sending.get(k), commands.get(k), prepareds.get(k), ended.get(k), tallies.get(k));
            }
        }
    }

    private void record(
            Group group,
            WriteCommand command,
            BulkRun.Prepared prepared,
            SideBySideSends.Ended<CopySender.Sent> ended,
            DeferredTally tally) {
        if (ended.stillRunning() != null) {
            // The worker still writes its tally and uses its session: neither is touched here; the session closes
            // when the send ends.
            int own = sessions.indexOf(group.on);
            if (own >= 0) {
                sessions.set(own, null);
            }
            ended.stillRunning().whenComplete((sent, error) -> group.on.close());
            unknown(
                    command,
                    "the calling thread was interrupted while the guard's thread was sending this command beside"
                            + " others: it may have reached the server and been applied");
            return;
        }
        tally.replayInto(run.tally);
        if (ended.failure() != null) {
            unknown(
                    command,
                    "sending this command on the guard's thread failed ("
                            + ended.failure().getClass().getSimpleName()
                            + ") after it may have reached the server: it may have been applied");
            return;
        }
        CopySender.Sent sent = java.util.Objects.requireNonNull(ended.value(), "a send ended with nothing");
        if (run.record(group.on, prepared, command, sent)) {
            List<Integer> resend = run.resendAfterFailure(command, group.commands);
            if (resend != null) {
                group.pending = resend;
                group.commands = null;
            }
        }
    }

    private void unknown(WriteCommand command, String reason) {
        run.stop(command.index(0), run.recorder.unknown(command, reason));
    }

    /**
     * The round's key runs grouped by the shard of their {@code _id}, each run whole and in order, groups in the order
     * their first run appears; the runs of unknown shard form one group.
     */
    private List<List<Integer>> byShard(Round round, List<Integer> keyRuns) {
        Map<Integer, List<Integer>> groups = new LinkedHashMap<>();
        List<Integer> current = null;
        for (int index : keyRuns) {
            int previous = plan.previousOnKey(index);
            // A key has one run per round: a write whose previous write is in this round continues that run.
            if (current == null || previous < 0 || plan.roundOf(previous) != round.number()) {
                BsonValue id = plan.id(index).orElse(null);
                int shard = id == null ? KeyPlacement.UNKNOWN : placement.shardOf(id);
                current = groups.computeIfAbsent(shard, s -> new ArrayList<>());
            }
            current.add(index);
        }
        return new ArrayList<>(groups.values());
    }

    /** Group 0 sends on the run's sessions (always on the calling thread); the others on sessions of their own. */
    private Sessions sessionsOf(int group) {
        if (group == 0) {
            return run.sessions;
        }
        while (sessions.size() < group) {
            sessions.add(null);
        }
        Sessions own = sessions.get(group - 1);
        if (own == null) {
            // With the caller's statement ids, every group's session carries the caller's id: mongos does not check
            // a retryable write's session out (src/mongo/s/commands/strategy.cpp: only with autocommit), and each
            // shard checks out its own, so the groups (one per shard) still run side by side.
            own = run.call.statementIds() != null
                    ? Sessions.chosen(run.tools.access(), run.call.statementIds())
                    : Sessions.own(run.tools.access());
            sessions.set(group - 1, own);
        }
        return own;
    }

    /** Closes the groups' sessions that no send still uses. */
    @Override
    public void close() {
        for (Sessions own : sessions) {
            if (own != null) {
                own.close();
            }
        }
    }
}
