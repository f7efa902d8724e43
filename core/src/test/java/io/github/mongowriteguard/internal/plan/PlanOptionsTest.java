package io.github.mongowriteguard.internal.plan;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.BulkWriteOptions;
import io.github.mongowriteguard.WriteGuardSettings;
import org.junit.jupiter.api.Test;

class PlanOptionsTest {

    @Test
    void defaults_areOrderedAndNotStrict_likeTheDriver() {
        PlanOptions options = PlanOptions.builder().build();

        assertThat(options.isOrdered()).isTrue();
        assertThat(options.isStrictOrdered()).isFalse();
        assertThat(options).isEqualTo(PlanOptions.ordered()).hasSameHashCodeAs(PlanOptions.ordered());
        assertThat(new BulkWriteOptions().isOrdered()).isTrue();
    }

    @Test
    void from_readsOrderedFromDriverOptions_andStrictFromSettings() {
        WriteGuardSettings strict =
                WriteGuardSettings.builder().strictOrdered(true).build();

        PlanOptions options = PlanOptions.from(new BulkWriteOptions().ordered(false), strict.isStrictOrdered());

        assertThat(options.isOrdered()).isFalse();
        assertThat(options.isStrictOrdered()).isTrue();
    }

    @Test
    void builderFromExisting_copiesEveryField() {
        PlanOptions original = PlanOptions.builder()
                .ordered(false)
                .strictOrdered(true)
                .lastWriteWins(true)
                .singleDocumentById(SingleDocumentById.always())
                .build();

        assertThat(PlanOptions.builder(original).build()).isEqualTo(original);
        assertThat(PlanOptions.builder(original).ordered(true).build()).isNotEqualTo(original);
        assertThat(PlanOptions.builder(original).lastWriteWins(false).build()).isNotEqualTo(original);
        assertThat(PlanOptions.builder(original)
                        .singleDocumentById(SingleDocumentById.never("unknown"))
                        .build())
                .isNotEqualTo(original);
        assertThat(PlanOptions.unordered())
                .hasToString(
                        "PlanOptions{ordered=false, strictOrdered=false, lastWriteWins=false, singleDocumentById=SingleDocumentById{never:"
                                + " the planner was not told the collection's collation and shard key}}");
    }
}
