package io.github.mongowriteguard.internal.server;

import java.util.Set;

/**
 * Which failures the guard retries (not API: the README has the table). The table:
 *
 * <table>
 * <caption>What the guard retries</caption>
 * <tr><th>failure</th><th>single-document write</th><th>multi-document write</th></tr>
 * <tr><td>network error, client timeout (outcome unknown)</td><td>retried, as the same copy, after the gate</td>
 *     <td>never (unless opted in and provably idempotent)</td></tr>
 * <tr><td>{@code RetryableWriteError} label, or a transient code (not primary, shutdown, interrupted,
 *     {@code MaxTimeMSExpired}, lock timeout, write conflict, {@code StaleConfig})</td><td>retried</td>
 *     <td>never (unless opted in and provably idempotent)</td></tr>
 * <tr><td>duplicate key on an {@code _id} the guard assigned, after an earlier send of the same write</td>
 *     <td>success: an earlier copy applied it</td><td>-</td></tr>
 * <tr><td>other duplicate keys, document validation, bad values, anything else</td><td>not retried</td>
 *     <td>not retried</td></tr>
 * <tr><td>bad input (null, oversized, unkeyed in strict mode, ...)</td><td>thrown before anything is sent</td>
 *     <td>thrown before anything is sent</td></tr>
 * </table>
 */
public final class RetryClassifier {
    /**
     * Codes after which the same write may succeed when sent again: the retryable-writes specification's list plus
     * {@code MaxTimeMSExpired} (50), lock timeout (24), write conflict (112), interrupted (11601) and
     * {@code StaleConfig} (13388).
     */
    public static final Set<Integer> TRANSIENT_CODES =
            Set.of(6, 7, 24, 50, 89, 91, 112, 189, 262, 9001, 10107, 11600, 11601, 11602, 13388, 13435, 13436);

    private RetryClassifier() {}

    /**
     * True when a server error with this code (or the {@code RetryableWriteError} label) may succeed if sent again.
     *
     * @param code                     the server's error code
     * @param retryableWriteErrorLabel whether the reply had the {@code RetryableWriteError} label
     * @return true when sending it again may succeed
     */
    public static boolean isTransient(int code, boolean retryableWriteErrorLabel) {
        return retryableWriteErrorLabel || TRANSIENT_CODES.contains(code);
    }
}
