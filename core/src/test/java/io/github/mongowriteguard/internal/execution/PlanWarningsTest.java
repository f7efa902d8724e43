package io.github.mongowriteguard.internal.execution;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.internal.plan.BulkPlanner;
import io.github.mongowriteguard.internal.plan.PlanOptions;
import io.github.mongowriteguard.internal.plan.PlannedBulk;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** The WARN line for a bulk run as given or without same-copy retries: what it names, and how often. */
class PlanWarningsTest {
    private final AtomicLong now = new AtomicLong();
    private final List<String> lines = new ArrayList<>();
    private final PlanWarnings warnings = new PlanWarnings(now::get, () -> true, lines::add);

    private static PlannedBulk plan(boolean ordered, List<WriteModel<Document>> models) {
        return BulkPlanner.of(Document.class, MongoClientSettings.getDefaultCodecRegistry())
                .plan(models, PlanOptions.builder().ordered(ordered).build());
    }

    private static List<WriteModel<Document>> orderedWithUnkeyed() {
        return List.of(
                new UpdateOneModel<>(Filters.eq("_id", "card-4111"), Updates.set("x", 1)),
                new UpdateManyModel<>(Filters.eq("email", "secret@example.com"), Updates.set("x", 1)));
    }

    @Test
    void orderedBulkRunAsGiven_namesTheFirstUnkeyedWriteAndTheRemedy_neverItsValues() {
        String line = warnings.note("shop.orders", plan(true, orderedWithUnkeyed()));

        assertThat(line)
                .isEqualTo(lines.get(0))
                .contains("shop.orders")
                .contains("ran as the driver's ORDERED bulk, as given (multi-document)")
                .contains("write 1 (UpdateManyModel) can change many documents")
                .contains("pin _id by equality in its filter")
                .contains("make the bulk unordered")
                .doesNotContain("secret")
                .doesNotContain("4111");
    }

    @Test
    void sameNamespaceAndReason_isLoggedOncePerInterval_withTheCountOfTheOthers() {
        warnings.note("shop.orders", plan(true, orderedWithUnkeyed()));
        assertThat(warnings.note("shop.orders", plan(true, orderedWithUnkeyed())))
                .isNull();
        assertThat(warnings.note("shop.other", plan(true, orderedWithUnkeyed())))
                .isNotNull();
        now.addAndGet(PlanWarnings.INTERVAL.plus(Duration.ofSeconds(1)).toNanos());

        String later = warnings.note("shop.orders", plan(true, orderedWithUnkeyed()));

        assertThat(later).contains("(2 such bulks since the last line)");
        assertThat(lines).hasSize(3);
    }

    @Test
    void aLoneMultiDocumentWrite_doesNotSilenceTheLineOfAnOrderedBulkRunAsGiven() {
        assertThat(warnings.note(
                        "shop.orders", plan(true, List.of(new DeleteManyModel<>(Filters.eq("state", "secret"))))))
                .contains("sent multi-document");

        assertThat(warnings.note("shop.orders", plan(true, orderedWithUnkeyed())))
                .contains("ran as the driver's ORDERED bulk, as given (multi-document)");
        assertThat(lines).hasSize(2);
    }

    @Test
    void unorderedBulkWithAMultiDocumentWrite_saysItIsNeverResentAsTheSameCopy() {
        String line = warnings.note(
                "shop.orders", plan(false, List.of(new DeleteManyModel<>(Filters.eq("state", "secret")))));

        assertThat(line)
                .contains("sent multi-document")
                .contains("never retried")
                .contains("write 0 (DeleteManyModel)")
                .doesNotContain("secret");
    }

    @Test
    void multiDocumentWriteOfACallThatOptedInToItsRetries_saysItIsRetriedAsANewCopy_notNeverRetried() {
        List<WriteModel<Document>> updateMany =
                List.of(new UpdateManyModel<>(Filters.eq("state", "secret"), Updates.set("seen", true)));

        String optedIn = warnings.note("shop.orders", plan(false, updateMany), true);
        String plain = warnings.note("shop.orders", plan(false, updateMany), false);

        assertThat(optedIn)
                .contains("retried (withIdempotentMultiDocumentRetries) only as a new copy")
                .doesNotContain("never retried")
                .doesNotContain("secret");
        assertThat(plain)
                .as("an opted-in call must not silence the line of a call that did not opt in")
                .contains("never retried");
    }

    @Test
    void oneUnkeyedSingleDocumentWriteAsGiven_isNotLogged_oneMultiDocumentWriteIs() {
        assertThat(warnings.note(
                        "shop.orders",
                        plan(true, List.of(new UpdateOneModel<>(Filters.eq("state", "x"), Updates.set("x", 1))))))
                .isNull();
        assertThat(warnings.note(
                        "shop.orders", plan(true, List.of(new DeleteManyModel<>(Filters.eq("state", "secret"))))))
                .contains("write 0 (DeleteManyModel)")
                .contains("never retried")
                .doesNotContain("ORDERED bulk costs");
    }

    @Test
    void bulkOfKeyedWrites_isNotLogged() {
        assertThat(warnings.note(
                        "shop.orders",
                        plan(true, List.of(new UpdateOneModel<>(Filters.eq("_id", 1), Updates.set("x", 1))))))
                .isNull();
        assertThat(lines).isEmpty();
    }
}
