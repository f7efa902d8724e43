package io.github.mongowriteguard.faults;

import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.replication.MemberState;
import io.github.mongowriteguard.testkit.replication.PartitionMode;
import io.github.mongowriteguard.testkit.sharding.ShardReplicaSet;
import java.time.Duration;
import java.util.List;
import java.util.Random;

/**
 * Failover, restarts and partitions of one replicating replica set: the replica set deployment's, or one shard of the
 * sharded cluster. The same nemesis moves for both, through {@link Members}.
 */
final class SetFaults {
    private SetFaults() {}

    /** What the nemesis does to a replicating set's members. */
    interface Members {
        /** The primary now, or null while there is none. */
        EmulatedNode primaryNow();

        List<EmulatedNode> members();

        List<EmulatedNode> secondaries();

        MemberState state(EmulatedNode member);

        void pauseReplication(EmulatedNode member, boolean paused);

        void stop(EmulatedNode member);

        void start(EmulatedNode member);

        void stepDown(Duration stepDownPeriod, Duration catchUpPeriod, boolean force);

        void partition(EmulatedNode member, PartitionMode mode);

        void heal(EmulatedNode member);

        /** Waits for a primary; false after the timeout. */
        boolean awaitPrimary(Duration timeout);

        boolean awaitReplication(Duration timeout);
    }

    static Members of(EmulatedReplicaSet set) {
        return new Members() {
            @Override
            public EmulatedNode primaryNow() {
                try {
                    return set.primary();
                } catch (IllegalStateException noPrimary) {
                    return null;
                }
            }

            @Override
            public List<EmulatedNode> members() {
                return set.members();
            }

            @Override
            public List<EmulatedNode> secondaries() {
                return set.secondaries();
            }

            @Override
            public MemberState state(EmulatedNode member) {
                return set.state(member);
            }

            @Override
            public void pauseReplication(EmulatedNode member, boolean paused) {
                if (paused) {
                    set.pauseReplication(member);
                } else {
                    set.resumeReplication(member);
                }
            }

            @Override
            public void stop(EmulatedNode member) {
                set.stop(member);
            }

            @Override
            public void start(EmulatedNode member) {
                set.start(member);
            }

            @Override
            public void stepDown(Duration stepDownPeriod, Duration catchUpPeriod, boolean force) {
                set.stepDown(stepDownPeriod, catchUpPeriod, force);
            }

            @Override
            public void partition(EmulatedNode member, PartitionMode mode) {
                set.partition(member, mode);
            }

            @Override
            public void heal(EmulatedNode member) {
                set.heal(member);
            }

            @Override
            public boolean awaitPrimary(Duration timeout) {
                try {
                    set.awaitPrimary(timeout);
                    return true;
                } catch (IllegalStateException none) {
                    return false;
                }
            }

            @Override
            public boolean awaitReplication(Duration timeout) {
                return set.awaitReplication(timeout);
            }
        };
    }

    static Members of(ShardReplicaSet shard) {
        return new Members() {
            @Override
            public EmulatedNode primaryNow() {
                return shard.awaitPrimary(Duration.ZERO);
            }

            @Override
            public List<EmulatedNode> members() {
                return shard.members();
            }

            @Override
            public List<EmulatedNode> secondaries() {
                return shard.secondaries();
            }

            @Override
            public MemberState state(EmulatedNode member) {
                return shard.state(member);
            }

            @Override
            public void pauseReplication(EmulatedNode member, boolean paused) {
                shard.pauseReplication(member, paused);
            }

            @Override
            public void stop(EmulatedNode member) {
                shard.stop(member);
            }

            @Override
            public void start(EmulatedNode member) {
                shard.start(member);
            }

            @Override
            public void stepDown(Duration stepDownPeriod, Duration catchUpPeriod, boolean force) {
                shard.stepDown(stepDownPeriod, catchUpPeriod, force);
            }

            @Override
            public void partition(EmulatedNode member, PartitionMode mode) {
                shard.partition(member, mode);
            }

            @Override
            public void heal(EmulatedNode member) {
                shard.heal(member);
            }

            @Override
            public boolean awaitPrimary(Duration timeout) {
                return shard.awaitPrimary(timeout) != null;
            }

            @Override
            public boolean awaitReplication(Duration timeout) {
                return shard.awaitReplication(timeout);
            }
        };
    }

    /**
     * Injects {@link Fault#FAILOVER}, {@link Fault#RESTART} or {@link Fault#PARTITION} on {@code set}.
     *
     * @return what heals it (a no-op when it could not be injected, e.g. while there is no primary)
     */
    static Runnable inject(Fault fault, Random random, Members set) {
        EmulatedNode primary = set.primaryNow();
        List<EmulatedNode> members = set.members();
        switch (fault) {
            case FAILOVER: {
                if (primary == null) {
                    return () -> {};
                }
                // Half the time the secondaries lag first, so that writes the primary alone has (waiting for a
                // majority)
                // are rolled back by the failover.
                List<EmulatedNode> lagging = random.nextBoolean() ? set.secondaries() : List.of();
                lagging.forEach(m -> set.pauseReplication(m, true));
                pause(lagging.isEmpty() ? 0 : 100 + random.nextInt(300));
                Runnable heal = () -> lagging.forEach(m -> set.pauseReplication(m, false));
                if (random.nextInt(3) == 0) {
                    set.stop(primary);
                    return () -> {
                        heal.run();
                        set.start(primary);
                    };
                }
                try {
                    set.stepDown(
                            Duration.ofSeconds(1),
                            lagging.isEmpty() ? Duration.ofMillis(500) : Duration.ZERO,
                            !lagging.isEmpty() || random.nextBoolean());
                } catch (IllegalStateException failed) {
                    // No secondary caught up in time: the primary stays, as on mongod.
                }
                return heal;
            }
            case RESTART: {
                EmulatedNode member = members.get(random.nextInt(members.size()));
                if (set.state(member) == MemberState.DOWN) {
                    return () -> {};
                }
                set.stop(member);
                return () -> set.start(member);
            }
            case PARTITION: {
                EmulatedNode member =
                        primary != null && random.nextBoolean() ? primary : members.get(random.nextInt(members.size()));
                set.partition(
                        member, random.nextBoolean() ? PartitionMode.CLOSE_CONNECTIONS : PartitionMode.BLACK_HOLE);
                return () -> set.heal(member);
            }
            default:
                throw new IllegalArgumentException(fault + " is not a replica set fault");
        }
    }

    /** Starts stopped members, heals partitions, resumes replication and clears every member's fail points. */
    static void healAll(Members set) {
        for (EmulatedNode member : set.members()) {
            if (set.state(member) == MemberState.DOWN) {
                set.start(member);
            }
            set.heal(member);
            set.pauseReplication(member, false);
            NodeFaults.clear(member);
        }
    }

    private static void pause(int millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
