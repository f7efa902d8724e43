package io.github.mongowriteguard.bulk;

import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import org.bson.Document;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static io.github.mongowriteguard.bulk.Models.delete;
import static io.github.mongowriteguard.bulk.Models.insert;
import static io.github.mongowriteguard.bulk.Models.planOrdered;
import static io.github.mongowriteguard.bulk.Models.planUnordered;
import static io.github.mongowriteguard.bulk.Models.replace;
import static io.github.mongowriteguard.bulk.Models.replaceUpsert;
import static io.github.mongowriteguard.bulk.Models.roundIndices;
import static io.github.mongowriteguard.bulk.Models.update;
import static io.github.mongowriteguard.bulk.Models.upsert;
import static org.assertj.core.api.Assertions.assertThat;

/** When the last write on an {@code _id} makes the earlier ones unable to change the final document. */
class SupersedeTest {

    @Test
    void insertFollowedByReplaceUpsert_isSuperseded() {
        // The insert may fail on an existing document; either way the final document is the replacement.
        BulkPlan plan = planOrdered(List.of(insert(1), replaceUpsert(1)));

        assertThat(plan.superseded()).containsExactly(Map.entry(0, 1));
        assertThat(roundIndices(plan)).containsExactly(List.of(1));
        assertThat(plan.decision(0).isSuperseded()).isTrue();
        assertThat(plan.decision(0).round()).isZero();
        assertThat(plan.decision(0).reason()).startsWith("superseded by #1 (ReplaceOneModel with upsert on the same _id 1)");
        assertThat(plan.decision(1).reason()).isEqualTo("round 1: first write on _id 1; supersedes 1 earlier write on it");
    }

    @Test
    void everyEarlierWrite_isSupersededByALastDelete() {
        BulkPlan plan = planOrdered(List.of(insert(1), update(1), upsert(1), replace(1), delete(1)));

        assertThat(plan.superseded()).containsExactly(Map.entry(0, 4), Map.entry(1, 4), Map.entry(2, 4), Map.entry(3, 4));
        assertThat(roundIndices(plan)).containsExactly(List.of(4));
        assertThat(plan.previousOnKey(4)).isEqualTo(-1);
    }

    @Test
    void replaceWithoutUpsert_doesNotSupersede() {
        // With no document, a replace without upsert does nothing: the earlier insert decides whether one exists.
        BulkPlan plan = planOrdered(List.of(insert(1), replace(1)));

        assertThat(plan.superseded()).isEmpty();
        assertThat(roundIndices(plan)).containsExactly(List.of(0), List.of(1));
    }

    @Test
    void lastWriteThatDependsOnTheDocument_keepsTheWholeSequence() {
        BulkPlan plan = planOrdered(List.of(delete(1), insert(1), update(1)));

        assertThat(plan.superseded()).isEmpty();
        assertThat(roundIndices(plan)).containsExactly(List.of(0), List.of(1), List.of(2));
    }

    @Test
    void supersedingWriteInTheMiddle_doesNotSupersede() {
        // Only a key's last write supersedes: keeps the rule simple to state and to check.
        BulkPlan plan = planOrdered(List.of(update(1), delete(1), insert(1)));

        assertThat(plan.superseded()).isEmpty();
        assertThat(plan.rounds()).hasSize(3);
    }

    @Test
    void deleteWithOtherConditions_doesNotSupersede() {
        // {_id: 1, region: "eu"} deletes only if the document matches: what ran before decides that.
        BulkPlan plan = planOrdered(List.of(update(1),
                new DeleteOneModel<>(new Document("_id", 1).append("region", "eu"))));

        assertThat(plan.superseded()).isEmpty();
        assertThat(plan.rounds()).hasSize(2);
    }

    @Test
    void replaceUpsertWithOtherConditions_doesNotSupersede() {
        BulkPlan plan = planOrdered(List.of(update(1), new ReplaceOneModel<>(new Document("_id", 1).append("region", "eu"),
                new Document("v", 2), new ReplaceOptions().upsert(true))));

        assertThat(plan.superseded()).isEmpty();
    }

    @Test
    void replaceUpsertNamingAnotherId_doesNotSupersede() {
        // Changing _id fails on the server, so this write does not define the final document.
        BulkPlan plan = planOrdered(List.of(insert(1), new ReplaceOneModel<>(new Document("_id", 1),
                new Document("_id", 2).append("v", 2), new ReplaceOptions().upsert(true))));

        assertThat(plan.superseded()).isEmpty();
    }

    @Test
    void replaceUpsertRepeatingTheSameId_supersedes() {
        BulkPlan plan = planOrdered(List.of(insert(1), new ReplaceOneModel<>(new Document("_id", 1),
                new Document("_id", 1).append("v", 2), new ReplaceOptions().upsert(true))));

        assertThat(plan.superseded()).containsExactly(Map.entry(0, 1));
    }

    @Test
    void replaceUpsertWithTheIdFieldsReorderedOrRetyped_doesNotSupersede() {
        // The server's immutable-_id check compares exactly: {a: 1, b: 2} is not {b: 2, a: 1}, and 1 is not 1L.
        Document id = new Document("a", 1).append("b", 2);
        BulkPlan reordered = planOrdered(List.of(insert(id), new ReplaceOneModel<>(new Document("_id", id),
                new Document("_id", new Document("b", 2).append("a", 1)), new ReplaceOptions().upsert(true))));
        BulkPlan retyped = planOrdered(List.of(insert(1), new ReplaceOneModel<>(new Document("_id", 1),
                new Document("_id", 1L), new ReplaceOptions().upsert(true))));
        BulkPlan compound = planOrdered(List.of(insert(id), new ReplaceOneModel<>(new Document("_id", id),
                new Document("_id", new Document("a", 1).append("b", 2)).append("v", 1), new ReplaceOptions().upsert(true))));

        assertThat(reordered.superseded()).isEmpty();
        assertThat(retyped.superseded()).isEmpty();
        assertThat(compound.superseded()).containsExactly(Map.entry(0, 1));
    }

    @Test
    void superseding_isPerKey() {
        BulkPlan plan = planUnordered(List.of(insert(1), insert(2), update(2), delete(1)));

        assertThat(plan.superseded()).containsExactly(Map.entry(0, 3));
        assertThat(roundIndices(plan)).containsExactly(List.of(1, 3), List.of(2));
    }

    @Test
    void numericallyEqualIds_supersedeEachOther() {
        BulkPlan plan = planOrdered(List.of(insert(1), update(1L), delete(1.0)));

        assertThat(plan.superseded()).containsOnlyKeys(0, 1);
    }
}
