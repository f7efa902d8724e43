package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.engine.StorageEngine;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The server's parsing of a command's {@code maxTimeMS} ({@code src/mongo/db/query/query_request.cpp},
 * {@code QueryRequest::parseMaxTimeMS}, used by every command through {@code OperationContext} setup): a number, in
 * {@code [0, 2^31 - 1]}, integral when a double; otherwise the command fails with {@code BadValue} (2) before it runs.
 */
final class MaxTimeMs {
    private MaxTimeMs() {}

    /** The error reply for a bad {@code maxTimeMS}, or null when it is absent or valid. */
    static BsonDocument refusal(BsonDocument command) {
        BsonValue value = command.get("maxTimeMS");
        if (value == null) {
            return null;
        }
        if (!value.isNumber() && !value.isDecimal128()) {
            return StorageEngine.error(2, "BadValue", "maxTimeMS must be a number");
        }
        double asDouble = value.isDecimal128()
                ? value.asDecimal128().decimal128Value().doubleValue()
                : value.asNumber().doubleValue();
        long asLong = value.isDouble() || value.isDecimal128()
                ? (long) asDouble
                : value.asNumber().longValue();
        if (asLong < 0 || asLong > Integer.MAX_VALUE) {
            return StorageEngine.error(2, "BadValue", "maxTimeMS is out of range");
        }
        if (value.isDouble() && Math.floor(asDouble) != asDouble) {
            return StorageEngine.error(2, "BadValue", "maxTimeMS has non-integral value");
        }
        return null;
    }
}
