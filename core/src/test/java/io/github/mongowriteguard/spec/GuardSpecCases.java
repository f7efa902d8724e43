package io.github.mongowriteguard.spec;

import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Which spec tests run through the guards, and where their command events are compared (the table in
 * docs/testing.md, "The spec tests through the guards", lists every case below with its reason).
 *
 * <p>The rule: a test runs when it writes through a collection entity; its results ({@code expectResult}), errors
 * ({@code expectError}) and final documents ({@code outcome}) must be the driver's, except where a row of the README's
 * table of differences says otherwise (then the test is skipped here, naming the row). Its {@code expectEvents} are
 * compared where the guard promises the driver's commands; where a README row says the guard sends other commands,
 * they are not compared (results, errors and documents still are).
 */
final class GuardSpecCases {
    /** The collection write operations; a test with none of them sends nothing through the guard. */
    static final Set<String> WRITES = Set.of(
            "bulkWrite",
            "insertOne",
            "insertMany",
            "updateOne",
            "updateMany",
            "replaceOne",
            "deleteOne",
            "deleteMany",
            "findOneAndDelete",
            "findOneAndReplace",
            "findOneAndUpdate");

    private static final String ROW_RETRIES = "README row 'Server errors the driver does not retry, and a second"
            + " retry': the driver retries once, only on a RetryableWriteError label or a network error; the guard resends"
            + " a single-document write as the same copy on a transient code, label or write-concern error, up to its"
            + " RetryPolicy's 3 attempts, and its resend succeeds where the driver fails";
    private static final String ROW_NETWORK =
            "README rows 'Network error, client timeout' and 'Server errors the driver"
                    + " does not retry, and a second retry': up to 3 sends of the same copy (here the third succeeds, where the"
                    + " driver's one retry fails), or, when every send fails, WriteOutcomeUnknownException with the complete"
                    + " outcome instead of the driver's exception with a partial result";
    private static final String ROW_UNACKNOWLEDGED =
            "README row 'Unacknowledged write concern': the guard refuses a w:0 write before anything is sent";
    private static final String ROW_ORDERED_ROUNDS = "README rows 'ORDERED bulk of keyed writes': writes on different"
            + " _ids run as UNORDERED rounds grouped by type (here insert and delete, then the update of the inserted"
            + " _id), so the commands' order and ordered flag are not the driver's";

    /** Tests skipped through both guards: file name and test description, with the README row that explains it. */
    static final Map<String, String> SKIPPED = Map.ofEntries(
            Map.entry(
                    "retryable-writes/bulkWrite-errorLabels.json: BulkWrite fails if server does not return"
                            + " RetryableWriteError",
                    ROW_RETRIES),
            Map.entry(
                    "retryable-writes/insertOne-errorLabels.json: InsertOne fails if server does not return"
                            + " RetryableWriteError",
                    ROW_RETRIES),
            Map.entry(
                    "retryable-writes/updateOne-errorLabels.json: UpdateOne fails if server does not return"
                            + " RetryableWriteError",
                    ROW_RETRIES),
            Map.entry(
                    "retryable-writes/insertOne-errorLabels.json: InsertOne fails after multiple retryable"
                            + " writeConcernErrors",
                    ROW_RETRIES),
            Map.entry("retryable-writes/insertOne-serverErrors.json: InsertOne fails after Interrupted", ROW_RETRIES),
            Map.entry(
                    "retryable-writes/insertOne-serverErrors.json: InsertOne fails after WriteConcernError Interrupted",
                    ROW_RETRIES),
            Map.entry(
                    "retryable-writes/bulkWrite-serverErrors.json: BulkWrite fails with a RetryableWriteError label"
                            + " after two connection failures",
                    ROW_NETWORK),
            Map.entry(
                    "retryable-writes/insertOne-serverErrors.json: InsertOne fails with a RetryableWriteError label"
                            + " after two connection failures",
                    ROW_NETWORK),
            Map.entry(
                    "retryable-writes/updateOne-serverErrors.json: UpdateOne fails with a RetryableWriteError label"
                            + " after two connection failures",
                    ROW_NETWORK),
            Map.entry("retryable-writes/bulkWrite.json: First insertOne is never committed", ROW_NETWORK),
            Map.entry("retryable-writes/bulkWrite.json: Second updateOne is never committed", ROW_NETWORK),
            Map.entry("retryable-writes/bulkWrite.json: Third updateOne is never committed", ROW_NETWORK),
            Map.entry("retryable-writes/insertOne.json: InsertOne is never committed", ROW_NETWORK),
            Map.entry("retryable-writes/updateOne.json: UpdateOne is never committed", ROW_NETWORK),
            Map.entry("retryable-writes/updateOne.json: UpdateOne with upsert is never committed", ROW_NETWORK),
            Map.entry(
                    "retryable-writes/unacknowledged-write-concern.json: unacknowledged write does not set txnNumber",
                    ROW_UNACKNOWLEDGED));

    /** Tests whose command events are not compared: file name and test description, with the README row. */
    static final Map<String, String> EVENTS_NOT_COMPARED =
            Map.of("retryable-writes/bulkWrite.json: First command is retried", ROW_ORDERED_ROUNDS);

    private GuardSpecCases() {}

    /**
     * {@code -Dspec.guards.runListed=true} runs the listed cases anyway (skips, and events compared), to see that each
     * still fails for its reason; they then fail.
     */
    static final boolean RUN_LISTED = Boolean.getBoolean("spec.guards.runListed");

    static String skipReason(String file, BsonDocument test) {
        String listed = RUN_LISTED ? null : SKIPPED.get(key(file, test));
        if (listed != null) {
            return listed;
        }
        if (test.getArray("operations").stream().noneMatch(GuardSpecCases::isWrite)) {
            return "no collection write: nothing goes through the guard";
        }
        return null;
    }

    static String reactiveSkipReason(BsonDocument test) {
        boolean onSession = test.getArray("operations").stream()
                .filter(GuardSpecCases::isWrite)
                .anyMatch(op -> op.asDocument()
                        .getDocument("arguments", new BsonDocument())
                        .containsKey("session"));
        return onSession
                ? "a write on a session through the reactive guard (the runner's session entities are the synchronous"
                        + " driver's)"
                : null;
    }

    static String eventsNotCompared(String file, BsonDocument test) {
        return RUN_LISTED ? null : EVENTS_NOT_COMPARED.get(key(file, test));
    }

    /**
     * The guard's own catalog reads, left out of the observed events (README rows on ORDERED bulks repeating an
     * {@code _id} and on {@code updateMany}/{@code deleteMany} pinning {@code _id}): a read of the {@code config}
     * database through mongos, and {@code listCollections} with the guard's deadline ({@code maxTimeMS}; the spec
     * operations send none), once per namespace.
     */
    static boolean guardCatalogRead(String commandName, String databaseName, BsonDocument command) {
        return databaseName.equals("config")
                || (commandName.equals("listCollections") && command.containsKey("maxTimeMS"));
    }

    private static boolean isWrite(BsonValue operation) {
        return WRITES.contains(operation.asDocument().getString("name").getValue());
    }

    private static String key(String file, BsonDocument test) {
        return file + ": " + test.getString("description").getValue();
    }
}
