package io.github.mongowriteguard.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.ClientBulkWriteException;
import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoNamespace;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.bulk.ClientBulkWriteOptions;
import com.mongodb.client.model.bulk.ClientNamespacedWriteModel;
import io.github.mongowriteguard.GuardedClient;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** The Observation around each guarded call, through the real driver on the emulated replica set. */
class GuardObservationTest {

    @Test
    void eachGuardedCall_isOneObservation_withBoundedKeyValues_andFailuresRecordTheirError() {
        TestObservationRegistry registry = TestObservationRegistry.create();
        List<Observation.Context> stopped = new CopyOnWriteArrayList<>();
        List<String> outcomesAtStart = new CopyOnWriteArrayList<>();
        registry.observationConfig().observationHandler(new ObservationHandler<>() {
            @Override
            public boolean supportsContext(Observation.Context context) {
                return true;
            }

            @Override
            public void onStart(Observation.Context context) {
                // What Micrometer's meter handler tags the ".active" long-task timer with: not yet an outcome.
                outcomesAtStart.add(context.getLowCardinalityKeyValue("mongodb.guard.outcome")
                        .getValue());
            }

            @Override
            public void onStop(Observation.Context context) {
                stopped.add(context);
            }
        });
        WriteGuard guard = WriteGuard.builder().observationRegistry(registry).build();
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = client(guard, cluster)) {
            GuardedCollection<Document> guarded =
                    guard.guardCollection(client, client.getDatabase("obs").getCollection("orders"));

            guarded.bulkWrite(
                    List.of(
                            new InsertOneModel<>(new Document("_id", "secret-order-42").append("card", "4111")),
                            new ReplaceOneModel<>(
                                    Filters.eq("_id", "secret-order-42"),
                                    new Document("_id", "secret-order-42").append("card", "4111"),
                                    new ReplaceOptions().upsert(true))),
                    new BulkWriteOptions().ordered(true));
            Document updated =
                    guarded.findOneAndUpdate(Filters.eq("_id", "secret-order-42"), Updates.set("card", "5500"));
            assertThatThrownBy(() -> guarded.insertOne(new Document("_id", "secret-order-42").append("card", "4111")))
                    .isInstanceOf(MongoWriteException.class);

            assertThat(updated).isNotNull();
            TestObservationRegistryAssert.assertThat(registry)
                    .hasNumberOfObservationsEqualTo(3)
                    .doesNotHaveAnyRemainingCurrentObservation()
                    .hasAnObservation(o -> o.hasNameEqualTo("mongodb.guard.write")
                            .hasContextualNameEqualTo("guarded bulkWrite obs.orders")
                            .hasLowCardinalityKeyValue("db.namespace", "obs.orders")
                            .hasLowCardinalityKeyValue("mongodb.guard.operation", "bulkWrite")
                            .hasLowCardinalityKeyValue("mongodb.guard.outcome", "success")
                            .hasLowCardinalityKeyValue("mongodb.guard.plan", "unordered-rounds")
                            .doesNotHaveError())
                    .hasAnObservation(o -> o.hasNameEqualTo("mongodb.guard.write")
                            .hasContextualNameEqualTo("guarded findOneAndUpdate obs.orders")
                            .hasLowCardinalityKeyValue("mongodb.guard.operation", "findOneAndUpdate")
                            .hasLowCardinalityKeyValue("mongodb.guard.outcome", "success")
                            .hasLowCardinalityKeyValue("mongodb.guard.plan", "none")
                            .doesNotHaveError())
                    .hasAnObservation(o -> o.hasNameEqualTo("mongodb.guard.write")
                            .hasContextualNameEqualTo("guarded insertOne obs.orders")
                            .hasLowCardinalityKeyValue("mongodb.guard.operation", "insertOne")
                            .hasLowCardinalityKeyValue("mongodb.guard.outcome", "failure")
                            .hasError());

            assertThat(stopped).hasSize(3).allSatisfy(context -> {
                assertThat(context).isInstanceOf(GuardObservationContext.class);
                assertThat(context.getHighCardinalityKeyValues()).isEmpty();
                KeyValues keys = context.getLowCardinalityKeyValues();
                assertThat(keys.stream().map(KeyValue::getKey))
                        .containsExactlyInAnyOrder(
                                "db.namespace",
                                "mongodb.guard.operation",
                                "mongodb.guard.outcome",
                                "mongodb.guard.plan");
                keys.forEach(key -> assertThat(key.getValue())
                        .doesNotContain("secret")
                        .doesNotContain("4111")
                        .doesNotContain("5500")
                        .doesNotContain("127.0.0.1")
                        .doesNotContain("mongodb://"));
                assertThat(context.getContextualName()).doesNotContain("secret").doesNotContain("4111");
            });
            assertThat(stopped.get(2).getError()).isInstanceOf(MongoWriteException.class);
            assertThat(outcomesAtStart).containsExactly("none", "none", "none");
        }
    }

    @Test
    void clientBulkWrite_isOneObservationOnAdmin_aroundItsNamespaces_andRecordsTheExceptionItThrows() {
        TestObservationRegistry registry = TestObservationRegistry.create();
        WriteGuard guard = WriteGuard.builder().observationRegistry(registry).build();
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = client(guard, cluster)) {
            client.getDatabase("obs").getCollection("a").insertOne(new Document("_id", 1));
            GuardedClient guarded = guard.guardClient(client);
            ClientBulkWriteOptions unordered =
                    ClientBulkWriteOptions.clientBulkWriteOptions().ordered(false);

            ClientBulkWriteException thrown = catchThrowableOfType(
                    ClientBulkWriteException.class,
                    () -> guarded.bulkWrite(
                            List.of(
                                    ClientNamespacedWriteModel.insertOne(
                                            new MongoNamespace("obs.a"), new Document("_id", 1)),
                                    ClientNamespacedWriteModel.insertOne(
                                            new MongoNamespace("obs.b"), new Document("_id", 2))),
                            unordered));
            guarded.bulkWrite(
                    List.of(ClientNamespacedWriteModel.insertOne(new MongoNamespace("obs.b"), new Document("_id", 3))),
                    unordered);

            assertThat(thrown.getWriteErrors()).containsOnlyKeys(0);
            assertThat(thrown.getPartialResult())
                    .hasValueSatisfying(r -> assertThat(r.getInsertedCount()).isEqualTo(1));
            TestObservationRegistryAssert.assertThat(registry)
                    .hasNumberOfObservationsWithNameEqualTo("mongodb.guard.write", 5)
                    .doesNotHaveAnyRemainingCurrentObservation()
                    .hasAnObservation(o -> o.hasContextualNameEqualTo("guarded clientBulkWrite admin")
                            .hasLowCardinalityKeyValue("db.namespace", "admin")
                            .hasLowCardinalityKeyValue("mongodb.guard.operation", "clientBulkWrite")
                            .hasLowCardinalityKeyValue("mongodb.guard.outcome", "partial")
                            .hasLowCardinalityKeyValue("mongodb.guard.plan", "none")
                            .hasError(thrown))
                    .hasAnObservation(o -> o.hasContextualNameEqualTo("guarded clientBulkWrite admin")
                            .hasLowCardinalityKeyValue("mongodb.guard.outcome", "success")
                            .doesNotHaveError())
                    // Each namespace's writes: their own observation, inside the call's, as before.
                    .hasAnObservation(o -> o.hasContextualNameEqualTo("guarded clientBulkWrite obs.a")
                            .hasLowCardinalityKeyValue("mongodb.guard.outcome", "failure")
                            .hasLowCardinalityKeyValue("mongodb.guard.plan", "unordered-rounds")
                            .doesNotHaveError()
                            .hasParentObservationContextMatching(
                                    parent -> "admin".equals(((GuardObservationContext) parent).getNamespace())))
                    .hasAnObservation(o -> o.hasContextualNameEqualTo("guarded clientBulkWrite obs.b")
                            .hasLowCardinalityKeyValue("mongodb.guard.outcome", "success")
                            .doesNotHaveError()
                            .hasParentObservationContextMatching(
                                    parent -> "admin".equals(((GuardObservationContext) parent).getNamespace())));
        }
    }

    @Test
    void aConvention_replacesTheDefaultNamesAndKeyValues() {
        TestObservationRegistry registry = TestObservationRegistry.create();
        WriteGuard guard = WriteGuard.builder()
                .observationRegistry(registry)
                .observationConvention(new GuardObservationConvention() {
                    @Override
                    public String getName() {
                        return "orders.write";
                    }

                    @Override
                    public KeyValues getLowCardinalityKeyValues(GuardObservationContext context) {
                        return KeyValues.of("op", context.getOperation());
                    }
                })
                .build();
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = client(guard, cluster)) {
            guard.guardCollection(client, client.getDatabase("obs").getCollection("orders"))
                    .insertOne(new Document("v", 1));

            TestObservationRegistryAssert.assertThat(registry)
                    .hasSingleObservationThat()
                    .hasNameEqualTo("orders.write")
                    .hasLowCardinalityKeyValue("op", "insertOne")
                    .hasBeenStopped();
        }
    }

    @Test
    void withoutARegistry_nothingIsObserved_andWritesWork() {
        WriteGuard guard = WriteGuard.create();
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = client(guard, cluster)) {
            GuardedCollection<Document> guarded =
                    guard.guardCollection(client, client.getDatabase("obs").getCollection("orders"));
            guarded.insertOne(new Document("_id", 1));
            assertThat(client.getDatabase("obs").getCollection("orders").countDocuments())
                    .isEqualTo(1);
        }
    }

    private static MongoClient client(WriteGuard guard, EmulatedReplicaSet cluster) {
        return MongoClients.create(guard.configure(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(cluster.connectionString()))
                        .applyToSocketSettings(s -> s.readTimeout(3, TimeUnit.SECONDS)))
                .build());
    }
}
