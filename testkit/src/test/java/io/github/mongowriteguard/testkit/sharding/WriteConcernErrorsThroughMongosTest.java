package io.github.mongowriteguard.testkit.sharding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.InsertManyOptions;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import java.util.List;
import java.util.stream.IntStream;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * How mongos merges the shards' write-concern errors, mongodb/mongo {@code src/mongo/s/write_ops/batch_write_op.cpp}
 * {@code BatchWriteOp::buildClientResponse}: up to 7.0 one write-concern error keeps its code (" at &lt;shard&gt;" is
 * appended), several become {@code WriteConcernFailed} (64) "multiple errors reported : ... :: and :: ...", and none is
 * reported when an ORDERED bulk has a write error or every write of an UNORDERED one failed ({@code reportWCError});
 * from 7.1 ({@code mergeWriteConcernErrors}, 8.0 here) it is always reported. A retryable write-concern error is
 * retried by mongos itself ({@code src/mongo/s/async_requests_sender.cpp} reads the write-concern status too).
 */
class WriteConcernErrorsThroughMongosTest {
    private static final String WRITE_CONCERN_FAULT =
            "{configureFailPoint: 'failCommand', mode: %s, data: {failCommands:"
                    + " ['insert'], writeConcernError: {code: %d, codeName: '%s', errmsg: 'waiting failed'}, failInternalCommands: true}}";

    @Test
    void writeConcernErrorsFromTwoShards_mergeIntoWriteConcernFailed_notRetryable() {
        try (Fixture f = new Fixture(ServerVersion.V4_4)) {
            f.fault("shard00", "'alwaysOn'", 79, "UnknownReplWriteConcern");
            f.fault("shard01", "'alwaysOn'", 79, "UnknownReplWriteConcern");

            MongoBulkWriteException e = catchThrowableOfType(
                    MongoBulkWriteException.class,
                    () -> f.items.insertMany(documents(), new InsertManyOptions().ordered(false)));

            assertThat(e.getWriteErrors()).isEmpty();
            assertThat(e.getWriteConcernError().getCode()).isEqualTo(64);
            assertThat(e.getWriteConcernError().getMessage())
                    .startsWith("multiple errors reported : ")
                    .contains(" at shard00")
                    .contains(" :: and :: ")
                    .contains(" at shard01");
            assertThat(e.getErrorLabels()).doesNotContain("RetryableWriteError");
            assertThat(f.items.countDocuments()).isEqualTo(8);
        }
    }

    @Test
    void oneShardsWriteConcernError_keepsItsCode_andNamesTheShard() {
        try (Fixture f = new Fixture(ServerVersion.V4_4)) {
            f.fault("shard01", "'alwaysOn'", 79, "UnknownReplWriteConcern");

            MongoBulkWriteException e = catchThrowableOfType(
                    MongoBulkWriteException.class,
                    () -> f.items.insertMany(documents(), new InsertManyOptions().ordered(false)));

            assertThat(e.getWriteConcernError().getCode()).isEqualTo(79);
            assertThat(e.getWriteConcernError().getMessage()).isEqualTo("waiting failed at shard01");
        }
    }

    @Test
    void orderedBulkWithAWriteError_dropsTheWriteConcernError_upTo70_reportsItFrom71() {
        for (ServerVersion version : List.of(ServerVersion.V4_4, ServerVersion.V8_0)) {
            try (Fixture f = new Fixture(version)) {
                f.items.insertOne(new Document("_id", 5));
                f.fault("shard01", "'alwaysOn'", 79, "UnknownReplWriteConcern");

                MongoBulkWriteException e =
                        catchThrowableOfType(MongoBulkWriteException.class, () -> f.items.insertMany(documents()));

                assertThat(e.getWriteErrors())
                        .extracting(BulkWriteError::getIndex)
                        .containsExactly(4);
                if (version == ServerVersion.V4_4) {
                    assertThat(e.getWriteConcernError()).as("4.4 reportWCError").isNull();
                } else {
                    assertThat(e.getWriteConcernError())
                            .as("8.0 mergeWriteConcernErrors")
                            .isNotNull();
                    assertThat(e.getWriteConcernError().getCode()).isEqualTo(79);
                }
            }
        }
    }

    @Test
    void unorderedBulkWhoseEveryWriteFailed_dropsTheWriteConcernError() {
        try (Fixture f = new Fixture(ServerVersion.V4_4)) {
            f.items.insertMany(List.of(new Document("_id", 2), new Document("_id", 3)));
            f.fault("shard01", "'alwaysOn'", 79, "UnknownReplWriteConcern");

            MongoBulkWriteException e = catchThrowableOfType(
                    MongoBulkWriteException.class,
                    () -> f.items.insertMany(
                            List.of(new Document("_id", 2), new Document("_id", 3)),
                            new InsertManyOptions().ordered(false)));

            assertThat(e.getWriteErrors()).hasSize(2);
            assertThat(e.getWriteConcernError()).isNull();
        }
    }

    @Test
    void retryableWriteConcernError_isRetriedByMongos() {
        try (Fixture f = new Fixture(ServerVersion.V4_4)) {
            f.fault("shard01", "{times: 1}", 91, "ShutdownInProgress");

            f.items.insertMany(documents(), new InsertManyOptions().ordered(false));

            assertThat(f.cluster.routing().shardRetries()).isEqualTo(1);
            assertThat(f.items.countDocuments()).isEqualTo(8);
        }
    }

    private static List<Document> documents() {
        return IntStream.rangeClosed(1, 8).mapToObj(i -> new Document("_id", i)).toList();
    }

    /** Three shards with the worked example's placement of {@code _id} 1..8. */
    private static final class Fixture implements AutoCloseable {
        final EmulatedShardedCluster cluster;
        final MongoClient client;
        final MongoCollection<Document> items;

        Fixture(ServerVersion version) {
            cluster = EmulatedCluster.sharded().shards(3).serverVersion(version).start();
            client = Clients.client(cluster.connectionString());
            ShardKey key = cluster.shardCollection("shop.items", ShardKey.of(new BsonDocument("_id", new BsonInt32(1))))
                    .key();
            cluster.placeChunks(
                    "shop.items",
                    ChunkMap.splitAt(
                                    key,
                                    List.of(
                                            new BsonInt32(2),
                                            new BsonInt32(4),
                                            new BsonInt32(5),
                                            new BsonInt32(6),
                                            new BsonInt32(8)),
                                    List.of("shard00", "shard01", "shard02", "shard00", "shard02", "shard01"))
                            .chunks());
            items = client.getDatabase("shop").getCollection("items");
        }

        void fault(String shard, String mode, int code, String codeName) {
            cluster.shard(shard)
                    .failCommand()
                    .configure(BsonDocument.parse(String.format(WRITE_CONCERN_FAULT, mode, code, codeName)));
        }

        @Override
        public void close() {
            client.close();
            cluster.close();
        }
    }
}
