/**
 * Application retries that never multiply server copies: a resilience4j-driven policy with exponential backoff and
 * jitter, the classification of what is safe to retry, and the retry budget check for consumers.
 */
@NullMarked
package io.github.mongowriteguard.retry;

import org.jspecify.annotations.NullMarked;
