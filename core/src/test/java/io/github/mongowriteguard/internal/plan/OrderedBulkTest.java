package io.github.mongowriteguard.internal.plan;

import static io.github.mongowriteguard.internal.plan.Models.delete;
import static io.github.mongowriteguard.internal.plan.Models.deleteMany;
import static io.github.mongowriteguard.internal.plan.Models.insert;
import static io.github.mongowriteguard.internal.plan.Models.planOrdered;
import static io.github.mongowriteguard.internal.plan.Models.planner;
import static io.github.mongowriteguard.internal.plan.Models.roundIndices;
import static io.github.mongowriteguard.internal.plan.Models.update;
import static io.github.mongowriteguard.internal.plan.Models.updateMany;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.mongowriteguard.bulk.PlanMode;
import java.util.List;
import org.junit.jupiter.api.Test;

/** When an ordered bulk keeps the caller's order as one ORDERED round. */
class OrderedBulkTest {

    @Test
    void updateManyInOrderedBulk_preservesOrder() {
        PlannedBulk plan = planOrdered(List.of(insert(1), updateMany("new"), update(1), delete(1)));

        assertThat(plan.mode()).isEqualTo(PlanMode.PRESERVE_ORDER);
        assertThat(roundIndices(plan)).containsExactly(List.of(0, 1, 2, 3));
        assertThat(plan.rounds().get(0).isOrdered()).isTrue();
        assertThat(plan.reason())
                .startsWith("ordered bulk with 1 unkeyed write (first: index 1, UpdateManyModel,"
                        + " which can change many documents): kept in the caller's order as one ORDERED round");
        assertThat(plan.reason()).contains("3 for these 4 writes on 5 shards");
        assertThat(plan.decision(2).reason())
                .isEqualTo(
                        "round 1 (ORDERED, in the caller's order): the ordered bulk has unkeyed writes, first at index 1");
        assertThat(plan.decision(1).reason())
                .isEqualTo(
                        "round 1 (ORDERED, in the caller's order): unkeyed, UpdateManyModel can change many documents");
    }

    @Test
    void deleteManyInOrderedBulk_preservesOrder() {
        PlannedBulk plan = planOrdered(List.of(deleteMany("old"), insert(1)));

        assertThat(plan.mode()).isEqualTo(PlanMode.PRESERVE_ORDER);
    }

    @Test
    void preservedOrder_stillLinksWritesOnTheSameKey() {
        PlannedBulk plan = planOrdered(List.of(insert(1), updateMany("new"), update(1)));

        assertThat(plan.previousOnKey(2)).isEqualTo(0);
    }

    @Test
    void strictOrdered_runsTheBulkAsGivenInOneOrderedRound() {
        PlannedBulk plan = planner()
                .plan(
                        List.of(insert(1), update(1), delete(1), insert(2)),
                        PlanOptions.builder().strictOrdered(true).build());

        assertThat(plan.mode()).isEqualTo(PlanMode.STRICT_ORDERED);
        assertThat(roundIndices(plan)).containsExactly(List.of(0, 1, 2, 3));
        assertThat(plan.rounds().get(0).isOrdered()).isTrue();
        assertThat(plan.reason())
                .startsWith("strictOrdered: the ordered bulk runs as the driver's ORDERED bulk, as given");
        assertThat(plan.decision(0).reason()).isEqualTo("round 1 (ORDERED, as given): strictOrdered is set");
    }

    @Test
    void strictOrdered_onUnorderedBulk_hasNoEffect() {
        PlannedBulk plan = planner()
                .plan(
                        List.of(insert(1), update(1)),
                        PlanOptions.builder().ordered(false).strictOrdered(true).build());

        assertThat(plan.mode()).isEqualTo(PlanMode.UNORDERED_ROUNDS);
        assertThat(plan.rounds()).hasSize(2);
    }

    @Test
    void orderedBulkOfKeyedWrites_runsInUnorderedRounds() {
        PlannedBulk plan = planOrdered(List.of(insert(1), insert(2), update(1)));

        assertThat(plan.mode()).isEqualTo(PlanMode.UNORDERED_ROUNDS);
        assertThat(plan.rounds())
                .allSatisfy(round -> assertThat(round.isOrdered()).isFalse());
    }
}
