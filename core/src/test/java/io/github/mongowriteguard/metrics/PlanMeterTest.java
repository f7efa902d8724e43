package io.github.mongowriteguard.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** {@code mongodb.guard.plans}: a bulk run as the driver's ORDERED bulk shows, by mode and reason. */
class PlanMeterTest {

    @Test
    void orderedBulkRunAsGiven_andOneInRounds_areCountedByModeAndReason() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        WriteGuard guard = WriteGuard.builder().meterRegistry(registry).build();
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = MongoClients.create(guard.configure(MongoClientSettings.builder()
                                .applyConnectionString(new ConnectionString(cluster.connectionString()))
                                .applyToSocketSettings(s -> s.readTimeout(3, TimeUnit.SECONDS)))
                        .build())) {
            GuardedCollection<Document> guarded =
                    guard.guardCollection(client, client.getDatabase("plans").getCollection("c"));
            List<WriteModel<Document>> pinned = List.of(
                    new UpdateManyModel<>(Filters.eq("_id", 1), Updates.set("x", 1), new UpdateOptions().upsert(true)),
                    new UpdateManyModel<>(Filters.eq("_id", 2), Updates.set("x", 1), new UpdateOptions().upsert(true)));
            List<WriteModel<Document>> unkeyed = List.of(
                    new UpdateManyModel<>(Filters.eq("_id", 1), Updates.set("y", 1)),
                    new UpdateManyModel<>(Filters.eq("x", 1), Updates.set("y", 2)));

            guarded.bulkWrite(pinned, new BulkWriteOptions().ordered(true));
            guarded.bulkWrite(unkeyed, new BulkWriteOptions().ordered(true));

            assertThat(registry.get("mongodb.guard.plans")
                            .tags("namespace", "plans.c", "mode", "unordered-rounds", "reason", "none")
                            .counter()
                            .count())
                    .isEqualTo(1.0);
            assertThat(registry.get("mongodb.guard.plans")
                            .tags("namespace", "plans.c", "mode", "preserve-order", "reason", "multi-document")
                            .counter()
                            .count())
                    .isEqualTo(1.0);
        }
    }
}
