package io.github.mongowriteguard.testkit.spec;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.ReadConcern;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

/**
 * Runs tests of the MongoDB drivers' <a href="https://github.com/mongodb/specifications/blob/master/source/unified-test-format/unified-test-format.md">unified
 * test format</a> (schema 1.x) with the real Java driver against one {@link SpecTarget}.
 *
 * <p>Supported: {@code runOnRequirements} ({@code minServerVersion}, {@code maxServerVersion}, {@code topologies},
 * {@code serverless}), {@code skipReason}, {@code createEntities} (clients with {@code uriOptions} - including
 * {@code timeoutMS} -, {@code observeEvents} for command events, {@code ignoreCommandMonitoringEvents},
 * {@code observeSensitiveCommands}, {@code useMultipleMongoses}, {@code awaitMinPoolSizeMS}; databases and
 * collections with read/write concern, read preference and {@code timeoutMS} options; sessions without options),
 * {@code initialData}, the CRUD operations in {@link Operations} (every write and the reads the Java driver has
 * helpers for, with a per-operation {@code timeoutMS}), the test runner's {@code failPoint} and
 * {@code createEntities}, {@code expectResult} and {@code saveResultAsEntity} with the operators in
 * {@link ValueMatcher}, {@code expectError} as {@link ErrorExpectation}, {@code ignoreResultAndError},
 * {@code expectEvents} for command events ({@code ignoreExtraEvents}) and {@code outcome}.
 *
 * <p>Anything else (transactions, {@code targetedFailPoint}, CMAP or SDAM events, change stream iteration,
 * GridFS, ...) makes the test <em>skipped</em> with the reason, never passed. Fail points the test set are
 * turned off after it, and the runner waits until commands a fail point still blocks on an emulated server
 * have ended, so that tests do not leak into each other.
 */
final class UnifiedTestRunner implements AutoCloseable {
    private static final Set<String> RUNNER_OPERATIONS = Set.of("failPoint", "createEntities");
    private static final Set<String> UNSUPPORTED_OPERATIONS = Set.of(
            "count",
            "listIndexNames",
            "targetedFailPoint",
            "startTransaction",
            "commitTransaction",
            "abortTransaction",
            "withTransaction",
            "iterateUntilDocumentOrError",
            "iterateOnce",
            "clientBulkWrite",
            "assertSessionPinned",
            "assertSessionUnpinned",
            "assertSessionTransactionState",
            "loop",
            "waitForEvent",
            "assertEventCount",
            "waitForPrimaryChange",
            "runOnThread",
            "waitForThread");

    private final SpecTarget target;
    private final SpecClients clients;
    private MongoClient internal;

    UnifiedTestRunner(SpecTarget target) {
        this(target, SpecClients.DRIVER);
    }

    /** A runner whose client and collection entities {@code clients} makes (the driver's, or a guard's). */
    UnifiedTestRunner(SpecTarget target, SpecClients clients) {
        this.target = target;
        this.clients = clients;
    }

    /** The runner's own client: initial data, outcome, turning fail points off. */
    private synchronized MongoClient internal() {
        if (internal == null) {
            internal = MongoClients.create(MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(target.connectionString(false)))
                    .applyToClusterSettings(c -> c.serverSelectionTimeout(10, TimeUnit.SECONDS))
                    .build());
        }
        return internal;
    }

    /** Runs one test of {@code file}; throws an assertion error on failure and TestAbortedException to skip. */
    void run(SpecFile file, BsonDocument test) {
        BsonDocument document = file.document();
        String schema =
                document.getString("schemaVersion", new BsonString("1.0")).getValue();
        if (!schema.startsWith("1.")) {
            throw new TestAbortedException("schemaVersion " + schema + " is not supported by the runner (1.x)");
        }
        skipIfUnmet(document.getArray("runOnRequirements", null));
        skipIfUnmet(test.getArray("runOnRequirements", null));
        KnownDriverIssues.skipIfKnown(test.getString("description").getValue(), target);
        if (test.containsKey("skipReason")) {
            throw new TestAbortedException(
                    "skipReason: " + test.getString("skipReason").getValue());
        }
        String clientsSkip = clients.skipReason(file.name(), test);
        if (clientsSkip != null) {
            throw new TestAbortedException(clientsSkip);
        }
        boolean compareEvents = clients.eventsNotCompared(file.name(), test) == null;
        for (BsonValue operation : test.getArray("operations")) {
            String name = operation.asDocument().getString("name").getValue();
            if (UNSUPPORTED_OPERATIONS.contains(name)) {
                throw Operations.unsupported("operation " + name);
            }
            if (operation.asDocument().containsKey("expectError")) {
                ErrorExpectation.requireSupported(operation.asDocument().getDocument("expectError"));
            }
        }

        for (BsonValue data : document.getArray("initialData", new BsonArray())) {
            loadInitialData(data.asDocument());
        }
        List<FailPointSet> failPoints = new ArrayList<>();
        try (Entities entities = new Entities(target, clients)) {
            try {
                entities.create(
                        document.getArray("createEntities", new BsonArray()).getValues());
                ValueMatcher matcher = new ValueMatcher(entities);
                Operations operations = new Operations(entities);
                BsonArray steps = test.getArray("operations");
                for (int i = 0; i < steps.size(); i++) {
                    runOperation(
                            "operations[" + i + "]",
                            steps.get(i).asDocument(),
                            entities,
                            operations,
                            matcher,
                            failPoints);
                }
                for (BsonValue expected :
                        compareEvents ? test.getArray("expectEvents", new BsonArray()) : new BsonArray()) {
                    EventExpectation.check(expected.asDocument(), entities, matcher);
                }
            } finally {
                for (FailPointSet failPoint : failPoints) {
                    failPoint.turnOff(entities);
                }
            }
        } finally {
            target.awaitQuiet();
        }
        ValueMatcher strict = new ValueMatcher(null);
        for (BsonValue outcome : test.getArray("outcome", new BsonArray())) {
            checkOutcome(outcome.asDocument(), strict);
        }
    }

    private void skipIfUnmet(BsonArray requirements) {
        String unmet = RunOnRequirements.unmet(requirements, target);
        if (unmet != null) {
            throw new TestAbortedException(unmet);
        }
    }

    private void runOperation(
            String path,
            BsonDocument operation,
            Entities entities,
            Operations operations,
            ValueMatcher matcher,
            List<FailPointSet> failPoints) {
        String name = operation.getString("name").getValue();
        String object = operation.getString("object").getValue();
        if (object.equals("testRunner")) {
            if (!RUNNER_OPERATIONS.contains(name)) {
                throw Operations.unsupported("test runner operation " + name);
            }
            BsonDocument arguments = operation.getDocument("arguments");
            if (name.equals("createEntities")) {
                entities.create(arguments.getArray("entities").getValues());
            } else {
                String client = arguments.getString("client").getValue();
                BsonDocument failPoint = arguments.getDocument("failPoint");
                entities.client(client).getDatabase("admin").runCommand(failPoint);
                failPoints.add(new FailPointSet(
                        client, failPoint.getString("configureFailPoint").getValue()));
            }
            return;
        }
        Object result = null;
        Throwable error = null;
        try {
            result = operations.run(operation);
        } catch (TestAbortedException e) {
            throw e;
        } catch (RuntimeException e) {
            error = e;
        }
        String described = path + " " + name + " on " + object;
        if (operation.containsKey("expectError")) {
            if (error == null) {
                closeIfUnsaved(result);
                throw new AssertionFailedError(described + ": expected an error, but it returned " + result);
            }
            ErrorExpectation.check(operation.getDocument("expectError"), error, matcher);
            return;
        }
        if (error != null) {
            if (operation
                    .getBoolean("ignoreResultAndError", org.bson.BsonBoolean.FALSE)
                    .getValue()) {
                return;
            }
            throw new AssertionFailedError(described + " failed: " + error, error);
        }
        if (operation.containsKey("expectResult")) {
            if (result instanceof ChangeStreamValue) {
                closeIfUnsaved(result);
                throw Operations.unsupported("expectResult on a change stream");
            }
            matcher.assertMatches(described + " result", operation.get("expectResult"), (BsonValue) result);
        }
        if (operation.containsKey("saveResultAsEntity")) {
            entities.save(operation.getString("saveResultAsEntity").getValue(), result);
        } else {
            closeIfUnsaved(result);
        }
    }

    private static void closeIfUnsaved(Object result) {
        if (result instanceof ChangeStreamValue changeStream) {
            changeStream.close();
        }
    }

    private void loadInitialData(BsonDocument data) {
        MongoDatabase database = internal()
                .getDatabase(data.getString("databaseName").getValue())
                .withWriteConcern(WriteConcern.MAJORITY);
        String name = data.getString("collectionName").getValue();
        if (data.containsKey("createOptions")) {
            throw new TestAbortedException("initialData.createOptions is not supported by the runner");
        }
        database.getCollection(name).drop();
        List<BsonDocument> documents = new ArrayList<>();
        data.getArray("documents").forEach(d -> documents.add(d.asDocument()));
        if (documents.isEmpty()) {
            database.createCollection(name);
        } else {
            database.getCollection(name, BsonDocument.class).insertMany(documents);
        }
    }

    private void checkOutcome(BsonDocument outcome, ValueMatcher strict) {
        String namespace = outcome.getString("databaseName").getValue() + "."
                + outcome.getString("collectionName").getValue();
        MongoCollection<BsonDocument> collection = internal()
                .getDatabase(outcome.getString("databaseName").getValue())
                .withReadPreference(ReadPreference.primary())
                .withReadConcern(ReadConcern.LOCAL)
                .getCollection(outcome.getString("collectionName").getValue(), BsonDocument.class);
        BsonArray actual = new BsonArray();
        collection.find().sort(new BsonDocument("_id", new BsonInt32(1))).forEach(actual::add);
        BsonArray expected = outcome.getArray("documents");
        if (expected.size() != actual.size()) {
            throw new AssertionFailedError("outcome " + namespace + ": expected " + expected + " but was " + actual);
        }
        for (int i = 0; i < expected.size(); i++) {
            strict.assertMatchesExactly("outcome " + namespace + "[" + i + "]", expected.get(i), actual.get(i));
        }
    }

    /** A fail point a test configured through one of its clients, turned off through the same client. */
    private record FailPointSet(String client, String name) {
        void turnOff(Entities entities) {
            try {
                entities.client(client)
                        .getDatabase("admin")
                        .runCommand(new BsonDocument("configureFailPoint", new BsonString(name))
                                .append("mode", new BsonString("off")));
            } catch (RuntimeException ignored) {
                // the server or client is gone; nothing is left to turn off
            }
        }
    }

    @Override
    public synchronized void close() {
        if (internal != null) {
            internal.close();
            internal = null;
        }
    }
}
