package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoWriteException;
import com.mongodb.WriteConcern;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import com.mongodb.client.result.InsertManyResult;
import io.github.mongowriteguard.exception.GuardedBulkWriteException;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.testkit.TestDeployment;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonString;
import org.bson.Document;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The guarded collection on a replica set, through the real driver. */
@org.junit.jupiter.api.Tag("deployment") // runs against -Dmongo.uri (the real-mongodb profile)
class GuardedCollectionTest {
    private TestDeployment deployment;
    private GuardFixture fixture;
    private MongoCollection<Document> raw;
    private GuardedCollection<Document> guarded;

    @BeforeEach
    void start() {
        deployment = TestDeployment.replicaSet();
        fixture = new GuardFixture(deployment.connectionString(), 3_000);
        raw = fixture.client.getDatabase("guard").getCollection("inventory");
        raw.drop();
        guarded = fixture.wrap(raw);
    }

    @AfterEach
    void stop() {
        fixture.close();
        deployment.close();
    }

    @Test
    void orderedBulkOfDistinctKeys_runsAsOneUnorderedRound() {
        List<WriteModel<Document>> models = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            models.add(new ReplaceOneModel<>(
                    Filters.eq("_id", i), new Document("_id", i).append("qty", i), new ReplaceOptions().upsert(true)));
        }

        BulkWriteResult result = guarded.bulkWrite(models, new BulkWriteOptions().ordered(true));

        assertThat(result.getUpserts()).hasSize(50);
        assertThat(raw.countDocuments()).isEqualTo(50);
        assertThat(fixture.sent).singleElement().satisfies(update -> {
            assertThat(update.getBoolean("ordered").getValue()).isFalse();
            assertThat(update.getArray("updates")).hasSize(50);
        });
    }

    @Test
    void repeatedKeys_keepTheirOrderInOneCommand_andEndAsTheDriversOrderedRunWould() {
        raw.insertOne(new Document("_id", 1).append("qty", 0));
        List<WriteModel<Document>> models = List.of(
                new UpdateOneModel<>(Filters.eq("_id", 1), Updates.inc("qty", 5)),
                new UpdateOneModel<>(
                        Filters.eq("_id", 2),
                        Updates.set("qty", 1),
                        new com.mongodb.client.model.UpdateOptions().upsert(true)),
                new UpdateOneModel<>(Filters.eq("_id", 1), Updates.mul("qty", 3)),
                new UpdateOneModel<>(Filters.eq("_id", 1), Updates.inc("qty", 1)));

        WriteOutcome<Document> outcome = guarded.execute(models, new BulkWriteOptions().ordered(true));

        // _id 1's three updates travel as one ORDERED key run; _id 2's one write in the round's UNORDERED command.
        assertThat(outcome.rounds()).isEqualTo(1);
        assertThat(outcome.commands()).isEqualTo(2);
        assertThat(outcome.isComplete()).isTrue();
        assertThat(raw.find(Filters.eq("_id", 1)).first().getInteger("qty")).isEqualTo(16);
        assertThat(raw.find(Filters.eq("_id", 2)).first().getInteger("qty")).isEqualTo(1);
    }

    @Test
    void insertThenReplaceUpsertOfTheSameKey_bothAreSentInOrder() {
        List<WriteModel<Document>> models = List.of(
                new InsertOneModel<>(new Document("_id", 7).append("v", "first")),
                new ReplaceOneModel<>(
                        Filters.eq("_id", 7),
                        new Document("_id", 7).append("v", "last"),
                        new ReplaceOptions().upsert(true)));

        WriteOutcome<Document> outcome = guarded.execute(models, new BulkWriteOptions().ordered(true));

        assertThat(outcome.outcome(0).status()).isEqualTo(WriteStatus.APPLIED);
        assertThat(outcome.outcome(1).status()).isEqualTo(WriteStatus.APPLIED);
        assertThat(outcome.rounds()).isEqualTo(2);
        assertThat(fixture.sent).anyMatch(c -> c.containsKey("insert"));
        assertThat(raw.find().into(new ArrayList<>())).containsExactly(new Document("_id", 7).append("v", "last"));
    }

    @Test
    void unkeyedWriteInAnOrderedBulk_keepsTheCallersOrderInOneOrderedRound() {
        List<WriteModel<Document>> models = List.of(
                new InsertOneModel<>(new Document("_id", 1).append("s", "new")),
                new UpdateManyModel<>(Filters.eq("s", "new"), Updates.set("s", "seen")),
                new InsertOneModel<>(new Document("_id", 2).append("s", "new")));

        WriteOutcome<Document> outcome = guarded.execute(models, new BulkWriteOptions().ordered(true));

        assertThat(outcome.rounds()).isEqualTo(1);
        assertThat(outcome.isComplete()).isTrue();
        assertThat(fixture.sent)
                .allSatisfy(c -> assertThat(c.getBoolean("ordered").getValue()).isTrue());
        assertThat(raw.find(Filters.eq("_id", 1)).first().getString("s")).isEqualTo("seen");
        assertThat(raw.find(Filters.eq("_id", 2)).first().getString("s")).isEqualTo("new");
    }

    @Test
    void orderedBulkWithAnUnkeyedWrite_andTwoWritesOnOneKey_runsAsOneOrderedRound() {
        // Found by BulkEquivalenceTest: the executor read the outcome of the key's previous write, which in a single
        // ORDERED round has not run yet (NullPointerException).
        List<WriteModel<Document>> models = List.of(
                new InsertOneModel<>(new Document("_id", 1).append("s", "new")),
                new UpdateManyModel<>(Filters.eq("s", "new"), Updates.set("s", "seen")),
                new UpdateOneModel<>(Filters.eq("_id", 1), Updates.set("t", 1)));

        WriteOutcome<Document> outcome = guarded.execute(models, new BulkWriteOptions().ordered(true));

        assertThat(outcome.rounds()).isEqualTo(1);
        assertThat(outcome.isComplete()).isTrue();
        assertThat(raw.find(Filters.eq("_id", 1)).first())
                .isEqualTo(new Document("_id", 1).append("s", "seen").append("t", 1));
    }

    @Test
    void everyWriteCommand_carriesMaxTimeMsBelowTheSocketTimeout_andRetryableOnesATxnNumber() {
        guarded.insertOne(new Document("v", 1));
        guarded.updateOne(Filters.eq("v", 1), Updates.set("w", 2));
        guarded.updateMany(Filters.eq("v", 1), Updates.set("w", 3));
        guarded.deleteOne(Filters.eq("v", 1));

        assertThat(fixture.sent).hasSize(4).allSatisfy(command -> {
            assertThat(command.getNumber("maxTimeMS").longValue()).isPositive().isLessThan(3_000);
            assertThat(command).containsKey("lsid");
        });
        assertThat(fixture.sent).filteredOn(c -> c.containsKey("txnNumber")).hasSize(3);
        assertThat(fixture.sent.get(2)).doesNotContainKey("txnNumber");
        assertThat(guarded.serverDeadlineMillis()).isEqualTo(2_000);
    }

    @Test
    void insertWithoutId_getsItsIdBeforeTheFirstSend() {
        Document document = new Document("v", 1);

        guarded.insertOne(document);

        assertThat(document.get("_id")).isInstanceOf(ObjectId.class);
        assertThat(fixture.sent
                        .get(0)
                        .getArray("documents")
                        .get(0)
                        .asDocument()
                        .get("_id")
                        .asObjectId()
                        .getValue())
                .isEqualTo(document.getObjectId("_id"));
    }

    @Test
    void duplicateKeyInTheMiddleOfAnOrderedBulk_onlyThatKeysLaterWritesAreSkipped() {
        raw.insertOne(new Document("_id", 2));
        List<WriteModel<Document>> models = List.of(
                new InsertOneModel<>(new Document("_id", 1)),
                new InsertOneModel<>(new Document("_id", 2)),
                new UpdateOneModel<>(Filters.eq("_id", 2), Updates.set("after", true)),
                new InsertOneModel<>(new Document("_id", 3)));

        assertThatThrownBy(() -> guarded.bulkWrite(models, new BulkWriteOptions().ordered(true)))
                .isInstanceOfSatisfying(GuardedBulkWriteException.class, e -> {
                    assertThat(e.getWriteErrors()).singleElement().satisfies(error -> {
                        assertThat(error.getIndex()).isEqualTo(1);
                        assertThat(error.getCode()).isEqualTo(11000);
                    });
                    WriteOutcome<?> outcome = e.outcome();
                    assertThat(outcome.outcome(2).status()).isEqualTo(WriteStatus.SKIPPED);
                    assertThat(outcome.outcome(2).relatedIndex()).isEqualTo(1);
                    assertThat(outcome.outcome(3).status()).isEqualTo(WriteStatus.APPLIED);
                    assertThat(outcome.notApplied()).hasSize(2);
                });
        assertThat(raw.countDocuments()).isEqualTo(3);
        assertThat(raw.find(Filters.eq("_id", 2)).first()).doesNotContainKey("after");
    }

    @Test
    void insertManyUnordered_goesOnAfterADuplicate_inOneUnorderedCommand() {
        raw.insertOne(new Document("_id", 2));
        fixture.sent.clear();

        assertThatThrownBy(() -> guarded.insertMany(
                        List.of(new Document("_id", 1), new Document("_id", 2), new Document("_id", 3)),
                        new InsertManyOptions().ordered(false)))
                .isInstanceOfSatisfying(GuardedBulkWriteException.class, e -> {
                    assertThat(e.getWriteErrors()).singleElement().satisfies(error -> {
                        assertThat(error.getIndex()).isEqualTo(1);
                        assertThat(error.getCode()).isEqualTo(11000);
                    });
                    assertThat(e.outcome().outcome(2).status()).isEqualTo(WriteStatus.APPLIED);
                });
        assertThat(raw.countDocuments()).isEqualTo(3);
        assertThat(fixture.sent).singleElement().satisfies(insert -> {
            assertThat(insert.getBoolean("ordered").getValue()).isFalse();
            assertThat(insert.getArray("documents")).hasSize(3);
        });
    }

    @Test
    void insertManyUnordered_givesEveryDocumentItsIdAndReportsThemByIndex() {
        List<Document> documents =
                List.of(new Document("v", 0), new Document("_id", "b").append("v", 1), new Document("v", 2));

        InsertManyResult result = guarded.insertMany(documents, new InsertManyOptions().ordered(false));

        assertThat(result.getInsertedIds()).hasSize(3).containsEntry(1, new BsonString("b"));
        assertThat(result.getInsertedIds().get(0).asObjectId().getValue())
                .isEqualTo(documents.get(0).getObjectId("_id"));
        assertThat(raw.countDocuments()).isEqualTo(3);
    }

    @Test
    void singleDocumentWriteError_isTheDriversMongoWriteException() {
        raw.insertOne(new Document("_id", 1));

        assertThatThrownBy(() -> guarded.insertOne(new Document("_id", 1)))
                .isInstanceOfSatisfying(
                        MongoWriteException.class, e -> assertThat(e.getCode()).isEqualTo(11000));
    }

    @Test
    void guardedBulkWriteException_isAMongoBulkWriteException() {
        raw.insertOne(new Document("_id", 1));

        assertThatThrownBy(() -> guarded.bulkWrite(List.of(new InsertOneModel<>(new Document("_id", 1)))))
                .isInstanceOf(MongoBulkWriteException.class);
    }

    @Test
    void deleteAndCountsAreTheDriversResult() {
        guarded.insertMany(List.of(new Document("_id", 1), new Document("_id", 2), new Document("_id", 3)));

        BulkWriteResult result = guarded.bulkWrite(
                List.of(
                        new DeleteOneModel<>(Filters.eq("_id", 1)),
                        new UpdateOneModel<>(Filters.eq("_id", 2), Updates.set("x", 1)),
                        new UpdateOneModel<>(Filters.eq("_id", 9), Updates.set("x", 1))),
                new BulkWriteOptions().ordered(false));

        assertThat(result.getDeletedCount()).isEqualTo(1);
        assertThat(result.getMatchedCount()).isEqualTo(1);
        assertThat(result.getModifiedCount()).isEqualTo(1);
        assertThat(raw.countDocuments()).isEqualTo(2);
    }

    @Test
    void emptyBulk_sendsNothing_andHasAnEmptyOutcome() {
        WriteOutcome<Document> outcome = guarded.execute(List.of(), new BulkWriteOptions());

        assertThat(outcome.outcomes()).isEmpty();
        assertThat(outcome.commands()).isZero();
        assertThat(fixture.sent).isEmpty();
    }

    @Test
    void unacknowledgedWriteConcern_isRefusedBeforeAnythingIsSent() {
        GuardedCollection<Document> unacknowledged = fixture.wrap(raw.withWriteConcern(WriteConcern.UNACKNOWLEDGED));

        assertThatThrownBy(() -> unacknowledged.insertOne(new Document("_id", 1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unacknowledged")
                .hasMessageContaining("w:1");
        assertThat(fixture.sent).isEmpty();
    }
}
