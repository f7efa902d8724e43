package io.github.mongowriteguard.testkit.spec;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoClientException;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoExecutionTimeoutException;
import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.MongoServerException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.MongoWriteConcernException;
import com.mongodb.MongoWriteException;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

/**
 * Checks an {@code expectError} document against what the driver threw: {@code isError}, {@code isClientError},
 * {@code isTimeoutError}, {@code errorContains}, {@code errorCode}, {@code errorCodeName},
 * {@code errorLabelsContain}, {@code errorLabelsOmit}, {@code expectResult} (a bulk write's partial result).
 */
final class ErrorExpectation {
    private static final Set<String> FIELDS = Set.of(
            "isError",
            "isClientError",
            "isTimeoutError",
            "errorContains",
            "errorCode",
            "errorCodeName",
            "errorLabelsContain",
            "errorLabelsOmit",
            "expectResult");

    private ErrorExpectation() {}

    static void requireSupported(BsonDocument expectError) {
        for (String field : expectError.keySet()) {
            if (!FIELDS.contains(field)) {
                throw new TestAbortedException("expectError." + field + " is not supported by the runner");
            }
        }
    }

    static void check(BsonDocument expected, Throwable error, ValueMatcher matcher) {
        String what = error.getClass().getSimpleName() + ": " + error.getMessage();
        if (expected.containsKey("isClientError")) {
            boolean client = isClientError(error);
            if (client != expected.getBoolean("isClientError").getValue()) {
                fail("isClientError expected " + expected.get("isClientError") + " but the error was " + what, error);
            }
        }
        if (expected.containsKey("isTimeoutError")) {
            boolean timeout = error instanceof MongoOperationTimeoutException;
            if (timeout != expected.getBoolean("isTimeoutError").getValue()) {
                fail("isTimeoutError expected " + expected.get("isTimeoutError") + " but the error was " + what, error);
            }
        }
        if (expected.containsKey("errorContains")) {
            String text = expected.getString("errorContains").getValue();
            if (error.getMessage() == null || !error.getMessage().toLowerCase().contains(text.toLowerCase())) {
                fail("error message should contain '" + text + "' but the error was " + what, error);
            }
        }
        if (expected.containsKey("errorCode")) {
            int code = expected.getNumber("errorCode").intValue();
            if (serverCode(error) != code) {
                fail("errorCode expected " + code + " but the error was " + what, error);
            }
        }
        if (expected.containsKey("errorCodeName")) {
            String name = expected.getString("errorCodeName").getValue();
            if (!name.equals(codeName(error))) {
                fail(
                        "errorCodeName expected " + name + " but the error was " + what + " (code name "
                                + codeName(error) + ")",
                        error);
            }
        }
        if (expected.containsKey("errorLabelsContain")) {
            for (BsonValue label : expected.getArray("errorLabelsContain")) {
                if (!(error instanceof MongoException)
                        || !((MongoException) error)
                                .hasErrorLabel(label.asString().getValue())) {
                    fail(
                            "error should have label " + label.asString().getValue() + " but the error was " + what
                                    + labels(error),
                            error);
                }
            }
        }
        if (expected.containsKey("errorLabelsOmit")) {
            for (BsonValue label : expected.getArray("errorLabelsOmit")) {
                if (error instanceof MongoException
                        && ((MongoException) error)
                                .hasErrorLabel(label.asString().getValue())) {
                    fail(
                            "error should not have label " + label.asString().getValue() + " but the error was " + what
                                    + labels(error),
                            error);
                }
            }
        }
        if (expected.containsKey("expectResult")) {
            if (error instanceof MongoSocketException) {
                throw new TestAbortedException("expectError.expectResult asks for a partial bulk write result, but the"
                        + " last attempt ended with a network error (" + what
                        + ") and the Java driver has no partial result"
                        + " for it; the server closed the connection as mongod's onPrimaryTransactionalWrite fail point does"
                        + " (closeConnection defaults to true, then failBeforeCommitExceptionCode)");
            }
            if (!(error instanceof MongoBulkWriteException)) {
                fail("expectResult needs a bulk write error with a partial result, but the error was " + what, error);
            }
            matcher.assertMatches(
                    "expectError.expectResult",
                    expected.get("expectResult"),
                    Results.bulkWrite(((MongoBulkWriteException) error).getWriteResult()));
        }
    }

    /** Not derived from a server reply: network errors, client-side timeouts and argument errors. */
    static boolean isClientError(Throwable error) {
        if (error instanceof MongoServerException
                || error instanceof MongoOperationTimeoutException
                || error instanceof MongoExecutionTimeoutException) {
            return false;
        }
        return error instanceof MongoClientException
                || error instanceof MongoSocketException
                || error instanceof MongoTimeoutException
                || error instanceof IllegalArgumentException
                || error instanceof IllegalStateException
                || !(error instanceof MongoException);
    }

    private static int serverCode(Throwable error) {
        if (error instanceof MongoBulkWriteException bulk) {
            if (!bulk.getWriteErrors().isEmpty()) {
                return bulk.getWriteErrors().get(0).getCode();
            }
            return bulk.getWriteConcernError() == null
                    ? -1
                    : bulk.getWriteConcernError().getCode();
        }
        if (error instanceof MongoWriteConcernException concern) {
            return concern.getWriteConcernError().getCode();
        }
        if (error instanceof MongoWriteException write) {
            return write.getError().getCode();
        }
        if (error instanceof MongoServerException server) {
            return server.getCode();
        }
        if (error instanceof MongoOperationTimeoutException && error.getCause() instanceof MongoServerException cause) {
            return cause.getCode();
        }
        return -1;
    }

    private static String codeName(Throwable error) {
        if (error instanceof MongoCommandException command) {
            return command.getErrorCodeName();
        }
        if (error instanceof MongoWriteConcernException concern) {
            return concern.getWriteConcernError().getCodeName();
        }
        if (error instanceof MongoBulkWriteException bulk && bulk.getWriteConcernError() != null) {
            return bulk.getWriteConcernError().getCodeName();
        }
        if (error instanceof MongoServerException server) {
            return server.getErrorCodeName();
        }
        return null;
    }

    private static String labels(Throwable error) {
        return error instanceof MongoException ? " with labels " + ((MongoException) error).getErrorLabels() : "";
    }

    private static void fail(String message, Throwable cause) {
        throw new AssertionFailedError(message, cause);
    }
}
