package io.github.mongowriteguard.internal.plan;

import static io.github.mongowriteguard.internal.plan.Models.delete;
import static io.github.mongowriteguard.internal.plan.Models.insert;
import static io.github.mongowriteguard.internal.plan.Models.insertWithoutId;
import static io.github.mongowriteguard.internal.plan.Models.planOrdered;
import static io.github.mongowriteguard.internal.plan.Models.planner;
import static io.github.mongowriteguard.internal.plan.Models.update;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.exception.InvalidBulkException;
import io.github.mongowriteguard.exception.InvalidBulkException.Problem;
import java.util.Arrays;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.junit.jupiter.api.Test;

/** Bulks the guard refuses before anything is sent, with the index, the problem and the fix. */
class ValidationTest {

    private static final int LIMIT = 16 * 1024 * 1024;

    private static InvalidBulkException rejected(List<WriteModel<Document>> models) {
        return catchThrowableOfType(InvalidBulkException.class, () -> planOrdered(models));
    }

    @Test
    void nullModelList_isRejected() {
        InvalidBulkException e =
                catchThrowableOfType(InvalidBulkException.class, () -> planner().plan(null, PlanOptions.ordered()));

        assertThat(e).isInstanceOf(IllegalArgumentException.class);
        assertThat(e.index()).isEqualTo(-1);
        assertThat(e.problem()).isEqualTo(Problem.NULL_MODELS);
        assertThat(e).hasMessageContaining("the list of write models is null; pass an empty list for an empty bulk");
    }

    @Test
    void nullModelInList_isRejectedWithItsIndex() {
        InvalidBulkException e = rejected(Arrays.asList(insert(1), null));

        assertThat(e.index()).isEqualTo(1);
        assertThat(e.problem()).isEqualTo(Problem.NULL_ELEMENT);
        assertThat(e)
                .hasMessage("Invalid bulk write at index 1 (WriteModel): the write model is null;"
                        + " remove it from the list. Nothing was sent.");
    }

    @Test
    void nullPipelineStage_isRejected() {
        List<Bson> pipeline = Arrays.asList(Updates.set("a", 1), null);

        InvalidBulkException e = rejected(List.of(new UpdateOneModel<>(new Document("_id", 1), pipeline)));

        assertThat(e.problem()).isEqualTo(Problem.NULL_ELEMENT);
        assertThat(e).hasMessageContaining("stage 1 of the update pipeline is null");
    }

    @Test
    void updateWithoutOperators_isRejected() {
        InvalidBulkException e =
                rejected(List.of(insert(1), new UpdateOneModel<>(new Document("_id", 1), new Document("name", "Ann"))));

        assertThat(e.index()).isEqualTo(1);
        assertThat(e.problem()).isEqualTo(Problem.UPDATE_WITHOUT_OPERATORS);
        assertThat(e)
                .hasMessage("Invalid bulk write at index 1 (UpdateOneModel): the update document has the field"
                        + " 'name', which is not an update operator; wrap the fields in {$set: {...}}, or use ReplaceOneModel"
                        + " to replace the whole document. Nothing was sent.");
    }

    @Test
    void updateMixingOperatorsAndFields_isRejected() {
        InvalidBulkException e = rejected(List.of(
                new UpdateManyModel<>(new Document(), new Document("$set", new Document("a", 1)).append("b", 2))));

        assertThat(e.problem()).isEqualTo(Problem.UPDATE_WITHOUT_OPERATORS);
        assertThat(e).hasMessageContaining("(UpdateManyModel)").hasMessageContaining("'b'");
    }

    @Test
    void emptyUpdate_isRejected() {
        InvalidBulkException e = rejected(List.of(new UpdateOneModel<>(new Document("_id", 1), new Document())));

        assertThat(e.problem()).isEqualTo(Problem.UPDATE_WITHOUT_OPERATORS);
        assertThat(e).hasMessageContaining("the update document is empty");
    }

    @Test
    void updateBuiltWithUpdates_andPipelineUpdates_areAccepted() {
        PlannedBulk plan = planOrdered(List.of(
                new UpdateOneModel<>(new Document("_id", 1), Updates.combine(Updates.set("a", 1), Updates.inc("n", 1))),
                new UpdateOneModel<>(new Document("_id", 2), List.of(Updates.set("a", 1)))));

        assertThat(plan.size()).isEqualTo(2);
    }

    @Test
    void replacementWithOperators_isRejected() {
        InvalidBulkException e = rejected(
                List.of(new ReplaceOneModel<>(new Document("_id", 1), new Document("$set", new Document("a", 1)))));

        assertThat(e.index()).isZero();
        assertThat(e.problem()).isEqualTo(Problem.REPLACEMENT_WITH_OPERATORS);
        assertThat(e)
                .hasMessage("Invalid bulk write at index 0 (ReplaceOneModel): the replacement document has the"
                        + " top-level field '$set', and a replacement cannot hold update operators; use UpdateOneModel to apply"
                        + " operators, or remove the '$' fields to replace the whole document. Nothing was sent.");
    }

    @Test
    void replacementWithOperators_isRejected_whenReadThroughTheCodec() {
        BulkPlanner<BsonDocument> planner =
                BulkPlanner.of(BsonDocument.class, MongoClientSettings.getDefaultCodecRegistry());

        assertThatThrownBy(() -> planner.plan(
                        List.of(new ReplaceOneModel<>(
                                BsonDocument.parse("{_id: 1}"), BsonDocument.parse("{a: 1, $inc: {n: 1}}"))),
                        PlanOptions.ordered()))
                .isInstanceOf(InvalidBulkException.class)
                .hasMessageContaining("'$inc'");
    }

    @Test
    void replacementWithDbRefFields_isAccepted() {
        PlannedBulk plan = planOrdered(List.of(
                new ReplaceOneModel<>(new Document("_id", 1), new Document("$ref", "orders").append("$id", 5))));

        assertThat(plan.size()).isEqualTo(1);
    }

    @Test
    void duplicateInsertIds_areSentInOrder_asTheDriverSendsThem() {
        // The driver writes the first and reports E11000 for the second; a Kafka batch with a redelivered record
        // holds such pairs, so the guard must not refuse the whole bulk.
        PlannedBulk plan = planOrdered(List.of(insert(1), insert(2), insert(1)));

        assertThat(plan.rounds()).hasSize(2);
        assertThat(plan.roundOf(2)).isEqualTo(2);
        assertThat(plan.previousOnKey(2)).isZero();
    }

    @Test
    void numericallyEqualInsertIds_areOneKey() {
        PlannedBulk plan = planOrdered(List.of(insert(1), insert(1.0)));

        assertThat(plan.previousOnKey(1)).isZero();
    }

    @Test
    void emptyUpdatePipeline_isRefused_asTheDriverRefusesIt() {
        InvalidBulkException e = rejected(List.of(insert(1), new UpdateOneModel<>(new Document("_id", 1), List.of())));

        assertThat(e.index()).isEqualTo(1);
        assertThat(e).hasMessageContaining("the update pipeline is empty").hasMessageEndingWith("Nothing was sent.");
    }

    @Test
    void insertDeleteInsert_isAccepted() {
        PlannedBulk plan = planOrdered(List.of(insert(1), delete(1), insert(1)));

        assertThat(plan.rounds()).hasSize(3);
    }

    @Test
    void insertDeleteManyInsert_isAccepted() {
        // Found by BulkEquivalenceTest: DeleteMany({n: {$gt: 50}}) removed the first insert, and the driver's ORDERED
        // run applied the second; the check had rejected the bulk as "would always fail".
        PlannedBulk plan = planOrdered(
                List.of(insert(1), new DeleteManyModel<>(new Document("v", new Document("$gt", 0))), insert(1)));

        assertThat(plan.rounds()).hasSize(1);
    }

    @Test
    void insertUnkeyedDeleteOneInsert_isAccepted() {
        PlannedBulk plan = planOrdered(List.of(insert(1), new DeleteOneModel<>(new Document("v", 1)), insert(1)));

        assertThat(plan.rounds()).hasSize(1);
    }

    @Test
    void documentOver16MiB_isRejectedWithIndexAndSize() {
        // {_id: 1, big: "x..."}: 4 + (1 + 4 + 4) + (1 + 4 + 4 + n + 1) + 1 = n + 24 bytes
        Document big = new Document("_id", 1).append("big", "x".repeat(LIMIT));

        InvalidBulkException e = rejected(List.of(insert(0), new InsertOneModel<>(big)));

        assertThat(e.index()).isEqualTo(1);
        assertThat(e.problem()).isEqualTo(Problem.DOCUMENT_TOO_LARGE);
        assertThat(e)
                .hasMessage("Invalid bulk write at index 1 (InsertOneModel): the document is 16,777,240 bytes,"
                        + " over the 16 MiB BSON limit (16,777,216 bytes); split it, or keep large content elsewhere"
                        + " (e.g. GridFS). Nothing was sent.");
    }

    @Test
    void documentOfExactly16MiB_isAccepted() {
        Document atLimit = new Document("_id", 1).append("big", "x".repeat(LIMIT - 24));

        assertThat(planOrdered(List.of(new InsertOneModel<>(atLimit))).size()).isEqualTo(1);
    }

    @Test
    void replacementOver16MiB_isRejected_whenReadThroughTheCodec() {
        BulkPlanner<BsonDocument> planner =
                BulkPlanner.of(BsonDocument.class, MongoClientSettings.getDefaultCodecRegistry());
        BsonDocument big = new BsonDocument("big", new BsonString("x".repeat(LIMIT)));

        InvalidBulkException e = catchThrowableOfType(
                InvalidBulkException.class,
                () -> planner.plan(
                        List.of(new ReplaceOneModel<>(new BsonDocument("_id", new BsonInt32(1)), big)),
                        PlanOptions.ordered()));

        assertThat(e.problem()).isEqualTo(Problem.DOCUMENT_TOO_LARGE);
        assertThat(e).hasMessageContaining("index 0 (ReplaceOneModel): the document is 16,777,231 bytes");
    }

    @Test
    void rejectedBulk_assignsNoIds() {
        Document withoutId = new Document("v", 1);

        assertThatThrownBy(() -> planOrdered(List.of(
                        new InsertOneModel<>(withoutId),
                        insert(2),
                        new UpdateOneModel<>(new Document("_id", 2), new Document()))))
                .isInstanceOf(InvalidBulkException.class);

        assertThat(withoutId).doesNotContainKey("_id");
    }

    @Test
    void assignerRepeatingAnId_givesOneKey_andNoInsertCountsAsItsOwnEarlierCopy() {
        BulkPlanner<Document> planner =
                BulkPlanner.of(Document.class, MongoClientSettings.getDefaultCodecRegistry(), document -> {
                    document.put("_id", 42);
                    return new BsonInt32(42);
                });

        PlannedBulk plan =
                planner.plan(List.of(insertWithoutId(), update(1), insertWithoutId()), PlanOptions.ordered());

        assertThat(plan.previousOnKey(2)).isZero();
        assertThat(plan.hasOwnAssignedId(0)).isFalse();
        assertThat(plan.hasOwnAssignedId(2)).isFalse();
    }

    @Test
    void assignedIdPushingDocumentOver16MiB_isRejected() {
        // {big: "x..."} = n + 15 bytes; an ObjectId _id adds 17.
        Document nearlyFull = new Document("big", "x".repeat(LIMIT - 15 - 10));

        InvalidBulkException e = rejected(List.of(new InsertOneModel<>(nearlyFull)));

        assertThat(e.problem()).isEqualTo(Problem.DOCUMENT_TOO_LARGE);
        assertThat(e).hasMessageContaining("with its assigned _id, the document is 16,777,223 bytes");
    }
}
