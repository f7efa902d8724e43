package io.github.mongowriteguard.testkit.sharding;

import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonInt32;

/** Tests' common placement: a collection ranged on one field, [MinKey, 10) on shard00 and [10, MaxKey) on shard01. */
final class TwoChunks {
    private TwoChunks() {}

    static void splitAt10(EmulatedShardedCluster cluster, String namespace, String field) {
        ShardKey key = cluster.shardCollection(namespace, ShardKey.of(new BsonDocument(field, new BsonInt32(1))))
                .key();
        cluster.placeChunks(
                namespace,
                ChunkMap.splitAt(key, List.of(new BsonInt32(10)), List.of("shard00", "shard01"))
                        .chunks());
    }
}
