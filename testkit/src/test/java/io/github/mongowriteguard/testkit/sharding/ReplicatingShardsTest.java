package io.github.mongowriteguard.testkit.sharding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoWriteException;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.node.Membership;
import io.github.mongowriteguard.testkit.replication.MemberState;
import io.github.mongowriteguard.testkit.replication.PartitionMode;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import java.time.Duration;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Shards of 3 replicating members behind mongos: a shard's retryable-write records replicate, so a resend through
 * mongos after the shard's failover gets the recorded result on the new primary; mongos follows the shard's primary
 * as its replica set monitor does ({@code RemoteCommandTargeter::updateHostWithStatus}: a not-primary or network error
 * marks the host failed) and retries a retryable write's child batch on the new primary
 * ({@code src/mongo/s/async_requests_sender.cpp}), while a non-retryable write gets the shard's error.
 */
class ReplicatingShardsTest {
    private static final String NS = "shop.counters";
    private EmulatedShardedCluster cluster;
    private MongoClient client;
    private MongoCollection<Document> counters;
    private ShardReplicaSet shardOfOne;

    @BeforeEach
    void twoShardsOfThreeReplicatingMembers() {
        cluster = EmulatedCluster.sharded()
                .shards(2)
                .nodesPerShard(3)
                .replicatingShards(true)
                .shardElectionTimeout(Duration.ofMillis(300))
                .start();
        ShardKey key = cluster.shardCollection(NS, ShardKey.of(new BsonDocument("_id", new BsonInt32(1))))
                .key();
        cluster.placeChunks(
                NS,
                ChunkMap.splitAt(key, List.of(new BsonInt32(100)), List.of("shard00", "shard01"))
                        .chunks());
        client = Clients.client(cluster.connectionString());
        counters = client.getDatabase("shop").getCollection("counters").withWriteConcern(WriteConcern.MAJORITY);
        counters.insertOne(new Document("_id", 1).append("n", 0));
        shardOfOne = cluster.shardSet("shard00");
    }

    @AfterEach
    void close() {
        client.close();
        cluster.close();
    }

    @Test
    void writesReplicate_toEveryMemberOfTheShard() {
        counters.insertOne(new Document("_id", 150).append("n", 0));
        assertThat(shardOfOne.awaitReplication(Duration.ofSeconds(5))).isTrue();
        for (EmulatedNode member : shardOfOne.members()) {
            assertThat(count(member)).as(member.name()).isEqualTo(1);
        }
        for (EmulatedNode member : cluster.shardSet("shard01").members()) {
            assertThat(cluster.shardSet("shard01").awaitReplication(Duration.ofSeconds(5)))
                    .isTrue();
            assertThat(count(member)).as(member.name()).isEqualTo(1);
        }
    }

    @Test
    void aResendThroughMongos_afterTheShardsFailover_getsTheRecordedResultOnTheNewPrimary() {
        try (ClientSession session = client.startSession()) {
            MongoDatabase shop = client.getDatabase("shop");
            BsonDocument inc = new BsonDocument("update", new BsonString("counters"))
                    .append("updates", new BsonArray(List.of(BsonDocument.parse("{q: {_id: 1}, u: {$inc: {n: 1}}}"))))
                    .append("txnNumber", new BsonInt64(7))
                    .append("writeConcern", new BsonDocument("w", new BsonString("majority")));
            EmulatedNode first = shardOfOne.primary();

            Document once = shop.runCommand(session, inc, ReadPreference.primary());
            shardOfOne.stepDown(Duration.ofSeconds(60), Duration.ofSeconds(5), false);
            EmulatedNode second = shardOfOne.awaitPrimary(Duration.ofSeconds(5));
            Document again = shop.runCommand(session, inc, ReadPreference.primary());

            assertThat(second).isNotNull().isNotSameAs(first);
            assertThat(shardOfOne.state(first)).isEqualTo(MemberState.SECONDARY);
            assertThat(once.get("nModified")).isEqualTo(1);
            assertThat(again.get("nModified")).as("the recorded result").isEqualTo(1);
            assertThat(counters.find().first().getInteger("n")).isEqualTo(1);
            List<ReceivedCommand> updates = second.truth().commands("update");
            assertThat(updates).hasSize(1);
            assertThat(updates.get(0).outcome()).isEqualTo(ReceivedCommand.Outcome.RETRIED_RESULT);
            assertThat(cluster.truth().copies(c -> c.commandName().equals("update")))
                    .hasSize(1);
        }
    }

    @Test
    void aRetryableWrite_toACrashedShardPrimary_isRetriedByMongosOnTheNewPrimary() {
        EmulatedNode first = shardOfOne.primary();
        shardOfOne.stop(first);
        long retriesBefore = cluster.routing().shardRetries();

        counters.insertOne(new Document("_id", 2).append("n", 0));

        EmulatedNode second = shardOfOne.awaitPrimary(Duration.ofSeconds(5));
        assertThat(second).isNotSameAs(first);
        assertThat(cluster.routing().shardRetries())
                .as("the child batch sent again")
                .isGreaterThan(retriesBefore);
        assertThat(count(second)).isEqualTo(2);

        shardOfOne.start(first);
        assertThat(shardOfOne.awaitReplication(Duration.ofSeconds(5))).isTrue();
        assertThat(shardOfOne.state(first)).isEqualTo(MemberState.SECONDARY);
        assertThat(count(first)).as("the restarted member caught up").isEqualTo(2);
    }

    @Test
    void aNonRetryableWrite_toACrashedShardPrimary_getsTheNetworkError_theNextOneTheNewPrimary() {
        EmulatedNode first = shardOfOne.primary();
        shardOfOne.stop(first);
        MongoCollection<Document> noRetries = counters.withWriteConcern(WriteConcern.MAJORITY);

        // updateMany is not a retryable write: mongos sends its child batch once (kNoRetry).
        assertThatThrownBy(() -> noRetries.updateMany(
                        new Document("_id", new Document("$lt", 100)), new Document("$inc", new Document("n", 1))))
                .isInstanceOfAny(MongoWriteException.class, MongoBulkWriteException.class)
                .hasMessageContaining("code=6");

        shardOfOne.awaitPrimary(Duration.ofSeconds(5));
        noRetries.updateMany(new Document("_id", new Document("$lt", 100)), new Document("$inc", new Document("n", 1)));
        assertThat(counters.find(new Document("_id", 1)).first().getInteger("n"))
                .isEqualTo(1);
    }

    @Test
    void aPartitionedShardPrimary_isReplaced_andWritesGoOnThroughMongos() {
        EmulatedNode first = shardOfOne.primary();
        shardOfOne.partition(first, PartitionMode.CLOSE_CONNECTIONS);

        counters.updateOne(new Document("_id", 1), new Document("$inc", new Document("n", 1)));

        assertThat(shardOfOne.awaitPrimary(Duration.ofSeconds(5))).isNotSameAs(first);
        shardOfOne.heal(first);
        assertThat(shardOfOne.awaitReplication(Duration.ofSeconds(5))).isTrue();
        assertThat(counters.find(new Document("_id", 1)).first().getInteger("n"))
                .isEqualTo(1);
        for (EmulatedNode member : shardOfOne.members()) {
            assertThat(count(member)).as(member.name()).isEqualTo(1);
        }
    }

    @Test
    void w1WritesOnlyTheOldShardPrimaryHad_areRolledBack_byAForcedFailover() {
        EmulatedNode first = shardOfOne.primary();
        shardOfOne.secondaries().forEach(s -> shardOfOne.pauseReplication(s, true));
        counters.withWriteConcern(WriteConcern.W1).insertOne(new Document("_id", 3));
        shardOfOne.stepDown(Duration.ofSeconds(60), Duration.ZERO, true);
        shardOfOne.members().forEach(s -> shardOfOne.pauseReplication(s, false));
        EmulatedNode second = shardOfOne.awaitPrimary(Duration.ofSeconds(5));
        assertThat(shardOfOne.awaitReplication(Duration.ofSeconds(5))).isTrue();

        assertThat(second).isNotSameAs(first);
        assertThat(counters.countDocuments(new Document("_id", 3))).isZero();
        assertThat(shardOfOne.rolledBack()).isNotEmpty();
    }

    @Test
    void aMongosCutOffFromTheApplication_closesItsConnections_andTheDriverWritesThroughTheOther() {
        try (EmulatedShardedCluster two =
                        EmulatedCluster.sharded().shards(2).mongos(2).start();
                MongoClient viaBoth = Clients.client(two.connectionString())) {
            MongoCollection<Document> items = viaBoth.getDatabase("shop").getCollection("items");
            items.insertOne(new Document("_id", 1));
            // The driver retries on another mongos only if it already knows one: wait until it has seen both (its
            // monitors connect to each mongos on their own threads; right after the client is built one may be
            // UNKNOWN still, and the retry would go back to the cut-off mongos).
            long until = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
            while (viaBoth.getClusterDescription().getServerDescriptions().stream()
                            .filter(d -> d.isOk())
                            .count()
                    < 2) {
                assertThat(System.nanoTime())
                        .as("the driver saw both mongos within 10 s")
                        .isLessThan(until);
                try {
                    Thread.sleep(10);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            }
            two.mongos(0).cutOff(Membership.Reach.CLOSED);
            try {
                // A write on a pooled connection to the cut-off mongos is retried by the driver on the other one. A
                // write that had to open a new connection to it fails in the handshake, before the driver knows the
                // command, and the driver does not retry that (driver-core CommandOperationHelper
                // .getAttemptFailureNotToRetryOrAddRetryableLabel: no retryable-command flag yet): the application
                // sees it once, then the driver has marked that mongos unknown and selects the other.
                int failed = 0;
                for (int i = 2; i <= 20; i++) {
                    try {
                        items.insertOne(new Document("_id", i));
                    } catch (com.mongodb.MongoSocketException e) {
                        failed++;
                        items.insertOne(new Document("_id", i)); // nothing was sent: the handshake failed
                    }
                }
                assertThat(failed).as("failures the application saw").isLessThanOrEqualTo(1);
                assertThat(two.mongos(0).truth().commands("insert"))
                        .as("nothing reached the cut-off mongos")
                        .hasSizeLessThanOrEqualTo(1);
                assertThat(two.mongos(1).truth().commands("insert")).isNotEmpty();
            } finally {
                two.mongos(0).cutOff(Membership.Reach.SERVING);
            }
            assertThat(items.countDocuments()).isEqualTo(20);
        }
    }

    @Test
    void replicatingShards_needThreeMembers() {
        assertThatThrownBy(() -> EmulatedCluster.sharded()
                        .nodesPerShard(2)
                        .replicatingShards(true)
                        .start())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("nodesPerShard(3)");
    }

    private static long count(EmulatedNode member) {
        BsonDocument reply = member.engine().run("shop", new BsonDocument("count", new BsonString("counters")));
        return reply.get("n", new BsonInt32(0)).asNumber().longValue();
    }
}
