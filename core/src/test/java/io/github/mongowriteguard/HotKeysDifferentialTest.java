package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.github.mongowriteguard.DifferentialBulk.Mode;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.TestDeployment;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * The differential test ({@link DifferentialTest}: same oracles, same comparison) on bulks with many hot keys
 * ({@link DifferentialBulk#generateManyHotKeys}): in an ordered request the runs of several keys share ORDERED commands
 * (on a replica set one command; on the sharded cluster, whose placement the guard reads from its chunks, grouped by
 * shard), failures inside runs stop their key only and the other keys' runs after the failure are sent again. On 5
 * shards the per-shard ORDERED commands go side by side, each with its own failure loop: failures inside runs on several
 * shards at once, and a retryable error on one shard while the others succeed. (A placement gone stale between planning
 * and sending: {@link SideBySideKeyRunsTest}, against each key's driver ORDERED bulk.)
 *
 * <p>Where the per-shard commands go side by side (ORDERED on a sharded cluster), the bulks carry no fail point on
 * mongos: a {@code times: 1} fail point fails whichever of the round's commands reaches mongos first, and the others,
 * sent beside it, run; no oracle can name which (the outcome says it: {@link SideBySideKeyRunsFaultsTest}).
 */
class HotKeysDifferentialTest {
    static final int REPLICA_SET_BULKS = 200;
    static final int SHARDED_BULKS = 120;
    private static final int SIDE_BY_SIDE_SHARDS = 5;
    private static final long BASE_SEED = 20_261_201_500L;
    private static final ShardKey HASHED_ID = ShardKey.of(new BsonDocument("_id", new BsonString("hashed")));

    private static DifferentialTest.Env replicaSet;
    private static DifferentialTest.Env sharded;
    private static DifferentialTest.Env fiveShards;
    private static EmulatedShardedCluster fiveShardCluster;

    @AfterAll
    static void closeDeployments() {
        if (replicaSet != null) {
            replicaSet.close();
        }
        if (sharded != null) {
            sharded.close();
        }
        if (fiveShards != null) {
            fiveShards.close();
        }
    }

    @Test
    void orderedManyHotKeys_equalEachKeyAsADriverOrderedBulk_onAReplicaSet(TestInfo test) {
        check(replicaSet(), Mode.ORDERED_KEYED, test);
    }

    @Test
    void orderedManyHotKeys_equalEachKeyAsADriverOrderedBulk_onAShardedCluster(TestInfo test) {
        check(sharded(), Mode.ORDERED_KEYED, test);
    }

    /**
     * The sequential path of ordered key runs (one ORDERED command of key runs grouped by shard, as with
     * {@code parallelShardCommands(1)} or a caller's session), with the generator's mongos fail points, which the
     * side-by-side tests cannot use (a {@code times: 1} fail point fails whichever command reaches mongos first).
     */
    @Test
    void orderedManyHotKeys_sequentialKeyRunsWithFailPoints_equalEachKeyAsADriverOrderedBulk_onAShardedCluster(
            TestInfo test) {
        DifferentialTest.Env env = sharded();
        RanCommands ran = new RanCommands();
        try (GuardFixture sequential = new GuardFixture(
                env.connectionString,
                WriteGuardSettings.builder().parallelShardCommands(1).build(),
                5_000,
                b -> b.addCommandListener(ran))) {
            check(env, Mode.ORDERED_KEYED, test, DifferentialTest.guardOf(sequential, ran), false);
        }
    }

    @Test
    void unorderedManyHotKeys_equalEachRoundAsADriverUnorderedBulk_onAShardedCluster(TestInfo test) {
        check(sharded(), Mode.UNORDERED, test);
    }

    @Test
    void orderedManyHotKeys_perShardCommandsSideBySide_equalEachKeyAsADriverOrderedBulk_onFiveShards(TestInfo test) {
        check(fiveShards(), Mode.ORDERED_KEYED, test);
    }

    @Test
    void orderedManyHotKeys_aRetryableErrorOnOneShardWhileTheOthersSucceed_equalTheDriver(TestInfo test) {
        DifferentialTest.Env env = fiveShards();
        int[] turn = {0};
        // Before each guarded bulk, one shard (a different one each time) answers its next update or insert with
        // ShutdownInProgress (91, RetryableWriteError), to mongos too: mongos sends that child batch again.
        DifferentialTest.Subject oneShardFails = (e, bulk, collection, models, api) -> {
            String shard = fiveShardCluster.shardNames().get(turn[0]++ % SIDE_BY_SIDE_SHARDS);
            fiveShardCluster
                    .shard(shard)
                    .failCommand()
                    .configure(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1}, data: {"
                            + "failCommands: ['update', 'insert'], failInternalCommands: true, errorCode: 91,"
                            + " errorLabels: ['RetryableWriteError']}}"));
            try {
                return DifferentialTest.GUARD.run(e, bulk, collection, models, api);
            } finally {
                fiveShardCluster
                        .shard(shard)
                        .failCommand()
                        .configure(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: 'off'}"));
            }
        };
        fiveShardCluster.routing().reset();
        check(env, Mode.ORDERED_KEYED, test, oneShardFails);
        assertThat(fiveShardCluster.routing().shardRetries())
                .as("child batches mongos sent again after the shard's error")
                .isPositive();
    }

    private static void check(DifferentialTest.Env env, Mode mode, TestInfo test) {
        check(env, mode, test, DifferentialTest.GUARD);
    }

    private static void check(DifferentialTest.Env env, Mode mode, TestInfo test, DifferentialTest.Subject subject) {
        check(env, mode, test, subject, env.sharded && mode == Mode.ORDERED_KEYED);
    }

    private static void check(
            DifferentialTest.Env env, Mode mode, TestInfo test, DifferentialTest.Subject subject, boolean sideBySide) {
        int bulks = Integer.getInteger("diff.bulks", env.sharded ? SHARDED_BULKS : REPLICA_SET_BULKS);
        long base = Long.getLong("diff.seed", BASE_SEED + (env.sharded ? 1_000_000L : 0) + mode.ordinal() * 100_000L);
        String replay = "-Dtest='HotKeysDifferentialTest#"
                + test.getTestMethod().orElseThrow().getName() + "'";
        DifferentialTest.Stats stats = DifferentialTest.run(
                env,
                mode,
                base,
                bulks,
                subject,
                replay,
                seed -> sideBySide
                        ? DifferentialBulk.generateManyHotKeys(seed, mode).withoutFailPoint()
                        : DifferentialBulk.generateManyHotKeys(seed, mode));
        System.out.println(stats.summary());
        if (stats.differences > 0) {
            fail(stats.report());
        }
        assertThat(stats.bulks).isEqualTo(bulks);
        if (bulks >= 100) { // the generator still reaches what it is meant to reach
            assertThat(stats.withWriteErrors).as("bulks with write errors").isPositive();
            if (!sideBySide) {
                assertThat(stats.failPointsFired).as("fail points that fired").isPositive();
            }
        }
    }

    private static synchronized DifferentialTest.Env replicaSet() {
        if (replicaSet == null) {
            TestDeployment deployment = TestDeployment.replicaSet();
            replicaSet = new DifferentialTest.Env(
                    "replica set", false, deployment.connectionString(), deployment, namespace -> {});
        }
        return replicaSet;
    }

    private static synchronized DifferentialTest.Env fiveShards() {
        if (fiveShards == null) {
            fiveShardCluster =
                    EmulatedCluster.sharded().shards(SIDE_BY_SIDE_SHARDS).start();
            EmulatedShardedCluster cluster = fiveShardCluster;
            fiveShards = new DifferentialTest.Env(
                    "sharded (5 shards, hashed _id, per-shard commands side by side)",
                    true,
                    cluster.connectionString(),
                    cluster,
                    namespace -> cluster.shardCollection(namespace, HASHED_ID));
        }
        return fiveShards;
    }

    private static synchronized DifferentialTest.Env sharded() {
        if (sharded == null) {
            EmulatedShardedCluster cluster = EmulatedCluster.sharded().shards(3).start();
            sharded = new DifferentialTest.Env(
                    "sharded (3 shards, hashed _id)",
                    true,
                    cluster.connectionString(),
                    cluster,
                    namespace -> cluster.shardCollection(namespace, HASHED_ID));
        }
        return sharded;
    }
}
