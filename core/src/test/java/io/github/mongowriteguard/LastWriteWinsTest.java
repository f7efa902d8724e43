package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** The opt-in last-write-wins compaction on the wire: superseded replacements are not sent and say so. */
class LastWriteWinsTest {

    private static List<WriteModel<Document>> events() {
        List<WriteModel<Document>> models = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            int key = i % 100;
            models.add(new ReplaceOneModel<>(
                    new Document("_id", key),
                    new Document("_id", key).append("version", i / 100),
                    new ReplaceOptions().upsert(true)));
        }
        return models;
    }

    /** Runs {@code test} on a collection of a guard with lastWriteWins, on a fresh replica set. */
    private static void withCompaction(java.util.function.BiConsumer<GuardFixture, GuardedCollection<Document>> test) {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                GuardFixture fixture = new GuardFixture(
                        cluster.connectionString(),
                        WriteGuardSettings.builder().lastWriteWins(true).build(),
                        10_000,
                        b -> {})) {
            test.accept(fixture, fixture.wrap(fixture.client.getDatabase("db").getCollection("items")));
        }
    }

    @Test
    void compactedTopic_sendsTheLastEventPerId_theOthersSuperseded() {
        withCompaction((fixture, items) -> {
            WriteOutcome<Document> outcome = items.execute(events(), new BulkWriteOptions().ordered(true));

            assertThat(outcome.isComplete()).isTrue();
            assertThat(outcome.rounds()).isEqualTo(1);
            assertThat(outcome.commands()).isEqualTo(1);
            assertThat(outcome.counts()).containsEntry(WriteStatus.SUPERSEDED, 900);
            IndexOutcome first = outcome.outcome(0);
            assertThat(first.status()).isEqualTo(WriteStatus.SUPERSEDED);
            assertThat(first.relatedIndex()).isEqualTo(900);
            assertThat(first.wasSent()).isFalse();
            assertThat(outcome.notApplied()).isEmpty();
            assertThat(fixture.sent.get(0).getArray("updates")).hasSize(100);
            assertThat(items.unwrap().countDocuments(new Document("version", 9)))
                    .isEqualTo(100);
        });
    }

    @Test
    void driverStyleBulkWrite_countsTheWritesSent() {
        withCompaction((fixture, items) -> {
            BulkWriteResult result = items.bulkWrite(events(), new BulkWriteOptions().ordered(false));

            assertThat(result.getUpserts()).hasSize(100);
            assertThat(result.getUpserts().get(0).getIndex()).isEqualTo(900);
        });
    }

    @Test
    void offByDefault_everyWriteIsSent() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 10_000)) {
            GuardedCollection<Document> items =
                    fixture.wrap(fixture.client.getDatabase("db").getCollection("items"));

            WriteOutcome<Document> outcome = items.execute(events(), new BulkWriteOptions().ordered(false));

            assertThat(outcome.counts()).containsEntry(WriteStatus.APPLIED, 1_000);
        }
    }
}
