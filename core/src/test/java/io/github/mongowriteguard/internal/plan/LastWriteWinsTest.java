package io.github.mongowriteguard.internal.plan;

import static io.github.mongowriteguard.internal.plan.Models.delete;
import static io.github.mongowriteguard.internal.plan.Models.replace;
import static io.github.mongowriteguard.internal.plan.Models.replaceUpsert;
import static io.github.mongowriteguard.internal.plan.Models.update;
import static io.github.mongowriteguard.internal.plan.Models.updateMany;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.bulk.PlanMode;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** The opt-in last-write-wins compaction: which replacements the plan leaves out, and which it must keep. */
class LastWriteWinsTest {

    private static PlannedBulk plan(List<WriteModel<Document>> models, boolean ordered) {
        return Models.planner()
                .plan(
                        models,
                        PlanOptions.builder()
                                .ordered(ordered)
                                .lastWriteWins(true)
                                .build());
    }

    @Test
    void replacementsBeforeAReplaceUpsert_areSuperseded_andInNoRound() {
        PlannedBulk plan = plan(List.of(replace(1), replaceUpsert(2), replace(1), replaceUpsert(1)), true);

        assertThat(plan.supersededBy(0)).isEqualTo(3);
        assertThat(plan.supersededBy(2)).isEqualTo(3);
        assertThat(plan.supersededBy(1)).isEqualTo(-1);
        assertThat(plan.supersededBy(3)).isEqualTo(-1);
        assertThat(plan.roundOf(0)).isZero();
        assertThat(Models.roundIndices(plan)).containsExactly(List.of(1, 3));
        assertThat(plan.previousOnKey(3)).isEqualTo(-1);
        assertThat(plan.decision(0).reason()).contains("not sent (lastWriteWins): #3");
    }

    @Test
    void replacementsBeforeADelete_areSuperseded() {
        PlannedBulk plan = plan(List.of(replaceUpsert(1), delete(1)), false);

        assertThat(plan.supersededBy(0)).isEqualTo(1);
        assertThat(plan.hasSuperseded()).isTrue();
    }

    @Test
    void anUpdateBetween_keepsTheReplacementItReads() {
        PlannedBulk plan = plan(List.of(replace(1), update(1), replaceUpsert(1)), true);

        assertThat(plan.hasSuperseded()).isFalse();
    }

    @Test
    void aReplacementWithOtherConditions_orWithoutUpsert_decidesNothing() {
        WriteModel<Document> conditional = new ReplaceOneModel<>(
                new Document("_id", 1).append("v", 1), new Document("v", 3), new ReplaceOptions().upsert(true));

        assertThat(plan(List.of(replace(1), conditional), true).hasSuperseded()).isFalse();
        assertThat(plan(List.of(replace(1), replace(1)), true).hasSuperseded()).isFalse();
    }

    @Test
    void offByDefault_andNeverInAnOrderedBulkKeptInTheCallersOrder() {
        List<WriteModel<Document>> models = List.of(replace(1), replaceUpsert(1));

        assertThat(Models.planner().plan(models, PlanOptions.ordered()).hasSuperseded())
                .isFalse();
        PlannedBulk preserved = plan(List.of(replace(1), updateMany("x"), replaceUpsert(1)), true);
        assertThat(preserved.mode()).isEqualTo(PlanMode.PRESERVE_ORDER);
        assertThat(preserved.hasSuperseded()).isFalse();
    }
}
