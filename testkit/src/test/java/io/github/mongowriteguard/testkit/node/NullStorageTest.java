package io.github.mongowriteguard.testkit.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoException;
import com.mongodb.MongoWriteConcernException;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.bulk.BulkWriteUpsert;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.server.Storage;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.bson.BsonInt32;
import org.bson.BsonValue;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** {@link Storage#NONE}: writes answered by count through the same front end, sessions and fail points; nothing stored. */
class NullStorageTest {

    @Test
    void bulkWrite_isAnsweredByCount_andNothingIsStored() {
        long seed = System.nanoTime();
        System.out.println("NullStorageTest seed " + seed);
        Random random = new Random(seed);
        int inserts = 1 + random.nextInt(50);
        int upserts = 1 + random.nextInt(50);
        try (EmulatedReplicaSet cluster =
                        EmulatedCluster.replicaSet().storage(Storage.NONE).start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            MongoCollection<Document> c = client.getDatabase("none").getCollection("c");
            List<WriteModel<Document>> models = new ArrayList<>();
            for (int i = 0; i < inserts; i++) {
                models.add(new InsertOneModel<>(new Document("_id", "i" + i)));
            }
            for (int i = 0; i < upserts; i++) {
                models.add(new ReplaceOneModel<>(
                        Filters.eq("_id", "r" + i),
                        new Document("_id", "r" + i).append("v", i),
                        new ReplaceOptions().upsert(true)));
            }
            models.add(new UpdateOneModel<>(
                    Filters.eq("_id", "f"), Updates.set("v", 1), new UpdateOptions().upsert(true)));
            models.add(new UpdateOneModel<>(Filters.eq("_id", "plain"), Updates.set("v", 1)));
            models.add(new DeleteManyModel<>(Filters.gt("v", 0)));

            BulkWriteResult result = c.bulkWrite(models, new BulkWriteOptions().ordered(random.nextBoolean()));

            assertThat(result.getInsertedCount()).isEqualTo(inserts);
            assertThat(result.getMatchedCount()).isEqualTo(1);
            assertThat(result.getModifiedCount()).isEqualTo(1);
            assertThat(result.getDeletedCount()).isEqualTo(1);
            List<BsonValue> expectedIds = new ArrayList<>();
            for (int i = 0; i < upserts; i++) {
                expectedIds.add(new org.bson.BsonString("r" + i));
            }
            expectedIds.add(new org.bson.BsonString("f"));
            assertThat(result.getUpserts()).extracting(BulkWriteUpsert::getId).containsExactlyElementsOf(expectedIds);
            assertThat(result.getUpserts())
                    .extracting(BulkWriteUpsert::getIndex)
                    .containsExactlyElementsOf(java.util.stream.IntStream.range(inserts, inserts + upserts + 1)
                            .boxed()
                            .toList());
            assertThat(c.countDocuments()).isZero();
            assertThat(cluster.truth().documentsApplied(r -> true)).isEqualTo(inserts + upserts + 1 + 1 + 1);
        }
    }

    @Test
    void sameTxnNumberTwice_replaysTheRecordedResult() {
        try (EmulatedReplicaSet cluster =
                        EmulatedCluster.replicaSet().storage(Storage.NONE).start();
                MongoClient client = Clients.client(cluster.connectionString());
                ClientSession session = client.startSession()) {
            MongoDatabase db = client.getDatabase("none");
            // No _id in the filter or the replacement: a run generates a new ObjectId, a replay reports the recorded
            // one.
            Document update = Document.parse("{update: 'c', updates: [{q: {v: 1}, u: {v: 2}, upsert: true},"
                    + " {q: {v: 3}, u: {$set: {v: 4}}}], txnNumber: NumberLong(300)}");

            Document first = db.runCommand(session, update);
            Document second = db.runCommand(session, update);

            assertThat(first.getInteger("n")).isEqualTo(2);
            assertThat(first.getInteger("nModified")).isEqualTo(1);
            assertThat(second).isEqualTo(first);
            assertThat(cluster.truth().commands("update"))
                    .extracting(ReceivedCommand::outcome)
                    .containsExactly(ReceivedCommand.Outcome.OK, ReceivedCommand.Outcome.RETRIED_RESULT);
            Document third = db.runCommand(session, update.append("txnNumber", 301L));
            assertThat(third.getList("upserted", Document.class).get(0).get("_id"))
                    .isNotEqualTo(
                            first.getList("upserted", Document.class).get(0).get("_id"));
        }
    }

    @Test
    void failCommand_failsWritesAsWithStorage() {
        try (EmulatedReplicaSet cluster =
                        EmulatedCluster.replicaSet().storage(Storage.NONE).start();
                MongoClient client = Clients.client(cluster.connectionString(), b -> b.retryWrites(false))) {
            MongoCollection<Document> c = client.getDatabase("none").getCollection("c");
            client.getDatabase("admin")
                    .runCommand(new Document("configureFailPoint", "failCommand")
                            .append("mode", new Document("times", 1))
                            .append("data", new Document("failCommands", List.of("insert")).append("errorCode", 2)));
            assertThatThrownBy(() -> c.insertOne(new Document("_id", 1)))
                    .isInstanceOfSatisfying(
                            MongoException.class, e -> assertThat(e.getCode()).isEqualTo(2));

            client.getDatabase("admin")
                    .runCommand(new Document("configureFailPoint", "failCommand")
                            .append("mode", new Document("times", 1))
                            .append(
                                    "data",
                                    new Document("failCommands", List.of("update"))
                                            .append(
                                                    "writeConcernError",
                                                    new Document("code", 64)
                                                            .append("errmsg", "waiting for replication timed out"))));
            assertThatThrownBy(() -> c.replaceOne(
                            Filters.eq("_id", 1), new Document("_id", 1), new ReplaceOptions().upsert(true)))
                    .isInstanceOfSatisfying(MongoWriteConcernException.class, e -> {
                        assertThat(e.getCode()).isEqualTo(64);
                        assertThat(e.getWriteResult().getUpsertedId()).isEqualTo(new BsonInt32(1));
                    });
            assertThat(c.insertOne(new Document("_id", 1)).wasAcknowledged()).isTrue();
            assertThat(cluster.truth().commands("insert"))
                    .extracting(ReceivedCommand::outcome)
                    .containsExactly(ReceivedCommand.Outcome.ERROR, ReceivedCommand.Outcome.OK);
        }
    }

    @Test
    void severalMembers_areRefused() {
        assertThatThrownBy(() -> EmulatedCluster.replicaSet()
                        .members(3)
                        .storage(Storage.NONE)
                        .start())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("storage (NONE)");
    }
}
