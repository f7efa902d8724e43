package io.github.mongowriteguard.testkit.node;

import java.util.Map;

/** Names of the server error codes that tests and fail points use, as mongod's {@code error_codes.yml}. */
final class ErrorCodeNames {
    private static final Map<Integer, String> NAMES = Map.ofEntries(
            Map.entry(1, "InternalError"),
            Map.entry(2, "BadValue"),
            Map.entry(6, "HostUnreachable"),
            Map.entry(7, "HostNotFound"),
            Map.entry(11, "UserNotFound"),
            Map.entry(13, "Unauthorized"),
            Map.entry(20, "IllegalOperation"),
            Map.entry(24, "LockTimeout"),
            Map.entry(43, "CursorNotFound"),
            Map.entry(50, "MaxTimeMSExpired"),
            Map.entry(59, "CommandNotFound"),
            Map.entry(64, "WriteConcernFailed"),
            Map.entry(89, "NetworkTimeout"),
            Map.entry(91, "ShutdownInProgress"),
            Map.entry(100, "UnsatisfiableWriteConcern"),
            Map.entry(112, "WriteConflict"),
            Map.entry(189, "PrimarySteppedDown"),
            Map.entry(225, "TransactionTooOld"),
            Map.entry(251, "NoSuchTransaction"),
            Map.entry(262, "ExceededTimeLimit"),
            Map.entry(9001, "SocketException"),
            Map.entry(10107, "NotWritablePrimary"),
            Map.entry(11000, "DuplicateKey"),
            Map.entry(11600, "InterruptedAtShutdown"),
            Map.entry(11601, "Interrupted"),
            Map.entry(11602, "InterruptedDueToReplStateChange"),
            Map.entry(13388, "StaleConfig"),
            Map.entry(13435, "NotPrimaryNoSecondaryOk"),
            Map.entry(13436, "NotPrimaryOrSecondary"));

    private ErrorCodeNames() {}

    static String of(int code) {
        return NAMES.getOrDefault(code, "Location" + code);
    }
}
