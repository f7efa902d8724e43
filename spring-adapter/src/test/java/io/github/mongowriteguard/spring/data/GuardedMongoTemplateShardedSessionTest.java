package io.github.mongowriteguard.spring.data;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.sharding.ChunkMap;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link GuardedMongoTemplateSessionTest} on an emulated sharded cluster of two shards through mongos: each test
 * database's {@code items} collection is split at {@code _id} "b" ("a" on shard00, the rest on shard01), so the
 * transactions there have two write participants and commit through the emulated mongos' (simplified) two-phase
 * commit (testkit {@code RouterTransactions}). Its {@code @BeforeAll} supersedes the replica set's.
 */
class GuardedMongoTemplateShardedSessionTest extends GuardedMongoTemplateSessionTest {

    private static EmulatedShardedCluster cluster;

    @BeforeAll
    static void start() {
        cluster = EmulatedCluster.sharded().shards(2).start();
        startOn(cluster, cluster.connectionString(), database -> {
            String namespace = database + ".items";
            ShardKey key = cluster.shardCollection(namespace, ShardKey.of(new BsonDocument("_id", new BsonInt32(1))))
                    .key();
            cluster.placeChunks(
                    namespace,
                    ChunkMap.splitAt(key, List.of(new BsonString("b")), List.of("shard00", "shard01"))
                            .chunks());
        });
    }

    /** Runs before the superclass closes the cluster: the transactions reached both shards and committed on both. */
    @AfterAll
    static void theTransactionsHadTwoWriteParticipants() {
        assertThat(cluster.shard(0).truth().commands("commitTransaction")).isNotEmpty();
        assertThat(cluster.shard(1).truth().commands("commitTransaction")).isNotEmpty();
        assertThat(cluster.shard(0).openTransactions() + cluster.shard(1).openTransactions())
                .isZero();
    }
}
