package io.github.mongowriteguard.internal.plan;

import static io.github.mongowriteguard.internal.plan.Models.delete;
import static io.github.mongowriteguard.internal.plan.Models.insert;
import static io.github.mongowriteguard.internal.plan.Models.insertWithoutId;
import static io.github.mongowriteguard.internal.plan.Models.planOrdered;
import static io.github.mongowriteguard.internal.plan.Models.planUnordered;
import static io.github.mongowriteguard.internal.plan.Models.roundIndices;
import static io.github.mongowriteguard.internal.plan.Models.update;
import static io.github.mongowriteguard.internal.plan.Models.updateMany;
import static io.github.mongowriteguard.internal.plan.Models.upsert;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.bulk.PlanMode;
import java.util.ArrayList;
import java.util.LinkedList;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** How keyed writes are spread over UNORDERED rounds. */
class RoundsTest {

    @Test
    void bulkWithoutRepeatedKeys_isOneUnorderedRound() {
        PlannedBulk plan = planOrdered(List.of(insert(1), update(2), delete(3), upsert(4), insertWithoutId()));

        assertThat(plan.mode()).isEqualTo(PlanMode.UNORDERED_ROUNDS);
        assertThat(roundIndices(plan)).containsExactly(List.of(0, 1, 2, 3, 4));
        assertThat(plan.rounds().get(0).isOrdered()).isFalse();
        assertThat(plan.reason())
                .isEqualTo("ordered bulk, every write keyed by _id: 1 UNORDERED round (no _id written twice)");
    }

    @Test
    void kthWriteOnAKey_runsInRoundK() {
        PlannedBulk plan = planOrdered(List.of(insert(1), update(1), insert(2), update(1), update(2), update(3)));

        assertThat(roundIndices(plan)).containsExactly(List.of(0, 2, 5), List.of(1, 4), List.of(3));
        assertThat(plan.roundOf(3)).isEqualTo(3);
    }

    @Test
    void previousOnKey_pointsToThePreviousSentWriteOnTheSameId() {
        PlannedBulk plan = planOrdered(List.of(insert(1), update(2), update(1), update(1)));

        assertThat(plan.previousOnKey(0)).isEqualTo(-1);
        assertThat(plan.previousOnKey(1)).isEqualTo(-1);
        assertThat(plan.previousOnKey(2)).isEqualTo(0);
        assertThat(plan.previousOnKey(3)).isEqualTo(2);
        assertThat(plan.decision(3).reason())
                .isEqualTo("round 2: after #2 on the same _id 1, in the same command (the server runs a command's"
                        + " statements in order)");
    }

    @Test
    void unkeyedWriteInUnorderedBulk_joinsRoundOne() {
        PlannedBulk plan = planUnordered(List.of(insert(1), update(1), updateMany("new")));

        assertThat(plan.mode()).isEqualTo(PlanMode.UNORDERED_ROUNDS);
        assertThat(roundIndices(plan)).containsExactly(List.of(0, 2), List.of(1));
        assertThat(plan.decision(2).reason())
                .isEqualTo("round 1: unkeyed, UpdateManyModel can change many documents; the bulk is unordered,"
                        + " so it joins the first round");
        assertThat(plan.previousOnKey(2)).isEqualTo(-1);
    }

    @Test
    void insertsWithoutId_neverShareAKey() {
        PlannedBulk plan = planner(IdAssigner.none())
                .plan(List.of(insertWithoutId(), insertWithoutId(), insertWithoutId()), PlanOptions.ordered());

        assertThat(roundIndices(plan)).containsExactly(List.of(0, 1, 2));
        assertThat(plan.decision(0).isKeyed()).isTrue();
        assertThat(plan.decision(0).id()).isEmpty();
        assertThat(plan.decision(0).reason()).startsWith("round 1: insert without _id");
    }

    @Test
    void emptyBulk_isAnEmptyPlan() {
        PlannedBulk plan = planOrdered(List.of());

        assertThat(plan.isEmpty()).isTrue();
        assertThat(plan.size()).isZero();
        assertThat(plan.rounds()).isEmpty();
        assertThat(plan.reason()).isEqualTo("empty bulk: nothing to send");
        assertThat(plan.expectedRoundTrips(5)).isZero();
    }

    @Test
    void linkedListOfModels_isPlannedLikeAnArrayList() {
        List<WriteModel<Document>> models = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            models.add(i % 2 == 0 ? insert(i) : update(i % 10)); // 5 odd keys, 100 updates each
        }

        PlannedBulk fromLinked = planOrdered(new LinkedList<>(models));
        PlannedBulk fromArray = planOrdered(models);

        assertThat(fromLinked.rounds()).hasSize(1); // five keys written 100 times: each key's updates as one run
        assertThat(fromLinked.rounds().get(0).keyRuns()).hasSize(500);
        assertThat(roundIndices(fromLinked)).isEqualTo(roundIndices(fromArray));
    }

    private static BulkPlanner<Document> planner(IdAssigner<Document> ids) {
        return BulkPlanner.of(Document.class, com.mongodb.MongoClientSettings.getDefaultCodecRegistry(), ids);
    }
}
