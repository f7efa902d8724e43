package io.github.mongowriteguard.internal.plan;

import static io.github.mongowriteguard.internal.plan.Models.delete;
import static io.github.mongowriteguard.internal.plan.Models.insert;
import static io.github.mongowriteguard.internal.plan.Models.planOrdered;
import static io.github.mongowriteguard.internal.plan.Models.replaceUpsert;
import static io.github.mongowriteguard.internal.plan.Models.update;
import static io.github.mongowriteguard.internal.plan.Models.updateMany;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.bulk.PlanMode;
import io.github.mongowriteguard.bulk.WriteDecision;
import io.github.mongowriteguard.bulk.WriteKind;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** What a plan shows: short toString, decisions with reasons, cost estimate, and that none of it can be changed. */
class PlanInspectionTest {

    @Test
    void toString_isShortAndReadable() {
        PlannedBulk plan = planOrdered(List.of(insert(1), update(1), insert(2), replaceUpsert(3)));

        assertThat(plan).hasToString("BulkPlan{UNORDERED_ROUNDS, 4 writes, 2 rounds [3, 1]}");
        assertThat(plan.rounds().get(0)).hasToString("Round 1 (UNORDERED, 3 writes)");
        assertThat(plan.decision(1)).hasToString("#1 UpdateOneModel: round 2: after #0 on the same _id 1");
    }

    @Test
    void toString_cutsLongRoundLists() {
        List<WriteModel<Document>> models = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            models.add(i % 2 == 0 ? update(1) : delete(1)); // a new type each time: a new round each time
        }
        models.add(update(2));
        models.add(insert(3));
        models.add(delete(3));

        assertThat(planOrdered(models))
                .hasToString("BulkPlan{UNORDERED_ROUNDS, 10 writes, 7 rounds [3, 2, 1, 1, 1, ...]}");
    }

    @Test
    void expectedRoundTrips_orderedRoundFollowsTheHashedShardFormula() {
        List<WriteModel<Document>> models = new ArrayList<>();
        models.add(updateMany("new"));
        for (int i = 1; i < 1_000; i++) {
            models.add(insert(i));
        }

        PlannedBulk ordered = planOrdered(models);
        PlannedBulk unordered = Models.planUnordered(models.subList(1, models.size()));

        assertThat(ordered.mode()).isEqualTo(PlanMode.PRESERVE_ORDER);
        assertThat(ordered.expectedRoundTrips(5)).isCloseTo(800.2, within(1e-9));
        assertThat(ordered.expectedRoundTrips(2)).isCloseTo(500.5, within(1e-9));
        assertThat(ordered.expectedRoundTrips(1)).isEqualTo(1.0);
        assertThat(unordered.expectedRoundTrips(5)).isEqualTo(1.0);
        assertThatThrownBy(() -> ordered.expectedRoundTrips(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("shardCount (0) must be at least 1; use 1 for an unsharded collection");
    }

    @Test
    void decisions_listEveryWriteInIndexOrder() {
        PlannedBulk plan = planOrdered(List.of(insert(1), update(1), delete(2)));

        assertThat(plan.decisions()).extracting(WriteDecision::index).containsExactly(0, 1, 2);
        assertThat(plan.decisions())
                .extracting(WriteDecision::kind)
                .containsExactly(WriteKind.INSERT_ONE, WriteKind.UPDATE_ONE, WriteKind.DELETE_ONE);
        assertThat(plan.decision(0).filter()).isEmpty();
        assertThat(plan.decision(1).round()).isEqualTo(2);
        assertThat(plan.decision(1).previousOnKey()).isZero();
    }

    @Test
    void planCollections_cannotBeChanged() {
        PlannedBulk plan = planOrdered(List.of(insert(1), delete(1), insert(2)));

        assertThatThrownBy(() -> plan.rounds().clear()).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> plan.rounds().get(0).indices().set(0, 9))
                .isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> plan.decisions().remove(0)).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void decisionIdsAndFilters_areCopies() {
        PlannedBulk plan = planOrdered(List.of(new DeleteOneModel<>(new Document("_id", new Document("a", 1)))));

        plan.decision(0).id().orElseThrow().asDocument().put("a", new BsonInt32(2));
        plan.decision(0).filter().orElseThrow().put("extra", new BsonInt32(1));

        assertThat(plan.decision(0).id()).contains(BsonDocument.parse("{a: 1}"));
        assertThat(plan.decision(0).filter()).contains(BsonDocument.parse("{_id: {a: 1}}"));
    }

    @Test
    void indexOutsideThePlan_isRejected() {
        PlannedBulk plan = planOrdered(List.of(insert(1)));

        assertThatThrownBy(() -> plan.previousOnKey(1)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> plan.decision(-1)).isInstanceOf(IndexOutOfBoundsException.class);
    }

    @Test
    void longIds_areCutInReasons() {
        String longId = "k".repeat(200);

        String reason = planOrdered(List.of(update(longId))).decision(0).reason();

        assertThat(reason)
                .startsWith("round 1: first write on _id \"kkk")
                .endsWith("...")
                .hasSizeLessThan(100);
    }
}
