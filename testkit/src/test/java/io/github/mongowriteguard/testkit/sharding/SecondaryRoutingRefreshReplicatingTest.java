package io.github.mongowriteguard.testkit.sharding;

import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import java.time.Duration;

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
