/**
 * Spring Kafka: an error handler whose retries and non-retryable exceptions follow the guard, and the retry-budget check.
 */
@NullMarked
package io.github.mongowriteguard.spring.kafka;

import org.jspecify.annotations.NullMarked;
