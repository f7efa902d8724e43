package io.github.mongowriteguard.testkit.sharding;

import io.github.mongowriteguard.testkit.internal.Sleeps;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.node.Membership;
import io.github.mongowriteguard.testkit.node.NodeInternals;
import io.github.mongowriteguard.testkit.node.SessionMatch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * mongos' {@code killSessions} fan-out over the network, as mongodb/mongo {@code src/mongo/s/kill_sessions_remote.cpp}
 * ({@code parallelExec}) sends it: {@code killAllSessionsByPattern} to every shard host at once, each request bounded
 * by {@code KillSessionsPerHostTimeoutMS} (default 60,000) and by the command's own deadline; every host that does
 * not answer is a failed host. A member that is down or partitioned (connections closed) fails at once; one behind a
 * black hole fails when the wait ends (or when it heals: the emulated host then closes the connection without an
 * answer, as every black-holed node does). Only reachable members kill anything.
 */
final class KillSessionsRemote {
    /** {@code KillSessionsPerHostTimeoutMS}'s default. */
    static final Duration PER_HOST_TIMEOUT = Duration.ofMillis(60_000);

    private KillSessionsRemote() {}

    /**
     * Kills on every reachable member of {@code sets}.
     *
     * @param leftNanos what is left of the command's deadline ({@link Long#MAX_VALUE} without one)
     * @return the {@code host:port} of every member the kill did not reach
     */
    static List<String> kill(Collection<ShardReplicaSet> sets, List<SessionMatch> patterns, long leftNanos) {
        List<String> failed = new ArrayList<>();
        List<EmulatedNode> blackholed = new ArrayList<>();
        for (ShardReplicaSet set : sets) {
            for (EmulatedNode member : set.members()) {
                switch (reach(member)) {
                    case SERVING -> NodeInternals.of(member).killSessions(patterns);
                    case CLOSED -> failed.add(member.address());
                    case BLACKHOLED -> blackholed.add(member);
                }
            }
        }
        if (!blackholed.isEmpty()) {
            long until = System.nanoTime() + Math.min(PER_HOST_TIMEOUT.toNanos(), leftNanos);
            while (System.nanoTime() - until < 0
                    && blackholed.stream().anyMatch(member -> reach(member) == Membership.Reach.BLACKHOLED)) {
                Sleeps.until(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(10));
                if (Thread.currentThread().isInterrupted()) {
                    break;
                }
            }
            blackholed.forEach(member -> failed.add(member.address()));
        }
        return failed;
    }

    /** How the network treats a shard member now (a member outside a replicating set is always reachable). */
    static Membership.Reach reach(EmulatedNode member) {
        Membership membership = NodeInternals.of(member).membership();
        return membership == null ? Membership.Reach.SERVING : membership.reach();
    }
}
