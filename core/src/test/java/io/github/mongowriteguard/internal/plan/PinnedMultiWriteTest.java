package io.github.mongowriteguard.internal.plan;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.Collation;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.bulk.PlanMode;
import io.github.mongowriteguard.bulk.WriteKind;
import java.util.List;
import org.bson.BsonInt32;
import org.bson.Document;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

/** An updateMany / deleteMany whose filter pins {@code _id}: keyed and sent as a single-document write, or why not. */
class PinnedMultiWriteTest {
    private static final CodecRegistry REGISTRY = com.mongodb.MongoClientSettings.getDefaultCodecRegistry();

    private static PlannedBulk plan(SingleDocumentById rule, List<WriteModel<Document>> models) {
        return BulkPlanner.of(Document.class, REGISTRY)
                .plan(models, PlanOptions.builder().singleDocumentById(rule).build());
    }

    private static UpdateManyModel<Document> upsertMany(Object id) {
        return new UpdateManyModel<>(Filters.eq("_id", id), Updates.set("x", 1), new UpdateOptions().upsert(true));
    }

    @Test
    void orderedUpsertsManyById_runInOneRound_sentAsUpdateOne() {
        PlannedBulk plan = plan(SingleDocumentById.always(), List.of(upsertMany(1), upsertMany(2), upsertMany(1)));

        assertThat(plan.mode()).isEqualTo(PlanMode.UNORDERED_ROUNDS);
        assertThat(plan.rounds()).hasSize(2);
        assertThat(plan.sentAs(0)).isEqualTo(WriteKind.UPDATE_ONE);
        assertThat(plan.kind(0)).isEqualTo(WriteKind.UPDATE_MANY);
        assertThat(plan.previousOnKey(2)).isZero();
        assertThat(plan.decision(0).reason()).contains("UpdateManyModel sent as a single-document statement");
    }

    @Test
    void deleteManyByIdWithOtherConditions_isKeyed_sentAsDeleteOne() {
        PlannedBulk plan = plan(
                SingleDocumentById.always(),
                List.of(new DeleteManyModel<>(new Document("_id", new Document("$eq", 7)).append("n", 2))));

        assertThat(plan.decision(0).isKeyed()).isTrue();
        assertThat(plan.id(0)).contains(new BsonInt32(7));
        assertThat(plan.sentAs(0)).isEqualTo(WriteKind.DELETE_ONE);
    }

    @Test
    void withoutTheCollectionsRule_theDriversFormIsKept_andTheOrderedBulkRunsAsGiven() {
        PlannedBulk plan = plan(SingleDocumentById.never("not read"), List.of(upsertMany(1), upsertMany(2)));

        assertThat(plan.mode()).isEqualTo(PlanMode.PRESERVE_ORDER);
        assertThat(plan.sentAs(0)).isEqualTo(WriteKind.UPDATE_MANY);
        assertThat(plan.firstUnkeyed()).isZero();
        assertThat(plan.unkeyedBecause(0)).get().asString().contains("pins _id").contains("not read");
        assertThat(plan.reason()).contains("not read");
    }

    @Test
    void plannerWithDefaultOptions_keepsTheDriversForm() {
        PlannedBulk plan = BulkPlanner.of(Document.class, REGISTRY).plan(List.of(upsertMany(1)), PlanOptions.ordered());

        assertThat(plan.sentAs(0)).isEqualTo(WriteKind.UPDATE_MANY);
        assertThat(plan.decision(0).isKeyed()).isFalse();
    }

    @Test
    void nonSimpleDefaultCollation_keepsStringIds_multi_butNotNumbersOrObjectIds() {
        SingleDocumentById rule = SingleDocumentById.always().withoutCollatableIds("collation fr");

        PlannedBulk plan = plan(
                rule,
                List.of(
                        upsertMany("a"),
                        upsertMany(new Document("k", "a")),
                        upsertMany(5L),
                        upsertMany(new ObjectId())));

        assertThat(plan.sentAs(0)).isEqualTo(WriteKind.UPDATE_MANY);
        assertThat(plan.sentAs(1)).isEqualTo(WriteKind.UPDATE_MANY);
        assertThat(plan.sentAs(2)).isEqualTo(WriteKind.UPDATE_ONE);
        assertThat(plan.sentAs(3)).isEqualTo(WriteKind.UPDATE_ONE);
    }

    @Test
    void upsertWithoutTheShardKey_keepsTheDriversForm_otherWritesDoNot() {
        SingleDocumentById rule = SingleDocumentById.always().upsertsOnlyWithShardKey(List.of("tenant", "_id"));

        PlannedBulk plan = plan(
                rule,
                List.of(
                        upsertMany(1),
                        new UpdateManyModel<>(
                                new Document("_id", 2).append("tenant", "t"),
                                Updates.set("x", 1),
                                new UpdateOptions().upsert(true)),
                        new UpdateManyModel<>(Filters.eq("_id", 3), Updates.set("x", 1)),
                        new DeleteManyModel<>(Filters.eq("_id", 4))));

        assertThat(plan.sentAs(0)).isEqualTo(WriteKind.UPDATE_MANY);
        assertThat(plan.unkeyedBecause(0)).get().asString().contains("sharded on [tenant, _id]");
        assertThat(plan.sentAs(1)).isEqualTo(WriteKind.UPDATE_ONE);
        assertThat(plan.sentAs(2)).isEqualTo(WriteKind.UPDATE_ONE);
        assertThat(plan.sentAs(3)).isEqualTo(WriteKind.DELETE_ONE);
    }

    @Test
    void ownNonSimpleCollation_orNoIdEquality_isUnkeyedAsBefore() {
        PlannedBulk plan = plan(
                SingleDocumentById.always(),
                List.of(
                        new UpdateManyModel<>(
                                Filters.eq("_id", 1),
                                Updates.set("x", 1),
                                new UpdateOptions()
                                        .collation(
                                                Collation.builder().locale("en").build())),
                        new UpdateManyModel<>(Filters.in("_id", 1, 2), Updates.set("x", 1)),
                        new DeleteManyModel<>(Filters.gt("_id", 1))));

        for (int i = 0; i < 3; i++) {
            assertThat(plan.sentAs(i)).isEqualTo(plan.kind(i));
            assertThat(plan.decision(i).isKeyed()).isFalse();
        }
        assertThat(plan.unkeyedBecause(1)).contains("can change many documents");
    }
}
