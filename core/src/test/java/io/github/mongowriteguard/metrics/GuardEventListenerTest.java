package io.github.mongowriteguard.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;

class GuardEventListenerTest {

    @Test
    void aListenerThatThrows_neverBreaksTheWrite_andTheOthersStillHearIt() {
        List<GuardEventListener.WriteCompleted> heard = new CopyOnWriteArrayList<>();
        WriteGuard guard = WriteGuard.builder()
                .addListener(new GuardEventListener() {
                    @Override
                    public void writeCompleted(WriteCompleted event) {
                        throw new IllegalStateException("a broken listener");
                    }
                })
                .addListener(new GuardEventListener() {
                    @Override
                    public void writeCompleted(WriteCompleted event) {
                        heard.add(event);
                    }
                })
                .build();
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = client(guard, cluster)) {
            GuardedCollection<Document> guarded =
                    guard.guardCollection(client, client.getDatabase("ev").getCollection("c"));

            guarded.insertOne(new Document("v", 1));

            assertThat(heard).singleElement().satisfies(event -> {
                assertThat(event.namespace()).isEqualTo("ev.c");
                assertThat(event.operation()).isEqualTo("insertOne");
                assertThat(event.outcome()).isEqualTo(CallOutcome.SUCCESS);
            });
            assertThat(client.getDatabase("ev").getCollection("c").countDocuments())
                    .isEqualTo(1);
        }
    }

    @Test
    void meters_areTaggedOnlyWithBoundedValues_neverDocumentContents() {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        WriteGuard guard = WriteGuard.builder().meterRegistry(meters).build();
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = client(guard, cluster)) {
            GuardedCollection<Document> guarded =
                    guard.guardCollection(client, client.getDatabase("ev").getCollection("c"));

            guarded.bulkWrite(
                    List.of(
                            new InsertOneModel<>(new Document("_id", "secret-order-42").append("card", "4111")),
                            new ReplaceOneModel<>(
                                    Filters.eq("_id", "secret-order-42"),
                                    new Document("_id", "secret-order-42"),
                                    new ReplaceOptions().upsert(true))),
                    new BulkWriteOptions().ordered(true));

            assertThat(meters.get("mongodb.guard.rounds").summary().totalAmount())
                    .isEqualTo(2);
            for (Meter meter : meters.getMeters()) {
                assertThat(meter.getId().getName()).startsWith("mongodb.guard.");
                meter.getId().getTags().forEach(tag -> {
                    assertThat(tag.getKey())
                            .isIn(
                                    "namespace",
                                    "operation",
                                    "outcome",
                                    "attempt",
                                    "verdict",
                                    "mode",
                                    "reason",
                                    "structure");
                    assertThat(tag.getValue())
                            .doesNotContain("secret")
                            .doesNotContain("4111")
                            .doesNotContain("127.0.0.1");
                });
            }
        }
    }

    private static MongoClient client(WriteGuard guard, EmulatedReplicaSet cluster) {
        return MongoClients.create(guard.configure(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(cluster.connectionString()))
                        .applyToSocketSettings(s -> s.readTimeout(3, TimeUnit.SECONDS)))
                .build());
    }
}
