package io.github.mongowriteguard.testkit.sharding;

import java.time.Duration;

import io.github.mongowriteguard.testkit.EmulatedShardedCluster;

/**
 * {@link SecondaryRoutingRefreshTest} (issue 9: secondaries with their own routing metadata, StaleConfig, a stalled
 * primary's {@code config.cache.*} write) on shards that replicate: every case must hold there too.
 */
class SecondaryRoutingRefreshReplicatingTest extends SecondaryRoutingRefreshTest {
    @Override
    EmulatedShardedCluster.Builder shards(EmulatedShardedCluster.Builder builder) {
        return builder.replicatingShards(true).shardElectionTimeout(Duration.ofMillis(300));
    }
}
