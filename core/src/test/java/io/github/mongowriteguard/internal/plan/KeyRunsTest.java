package io.github.mongowriteguard.internal.plan;

import static io.github.mongowriteguard.internal.plan.Models.delete;
import static io.github.mongowriteguard.internal.plan.Models.insert;
import static io.github.mongowriteguard.internal.plan.Models.planOrdered;
import static io.github.mongowriteguard.internal.plan.Models.planUnordered;
import static io.github.mongowriteguard.internal.plan.Models.update;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.bulk.Round;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** A key's consecutive writes of one type travel together: how rounds and key runs are planned. */
class KeyRunsTest {

    @Test
    void orderedHotKey_isOneRoundOfOneKeyRun() {
        List<WriteModel<Document>> models = new ArrayList<>();
        for (int i = 0; i < 3_000; i++) {
            models.add(update(1));
        }

        PlannedBulk plan = planOrdered(models);

        assertThat(plan.rounds()).hasSize(1);
        assertThat(plan.rounds().get(0).keyRuns()).hasSize(3_000).isSorted();
        assertThat(plan.rounds().get(0).unorderedPart()).isEmpty();
        assertThat(plan.reason()).contains("1 UNORDERED round").contains("up to 3000, as ORDERED key runs");
    }

    @Test
    void unorderedHotKey_isOneRoundInTheUnorderedCommand() {
        List<WriteModel<Document>> models = new ArrayList<>();
        for (int i = 0; i < 3_000; i++) {
            models.add(update(1));
        }

        PlannedBulk plan = planUnordered(models);

        assertThat(plan.rounds()).hasSize(1);
        assertThat(plan.rounds().get(0).keyRuns()).isEmpty();
        assertThat(plan.rounds().get(0).unorderedPart()).hasSize(3_000);
    }

    @Test
    void orderedManyKeysWrittenEquallyOften_stayInRounds() {
        // 100 keys x 10: as key runs, one ORDERED command would cost about one child batch per key through mongos.
        List<WriteModel<Document>> models = events(100, 10);

        PlannedBulk plan = planOrdered(models);

        assertThat(plan.rounds()).hasSize(10);
        assertThat(plan.rounds())
                .allSatisfy(round -> assertThat(round.keyRuns()).isEmpty());
    }

    @Test
    void unorderedManyKeys_isOneRound() {
        PlannedBulk plan = planUnordered(events(100, 10));

        assertThat(plan.rounds()).hasSize(1);
        assertThat(plan.rounds().get(0).size()).isEqualTo(1_000);
    }

    @Test
    void orderedOneHotKeyAmongManyKeys_travelsAsARun_theOthersInTheUnorderedPart() {
        List<WriteModel<Document>> models = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            models.add(insert(1_000 + i));
            models.add(update(1));
        }

        PlannedBulk plan = planOrdered(models);

        assertThat(plan.rounds()).hasSize(1);
        assertThat(plan.rounds().get(0).keyRuns()).hasSize(1_000);
        assertThat(plan.rounds().get(0).unorderedPart()).hasSize(1_000);
    }

    @Test
    void aChangeOfTypeOnAKey_startsANewRound() {
        PlannedBulk plan = planUnordered(List.of(update(1), update(1), delete(1), update(1), update(2)));

        assertThat(Models.roundIndices(plan)).containsExactly(List.of(0, 1, 4), List.of(2), List.of(3));
        assertThat(plan.decision(1).reason()).contains("in the same command");
    }

    @Test
    void keyRunsOfARound_areGroupedByType_eachRunContiguous() {
        // key 1: 5 updates; key 3: 5 updates, interleaved; key 2: an insert, then 4 deletes. As runs: 3 keys for 1
        // round of repetitions, where rounds would cost 5.
        List<WriteModel<Document>> models = new ArrayList<>(List.of(update(1), insert(2)));
        for (int i = 0; i < 5; i++) {
            models.add(update(3));
            if (i < 4) {
                models.add(update(1));
            }
        }
        for (int i = 0; i < 4; i++) {
            models.add(delete(2));
        }

        PlannedBulk plan = planOrdered(models);

        assertThat(plan.rounds()).hasSize(2);
        Round first = plan.rounds().get(0);
        assertThat(first.keyRuns()).containsExactly(0, 3, 5, 7, 9, 2, 4, 6, 8, 10);
        assertThat(first.unorderedPart()).containsExactly(1);
        assertThat(plan.rounds().get(1).keyRuns()).containsExactly(11, 12, 13, 14);
    }

    /** {@code keys} keys, each updated {@code times} times, interleaved as a consumer of a compacted topic sees them. */
    static List<WriteModel<Document>> events(int keys, int times) {
        List<WriteModel<Document>> models = new ArrayList<>();
        for (int t = 0; t < times; t++) {
            for (int k = 0; k < keys; k++) {
                models.add(update(k));
            }
        }
        return models;
    }
}
