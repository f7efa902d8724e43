package io.github.mongowriteguard.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoNamespace;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.CreateCollectionOptions;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.ValidationOptions;
import com.mongodb.client.model.bulk.ClientNamespacedWriteModel;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.testkit.TestDeployment;
import io.micrometer.common.KeyValue;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.tck.TestObservationRegistry;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * Meters and observations carry no document value: every kind of guarded write (inserts, updates, replacements,
 * deletes, find-and-modify, bulks of both orders, the client-level bulk), with distinctive values in {@code _id}s,
 * fields, filters and updates, including writes that fail on a duplicate key or a {@code $jsonSchema} validator (on insert, update and replacement), and
 * then every meter name, tag and description and every observation name, contextual name and key value is searched for
 * those values.
 */
class NoDocumentValueInTelemetryTest {
    /** In every value the writes use; no meter or observation may carry it. */
    private static final String MARK = "zqleak";

    private static final String ID = MARK + "-id-7f3a";
    private static final String OTHER_ID = MARK + "-id-9c41";
    private static final String FIELD_VALUE = MARK + "-card-4111111111111111";
    private static final String FILTER_VALUE = MARK + "-filter-5500";
    private static final String UPDATE_VALUE = MARK + "-update-3782";
    private static final int NUMBER = 918_273_645;

    @Test
    void guardedWrites_andTheirFailures_putNoDocumentValueInMetersObservationsOrLogLines() {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        TestObservationRegistry observations = TestObservationRegistry.create();
        List<Observation.Context> seen = new CopyOnWriteArrayList<>();
        observations.observationConfig().observationHandler(new RecordingHandler(seen));
        WriteGuard guard = WriteGuard.builder()
                .settings(WriteGuardSettings.defaults())
                .meterRegistry(meters)
                .observationRegistry(observations)
                .build();
        List<Throwable> failures = new ArrayList<>();
        // the guard's log lines (slf4j-simple writes them to System.err, WARN and above as configured for tests)
        PrintStream stderr = System.err;
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
        try (TestDeployment deployment = TestDeployment.replicaSet();
                MongoClient client = MongoClients.create(guard.configure(MongoClientSettings.builder()
                                .applyConnectionString(new ConnectionString(deployment.connectionString()))
                                .applyToSocketSettings(s -> s.readTimeout(60, TimeUnit.SECONDS)))
                        .build())) {
            client.getDatabase("telemetry")
                    .createCollection(
                            "validated",
                            new CreateCollectionOptions()
                                    .validationOptions(new ValidationOptions()
                                            .validator(BsonDocument.parse(
                                                    "{$jsonSchema: {required: ['qty'], properties: {qty: {bsonType:"
                                                            + " 'int', minimum: 0}}}}"))));
            GuardedCollection<Document> orders = guard.guardCollection(
                    client, client.getDatabase("telemetry").getCollection("orders"));
            GuardedCollection<Document> validated = guard.guardCollection(
                    client, client.getDatabase("telemetry").getCollection("validated"));

            orders.insertOne(new Document("_id", ID).append("card", FIELD_VALUE).append("n", NUMBER));
            orders.insertMany(List.of(
                    new Document("_id", OTHER_ID).append("card", FIELD_VALUE),
                    new Document("_id", NUMBER).append("tag", FILTER_VALUE)));
            orders.updateOne(Filters.eq("_id", ID), Updates.set("card", UPDATE_VALUE));
            orders.updateMany(Filters.eq("tag", FILTER_VALUE), Updates.set("note", UPDATE_VALUE));
            orders.replaceOne(
                    Filters.eq("_id", MARK + "-upserted"),
                    new Document("_id", MARK + "-upserted").append("card", FIELD_VALUE),
                    new ReplaceOptions().upsert(true));
            orders.findOneAndUpdate(Filters.eq("card", UPDATE_VALUE), Updates.inc("n", NUMBER));
            orders.findOneAndReplace(
                    Filters.eq("_id", OTHER_ID), new Document("_id", OTHER_ID).append("card", UPDATE_VALUE));
            orders.findOneAndDelete(Filters.eq("_id", MARK + "-upserted"));
            for (boolean ordered : List.of(true, false)) {
                String id = MARK + "-bulk-" + ordered;
                orders.bulkWrite(
                        List.of(
                                new InsertOneModel<>(new Document("_id", id).append("card", FIELD_VALUE)),
                                new UpdateOneModel<>(Filters.eq("_id", id), Updates.set("card", UPDATE_VALUE)),
                                new UpdateOneModel<>(
                                        Filters.eq("_id", id + "-upsert"),
                                        Updates.set("card", UPDATE_VALUE),
                                        new UpdateOptions().upsert(true)),
                                new UpdateManyModel<>(
                                        Filters.eq("card", UPDATE_VALUE), Updates.set("note", FILTER_VALUE)),
                                new ReplaceOneModel<>(
                                        Filters.eq("card", UPDATE_VALUE), new Document("card", FIELD_VALUE)),
                                new DeleteOneModel<>(Filters.eq("_id", id + "-upsert"))),
                        new BulkWriteOptions().ordered(ordered));
            }
            guard.guardClient(client)
                    .bulkWrite(List.of(
                            ClientNamespacedWriteModel.insertOne(
                                    new MongoNamespace("telemetry.orders"),
                                    new Document("_id", MARK + "-client").append("card", FIELD_VALUE)),
                            ClientNamespacedWriteModel.updateOne(
                                    new MongoNamespace("telemetry.orders"),
                                    Filters.eq("_id", MARK + "-client"),
                                    Updates.set("card", UPDATE_VALUE))));

            // failing writes: the server's error messages carry the values; the telemetry must not
            failures.add(catchThrowable(() -> orders.insertOne(new Document("_id", ID).append("card", FIELD_VALUE))));
            failures.add(catchThrowable(() -> orders.bulkWrite(
                    List.of(
                            new InsertOneModel<>(new Document("_id", MARK + "-fresh")),
                            new InsertOneModel<>(new Document("_id", OTHER_ID).append("card", FIELD_VALUE))),
                    new BulkWriteOptions().ordered(false))));
            failures.add(catchThrowable(() -> validated.insertOne(new Document("_id", MARK + "-invalid")
                    .append("qty", -NUMBER)
                    .append("card", FIELD_VALUE))));
            failures.add(catchThrowable(() -> validated.insertMany(List.of(
                    new Document("_id", MARK + "-valid").append("qty", 1),
                    new Document("_id", MARK + "-invalid-2").append("card", FIELD_VALUE)))));
            validated.insertOne(new Document("_id", MARK + "-stored").append("qty", 1));
            failures.add(catchThrowable(
                    () -> validated.updateOne(Filters.eq("_id", MARK + "-stored"), Updates.set("qty", -NUMBER))));
            failures.add(catchThrowable(() -> validated.findOneAndReplace(
                    Filters.eq("_id", MARK + "-stored"), new Document("card", FIELD_VALUE))));
        } finally {
            System.setErr(stderr);
        }

        // the failures happened, and the server said which values it refused (so the search below can fail)
        assertThat(failures)
                .hasSize(6)
                .allSatisfy(failure -> assertThat(failure).isNotNull());
        assertThat(failures.get(0).getMessage()).contains(ID);
        List<String> values = Stream.of(ID, OTHER_ID, FIELD_VALUE, FILTER_VALUE, UPDATE_VALUE, MARK)
                .toList();
        assertThat(meters.getMeters()).as("meters").isNotEmpty();
        assertThat(seen).as("observations").hasSizeGreaterThanOrEqualTo(18);

        List<String> meterTexts = new ArrayList<>();
        for (Meter meter : meters.getMeters()) {
            Meter.Id id = meter.getId();
            meterTexts.add(id.getName());
            meterTexts.add(Objects.toString(id.getDescription(), ""));
            meterTexts.add(Objects.toString(id.getBaseUnit(), ""));
            for (Tag tag : id.getTags()) {
                meterTexts.add(tag.getKey());
                meterTexts.add(tag.getValue());
            }
        }
        List<String> observationTexts = new ArrayList<>();
        for (Observation.Context context : seen) {
            observationTexts.add(Objects.toString(context.getName(), ""));
            observationTexts.add(Objects.toString(context.getContextualName(), ""));
            Function<KeyValue, Stream<String>> both = kv -> Stream.of(kv.getKey(), kv.getValue());
            context.getLowCardinalityKeyValues().stream().flatMap(both).forEach(observationTexts::add);
            context.getHighCardinalityKeyValues().stream().flatMap(both).forEach(observationTexts::add);
        }
        assertNoneCarries(meterTexts, values, "a meter");
        assertNoneCarries(observationTexts, values, "an observation");
        assertNoneCarries(log.toString(StandardCharsets.UTF_8).lines().toList(), values, "a log line");
    }

    private static void assertNoneCarries(List<String> texts, List<String> values, String where) {
        for (String text : texts) {
            for (String value : values) {
                assertThat(text.toLowerCase())
                        .as(where + " carries a document value: " + text)
                        .doesNotContain(value.toLowerCase());
            }
            assertThat(text).as(where + " carries a document number: " + text).doesNotContain(String.valueOf(NUMBER));
        }
    }

    /** Keeps every context the registry starts, so ones that ended in an error are searched too. */
    private record RecordingHandler(List<Observation.Context> seen) implements ObservationHandler<Observation.Context> {
        @Override
        public void onStart(Observation.Context context) {
            seen.add(context);
        }

        @Override
        public boolean supportsContext(Observation.Context context) {
            return true;
        }
    }
}
