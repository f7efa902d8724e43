package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import com.mongodb.client.result.DeleteResult;
import com.mongodb.client.result.UpdateResult;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.sharding.RoutedWrite;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * An updateMany / deleteMany whose filter pins {@code _id} on the wire: a single-document statement ({@code multi}
 * absent, {@code limit: 1}) with a {@code txnNumber}, resent as the same copy after a timeout, and planned in rounds
 * on a sharded cluster; the driver's results.
 */
class PinnedMultiWriteWireTest {

    @Test
    void updateManyAndDeleteManyById_areSentAsSingleDocumentStatements_withATxnNumber_andTheDriversResults() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 3_000)) {
            MongoCollection<Document> raw = fixture.client.getDatabase("p").getCollection("c");
            GuardedCollection<Document> guarded = fixture.wrap(raw);

            UpdateResult upserted =
                    guarded.updateMany(Filters.eq("_id", 5), Updates.set("s", 1), new UpdateOptions().upsert(true));
            UpdateResult updated = guarded.updateMany(new Document("_id", 5).append("s", 1), Updates.inc("n", 1));
            DeleteResult deleted = guarded.deleteMany(Filters.eq("_id", 5));

            assertThat(upserted.getUpsertedId()).isEqualTo(new BsonInt32(5));
            assertThat(updated.getMatchedCount()).isEqualTo(1);
            assertThat(updated.getModifiedCount()).isEqualTo(1);
            assertThat(deleted.getDeletedCount()).isEqualTo(1);
            assertThat(fixture.sent)
                    .hasSize(3)
                    .allSatisfy(command ->
                            assertThat(command).containsKey("txnNumber").containsKey("maxTimeMS"));
            BsonDocument update = fixture.sent.get(0).getArray("updates").get(0).asDocument();
            assertThat(update).doesNotContainKey("multi");
            assertThat(update.getBoolean("upsert").getValue()).isTrue();
            BsonDocument delete = fixture.sent.get(2).getArray("deletes").get(0).asDocument();
            assertThat(delete.getNumber("limit").intValue()).isEqualTo(1);
        }
    }

    @Test
    void deleteManyByIdAfterARetryableError_isResentAsTheSameCopy_andApplied() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 3_000)) {
            MongoCollection<Document> raw = fixture.client.getDatabase("m").getCollection("c");
            raw.insertMany(List.of(new Document("_id", 1), new Document("_id", 2)));
            GuardedCollection<Document> guarded = fixture.wrap(raw);
            fixture.failOnceRetryably("delete");

            DeleteResult result = guarded.deleteMany(Filters.eq("_id", 1));

            assertThat(result.getDeletedCount()).isEqualTo(1);
            assertThat(cluster.truth().commands("delete")).hasSize(2);
            // the resend was the same copy: same lsid and txnNumber
            assertThat(cluster.truth().copies(c -> c.commandName().equals("delete")))
                    .hasSize(1);
            assertThat(raw.countDocuments()).isEqualTo(1);
        }
    }

    @Test
    void orderedUpdateManyUpsertsById_onFiveShards_runInOneRound_withThePlainDriversDocuments() {
        ShardKey hashedId = ShardKey.of(new BsonDocument("_id", new BsonString("hashed")));
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(5).start();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 3_000)) {
            cluster.shardCollection("p.guarded", hashedId);
            cluster.shardCollection("p.plain", hashedId);
            MongoCollection<Document> plain = fixture.client.getDatabase("p").getCollection("plain");
            GuardedCollection<Document> guarded =
                    fixture.wrap(fixture.client.getDatabase("p").getCollection("guarded"));
            List<WriteModel<Document>> models = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                models.add(new UpdateManyModel<>(
                        Filters.eq("_id", i % 250), Updates.inc("n", 1), new UpdateOptions().upsert(true)));
            }
            cluster.routing().reset();

            WriteOutcome<Document> outcome = guarded.execute(models, new BulkWriteOptions().ordered(true));
            plain.bulkWrite(models, new BulkWriteOptions().ordered(true));

            int guardedTrips = cluster.routing().writes("p.guarded").stream()
                    .mapToInt(RoutedWrite::childBatches)
                    .sum();
            int plainTrips = cluster.routing().writes("p.plain").stream()
                    .mapToInt(RoutedWrite::childBatches)
                    .sum();
            assertThat(outcome.isComplete()).isTrue();
            assertThat(outcome.rounds()).isEqualTo(2);
            assertThat(guardedTrips).isLessThanOrEqualTo(10);
            assertThat(plainTrips).isGreaterThan(100);
            assertThat(outcome.upserts()).hasSize(250);
            assertThat(guarded.unwrap().find().sort(new Document("_id", 1)).into(new ArrayList<>()))
                    .isEqualTo(plain.find().sort(new Document("_id", 1)).into(new ArrayList<>()));
        }
    }
}
