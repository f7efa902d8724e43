package io.github.mongowriteguard.testkit.sharding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.replication.PartitionMode;
import java.time.Duration;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * {@code killSessions} and {@code currentOp} through mongos reach the shard members over the network, not by a call
 * past it: a member mongos cannot reach fails the kill with {@code HostUnreachable} and {@code failedHosts}
 * (mongodb/mongo {@code src/mongo/s/kill_sessions_remote.cpp} {@code parallelExec}, per host
 * {@code KillSessionsPerHostTimeoutMS}; {@code src/mongo/db/session/kill_sessions_common.cpp}
 * {@code killSessionsCmdHelper}); a shard whose primary cannot be found or reached fails {@code currentOp}, as mongos'
 * targeting of the shards' primaries does.
 */
class MongosIntrospectionReachTest {

    private static EmulatedShardedCluster replicatingShards() {
        return EmulatedCluster.sharded()
                .shards(2)
                .nodesPerShard(3)
                .replicatingShards(true)
                .shardElectionTimeout(Duration.ofMillis(300))
                .start();
    }

    @Test
    void killSessions_withAShardMemberDown_failsWithHostUnreachableNamingIt() {
        try (EmulatedShardedCluster cluster = replicatingShards();
                MongoClient client = Clients.client(cluster.connectionString())) {
            ShardReplicaSet shard = cluster.shardSet(0);
            EmulatedNode down = shard.secondary(0);
            shard.stop(down);

            MongoCommandException e = catchThrowableOfType(
                    MongoCommandException.class,
                    () -> client.getDatabase("admin").runCommand(new Document("killSessions", List.of())));

            assertThat(e).isNotNull();
            assertThat(e.getErrorCode()).isEqualTo(6);
            assertThat(e.getResponse().getArray("failedHosts"))
                    .extracting(host -> host.asString().getValue())
                    .containsExactly(down.address());
        }
    }

    @Test
    void killSessions_withEveryMemberReachable_succeeds() {
        try (EmulatedShardedCluster cluster = replicatingShards();
                MongoClient client = Clients.client(cluster.connectionString())) {
            Document reply = client.getDatabase("admin").runCommand(new Document("killSessions", List.of()));

            assertThat(reply.get("ok", Number.class).intValue()).isEqualTo(1);
        }
    }

    @Test
    void currentOp_withAShardWithoutAPrimary_fails_insteadOfSkippingTheShard() {
        try (EmulatedShardedCluster cluster = replicatingShards();
                MongoClient client = Clients.client(cluster.connectionString())) {
            ShardReplicaSet shard = cluster.shardSet(1);
            shard.secondaries().forEach(shard::stop);
            shard.stepDown(Duration.ofSeconds(60), Duration.ZERO, true);

            MongoException e = catchThrowableOfType(
                    MongoException.class,
                    () -> client.getDatabase("admin")
                            .runCommand(new Document("currentOp", 1).append("maxTimeMS", 300)));

            assertThat(e).isNotNull();
            assertThat(e.getCode()).isIn(50, 133);
        }
    }

    @Test
    void currentOp_withTheShardPrimaryCutOff_failsWithHostUnreachable() {
        try (EmulatedShardedCluster cluster = replicatingShards();
                MongoClient client = Clients.client(cluster.connectionString())) {
            client.getDatabase("admin").runCommand(new Document("currentOp", 1));
            ShardReplicaSet shard = cluster.shardSet(0);
            shard.partition(shard.primary(), PartitionMode.CLOSE_CONNECTIONS);

            MongoCommandException e = catchThrowableOfType(
                    MongoCommandException.class,
                    () -> client.getDatabase("admin").runCommand(new Document("currentOp", 1)));

            assertThat(e).isNotNull();
            assertThat(e.getErrorCode()).isEqualTo(6);
        }
    }
}
