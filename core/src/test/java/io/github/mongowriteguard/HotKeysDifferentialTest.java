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
 * shard), failures inside runs stop their key only and the other keys' runs after the failure are sent again.
 */
class HotKeysDifferentialTest {
    static final int REPLICA_SET_BULKS = 200;
    static final int SHARDED_BULKS = 120;
    private static final long BASE_SEED = 20_261_201_500L;
    private static final ShardKey HASHED_ID = ShardKey.of(new BsonDocument("_id", new BsonString("hashed")));

    private static DifferentialTest.Env replicaSet;
    private static DifferentialTest.Env sharded;

    @AfterAll
    static void closeDeployments() {
        if (replicaSet != null) {
            replicaSet.close();
        }
        if (sharded != null) {
            sharded.close();
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

    @Test
    void unorderedManyHotKeys_equalEachRoundAsADriverUnorderedBulk_onAShardedCluster(TestInfo test) {
        check(sharded(), Mode.UNORDERED, test);
    }

    private static void check(DifferentialTest.Env env, Mode mode, TestInfo test) {
        int bulks = Integer.getInteger("diff.bulks", env.sharded ? SHARDED_BULKS : REPLICA_SET_BULKS);
        long base = Long.getLong("diff.seed", BASE_SEED + (env.sharded ? 1_000_000L : 0) + mode.ordinal() * 100_000L);
        String replay = "-Dtest='HotKeysDifferentialTest#"
                + test.getTestMethod().orElseThrow().getName() + "'";
        DifferentialTest.Stats stats = DifferentialTest.run(
                env,
                mode,
                base,
                bulks,
                DifferentialTest.GUARD,
                replay,
                seed -> DifferentialBulk.generateManyHotKeys(seed, mode));
        System.out.println(stats.summary());
        if (stats.differences > 0) {
            fail(stats.report());
        }
        assertThat(stats.bulks).isEqualTo(bulks);
        if (bulks >= 100) { // the generator still reaches what it is meant to reach
            assertThat(stats.withWriteErrors).as("bulks with write errors").isPositive();
            assertThat(stats.failPointsFired).as("fail points that fired").isPositive();
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
