package io.github.mongowriteguard.internal.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoNamespace;
import io.github.mongowriteguard.internal.ClientPort;
import io.github.mongowriteguard.internal.plan.KeyPlacement;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import io.github.mongowriteguard.testkit.sharding.ChunkMap;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The catalog the guards of a JVM share: the chunks of a collection read once, then only those changed since the
 * collection version held, as mongos' loader reads them (mongodb/mongo
 * {@code src/mongo/s/config_server_catalog_cache_loader.cpp}, {@code getChangedChunks}: the {@code config.collections}
 * entry, then {@code config.chunks} with {@code lastmod $gte} the version held, in full again when the epoch
 * changed); one {@code hello} per client; bounded. Counted by a test-side command listener on the guard's client.
 */
class ClusterCatalogTest {

    private static final ShardKey HASHED_ID = ShardKey.of(new BsonDocument("_id", new BsonString("hashed")));
    private static final MongoNamespace NAMESPACE = new MongoNamespace("db.c");
    private static final int CHUNKS = 300;

    @ParameterizedTest
    @EnumSource(
            value = ServerVersion.class,
            names = {"V4_4", "V6_0"})
    void afterTheFirstRead_aRefreshReadsOnlyTheChunkAtTheVersionHeld_andAMigrationOnlyTheMovedChunks(
            ServerVersion version) {
        try (EmulatedShardedCluster cluster = EmulatedCluster.sharded()
                        .shards(3)
                        .serverVersion(version)
                        .start();
                ConfigReads reads = new ConfigReads(cluster.connectionString())) {
            placeChunks(cluster, CHUNKS);
            AtomicLong now = new AtomicLong();
            ClusterCatalog catalog = ClusterCatalog.isolated(ClusterCatalog.Limits.DEFAULT, now::get);
            ClientPort access = ClientPort.of(reads.client);

            KeyPlacement first = catalog.placement(access, NAMESPACE, 5_000);
            assertThat(reads.documents("config.chunks")).isEqualTo(CHUNKS);
            assertPlacement(cluster, first);

            reads.clear();
            now.addAndGet(ClusterCatalog.CATALOG_TIME_TO_LIVE.toNanos());
            assertThat(catalog.placement(access, NAMESPACE, 5_000)).isSameAs(first);
            assertThat(reads.commands("find", "config.collections")).isEqualTo(1);
            assertThat(reads.commands("find", "config.chunks")).isEqualTo(1);
            assertThat(reads.documents("config.chunks"))
                    .as("the chunk at the version held")
                    .isEqualTo(1);
            assertThat(reads.commands("hello", "admin")).isZero();

            // a chunk other than the last placed, which holds the version held (moved, it would be the only one read)
            List<io.github.mongowriteguard.testkit.sharding.Chunk> placed =
                    cluster.chunkMap("db.c").chunks();
            int id = 0;
            while (placed.get(placed.size() - 1).contains(pointOf(cluster, id))) {
                id++;
            }
            int movedId = id;
            String from = cluster.chunkMap("db.c").shardOf(pointOf(cluster, movedId));
            String to = cluster.shardNames().stream()
                    .filter(s -> !s.equals(from))
                    .findFirst()
                    .orElseThrow();
            cluster.moveChunk("db.c", new BsonDocument("_id", new BsonInt32(movedId)), to);
            reads.clear();
            now.addAndGet(ClusterCatalog.CATALOG_TIME_TO_LIVE.toNanos());
            KeyPlacement moved = catalog.placement(access, NAMESPACE, 5_000);

            // the chunk at the version held, the moved chunk, and up to 4.4 the donor's control chunk
            assertThat(reads.documents("config.chunks")).isEqualTo(version == ServerVersion.V4_4 ? 3 : 2);
            assertPlacement(cluster, moved);
            assertThat(moved.shardOf(new BsonInt32(movedId))).isEqualTo(shardNumber(cluster, to));
            assertThat(catalog.loads()).containsExactly(1, 2);
            assertThat(catalog.chunksHeld()).isEqualTo(CHUNKS);
        }
    }

    @Test
    void droppedAndRecreated_isReadInFull() {
        try (EmulatedShardedCluster cluster = EmulatedCluster.sharded()
                        .shards(3)
                        .serverVersion(ServerVersion.V6_0)
                        .start();
                ConfigReads reads = new ConfigReads(cluster.connectionString())) {
            placeChunks(cluster, CHUNKS);
            AtomicLong now = new AtomicLong();
            ClusterCatalog catalog = ClusterCatalog.isolated(ClusterCatalog.Limits.DEFAULT, now::get);
            ClientPort access = ClientPort.of(reads.client);
            catalog.placement(access, NAMESPACE, 5_000);

            reads.client.getDatabase("db").getCollection("c").drop();
            placeChunks(cluster, 40);
            reads.clear();
            now.addAndGet(ClusterCatalog.CATALOG_TIME_TO_LIVE.toNanos());
            KeyPlacement recreated = catalog.placement(access, NAMESPACE, 5_000);

            assertThat(reads.documents("config.chunks")).isEqualTo(40);
            assertPlacement(cluster, recreated);
            assertThat(catalog.loads()).containsExactly(2, 0);
            assertThat(catalog.chunksHeld()).isEqualTo(40);
        }
    }

    @Test
    void twoClientsOfOneCluster_shareOneMap_twoClustersWithTheSameNamespace_neverMix() {
        try (EmulatedShardedCluster one = EmulatedCluster.sharded().shards(3).start();
                EmulatedShardedCluster two = EmulatedCluster.sharded().shards(2).start();
                ConfigReads first = new ConfigReads(one.connectionString());
                ConfigReads second = new ConfigReads(one.connectionString());
                ConfigReads other = new ConfigReads(two.connectionString())) {
            placeChunks(one, CHUNKS);
            placeChunks(two, 10);
            ClusterCatalog catalog = ClusterCatalog.isolated(ClusterCatalog.Limits.DEFAULT, System::nanoTime);

            KeyPlacement a = catalog.placement(ClientPort.of(first.client), NAMESPACE, 5_000);
            KeyPlacement b = catalog.placement(ClientPort.of(second.client), NAMESPACE, 5_000);
            KeyPlacement c = catalog.placement(ClientPort.of(other.client), NAMESPACE, 5_000);

            assertThat(b).isSameAs(a);
            assertThat(second.commands("find", "config.chunks")).isZero();
            assertThat(second.commands("find", "config.collections")).isZero();
            assertThat(second.commands("hello", "admin")).isEqualTo(1);
            assertPlacement(two, c);
            assertThat(other.documents("config.chunks")).isEqualTo(10);
            assertThat(catalog.chunksHeld()).isEqualTo(CHUNKS + 10);
        }
    }

    @Test
    void everyFactOfManyCollections_costsOneHelloPerClient() {
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(2).start();
                ConfigReads reads = new ConfigReads(cluster.connectionString())) {
            placeChunks(cluster, 10);
            ClusterCatalog catalog = ClusterCatalog.isolated(ClusterCatalog.Limits.DEFAULT, System::nanoTime);
            ClientPort access = ClientPort.of(reads.client);

            for (String name : List.of("db.c", "db.d", "db.e")) {
                MongoNamespace namespace = new MongoNamespace(name);
                catalog.placement(access, namespace, 5_000);
                catalog.collectionInfo(access, namespace, 5_000);
                catalog.shardedCollection(access, namespace, 5_000);
                catalog.placement(ClientPort.of(reads.client), namespace, 5_000);
            }

            assertThat(reads.commands("hello", "admin")).isEqualTo(1);
            assertThat(reads.commands("find", "config.version")).isEqualTo(1);
            assertThat(reads.commands("find", "config.collections")).isEqualTo(3);
            assertThat(reads.commands("listCollections", "db")).isEqualTo(3);
        }
    }

    @Test
    void moreChunksThanTheBound_isNotKnown_andNotReadAgain_andChunksHeldStayWithinTheirBound() {
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(3).start();
                ConfigReads reads = new ConfigReads(cluster.connectionString())) {
            placeChunks(cluster, 100);
            for (String name : List.of("db.d", "db.e")) {
                cluster.shardCollection(name, HASHED_ID);
                cluster.placeChunks(
                        name,
                        ChunkMap.hashedPresplit(HASHED_ID, cluster.shardNames(), 40)
                                .chunks());
            }
            AtomicLong now = new AtomicLong();
            ClusterCatalog catalog = ClusterCatalog.isolated(new ClusterCatalog.Limits(10, 50, 60), now::get);
            ClientPort access = ClientPort.of(reads.client);

            assertThat(catalog.placement(access, NAMESPACE, 5_000)).isSameAs(KeyPlacement.unknown());
            assertThat(reads.documents("config.chunks"))
                    .as("read up to the bound, and one more")
                    .isEqualTo(51);
            assertThat(catalog.chunksHeld()).isZero();
            reads.clear();
            now.addAndGet(ClusterCatalog.CATALOG_TIME_TO_LIVE.toNanos());
            assertThat(catalog.placement(access, NAMESPACE, 5_000)).isSameAs(KeyPlacement.unknown());
            assertThat(reads.commands("find", "config.chunks")).isZero();

            KeyPlacement d = catalog.placement(access, new MongoNamespace("db.d"), 5_000);
            assertThat(catalog.chunksHeld()).isEqualTo(40);
            KeyPlacement e = catalog.placement(access, new MongoNamespace("db.e"), 5_000);
            assertThat(d.isSingleTarget()).isFalse();
            assertThat(e.shardOf(new BsonInt32(1))).isNotEqualTo(KeyPlacement.UNKNOWN);
            assertThat(catalog.chunksHeld())
                    .as("db.d's chunks made room for db.e's")
                    .isEqualTo(40);
            assertThat(catalog.held())
                    .filteredOn(h -> h.name().equals("catalog.chunks"))
                    .singleElement()
                    .satisfies(h -> assertThat(h.bound()).isEqualTo(60));
        }
    }

    private static void placeChunks(EmulatedShardedCluster cluster, int chunks) {
        cluster.shardCollection("db.c", HASHED_ID);
        cluster.placeChunks(
                "db.c",
                ChunkMap.hashedPresplit(HASHED_ID, cluster.shardNames(), chunks).chunks());
    }

    private static BsonDocument pointOf(EmulatedShardedCluster cluster, int id) {
        return HASHED_ID.pointOf(new BsonDocument("_id", new BsonInt32(id)));
    }

    private static int shardNumber(EmulatedShardedCluster cluster, String shard) {
        return cluster.shardNames().stream().sorted().toList().indexOf(shard);
    }

    /** Every _id from 0 to 499 on the shard the emulator's own routing table says. */
    private static void assertPlacement(EmulatedShardedCluster cluster, KeyPlacement placement) {
        for (int id = 0; id < 500; id++) {
            String shard = cluster.chunkMap("db.c").shardOf(pointOf(cluster, id));
            assertThat(placement.shardOf(new BsonInt32(id)))
                    .as("_id %d on %s", id, shard)
                    .isEqualTo(shardNumber(cluster, shard));
        }
    }
}
