package io.github.mongowriteguard.internal.execution;

import io.github.mongowriteguard.exception.InvalidBulkException;
import io.github.mongowriteguard.exception.InvalidBulkException.Problem;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The checks the driver makes on a call's arguments before it sends anything, made by the guard the same way, so that
 * what the driver refuses the guard refuses too, with the driver's exception type ({@code IllegalArgumentException})
 * and the driver's words in the message.
 */
public final class DriverArgumentChecks {

    private DriverArgumentChecks() {}

    /**
     * A collection-level bulk or {@code insertMany} must hold a write: the driver's {@code MixedBulkWriteOperation}
     * refuses an empty list ({@code isTrueArgument("writeRequests is not an empty list", ...)}).
     *
     * @param operation the caller's method, for the message
     * @param writes    the caller's list
     * @throws InvalidBulkException (an {@code IllegalArgumentException}) when it is empty
     */
    public static void requireWrites(String operation, List<?> writes) {
        if (writes != null && writes.isEmpty()) {
            throw new InvalidBulkException(
                    -1,
                    Problem.EMPTY_BULK,
                    operation + ": the list of writes is empty, which the driver refuses too (\"state should be:"
                            + " writeRequests is not an empty list\"); skip the call when there is nothing to write."
                            + " Nothing was sent.");
        }
    }

    /**
     * An {@code insertMany} document must not be null: the driver's {@code Operations.insertMany} refuses a list that
     * holds one ({@code "documents can not contain a null value"}) before sending; the guard names its index too.
     *
     * @param operation the caller's method, for the message
     * @param index     the document's index in the caller's list
     * @param document  the document
     * @throws InvalidBulkException (an {@code IllegalArgumentException}) when it is null
     */
    public static void requireDocument(String operation, int index, @Nullable Object document) {
        if (document == null) {
            throw new InvalidBulkException(
                    index,
                    Problem.NULL_ELEMENT,
                    operation + ": the document at index " + index + " is null, which the driver refuses too"
                            + " (\"documents can not contain a null value\"); remove it from the list. Nothing was"
                            + " sent.");
        }
    }

    /**
     * A client-level bulk must hold a write: the driver's {@code MongoClusterImpl.bulkWrite} refuses an empty list
     * ({@code isTrueArgument("`clientWriteModels` must not be empty", ...)}).
     *
     * @param writes the caller's list
     * @throws InvalidBulkException (an {@code IllegalArgumentException}) when it is empty
     */
    public static void requireClientWrites(List<?> writes) {
        if (writes != null && writes.isEmpty()) {
            throw new InvalidBulkException(
                    -1,
                    Problem.EMPTY_BULK,
                    "bulkWrite: the list of writes is empty, which the driver refuses too (\"state should be:"
                            + " `clientWriteModels` must not be empty\"); skip the call when there is nothing to write."
                            + " Nothing was sent.");
        }
    }

    /**
     * A {@code maxTime} option must not be negative: the driver's {@code TimeoutSettings} refuses it
     * ({@code isTrueArgument("maxTimeMS must be >= 0", ...)}) before sending. Nor above {@link Integer#MAX_VALUE} ms:
     * the driver sends that, and the server refuses it with {@code BadValue} ("N value for maxTimeMS is out of
     * range", {@code max_time_ms_parser.cpp}); the guard refuses it with the server's words, before sending, where it
     * would otherwise lower it to its own deadline and write. Zero means no limit of the caller's own (the guard's
     * deadline applies).
     *
     * @param operation the caller's method, for the message
     * @param maxTimeMs the option, in milliseconds
     * @throws InvalidBulkException (an {@code IllegalArgumentException}) when it is negative or out of the server's range
     */
    public static void requireMaxTime(String operation, long maxTimeMs) {
        if (maxTimeMs > Integer.MAX_VALUE) {
            // The driver sends it; every server refuses it before the command runs (mongodb/mongo
            // src/mongo/db/query/max_time_ms_parser.cpp, parseMaxTimeMS: BadValue unless 0 <= maxTimeMS <= INT_MAX;
            // older servers' src/mongo/db/query/query_request.cpp, without the value in the message).
            throw new InvalidBulkException(
                    -1,
                    Problem.INVALID_OPTION,
                    operation + ": maxTime is " + maxTimeMs + " ms, which the server refuses (BadValue, \"" + maxTimeMs
                            + " value for maxTimeMS is out of range\", on older servers \"maxTimeMS is out of range\": at"
                            + " most " + Integer.MAX_VALUE + " ms); pass 0"
                            + " for no limit of your own (the guard's deadline applies) or a time of at most "
                            + Integer.MAX_VALUE + " ms. Nothing was sent.");
        }
        if (maxTimeMs < 0) {
            throw new InvalidBulkException(
                    -1,
                    Problem.INVALID_OPTION,
                    operation + ": maxTime is " + maxTimeMs + " ms, which the driver refuses too (\"state should be:"
                            + " maxTimeMS must be >= 0\"); pass 0 for no limit of your own (the guard's deadline"
                            + " applies) or a positive time. Nothing was sent.");
        }
    }
}
