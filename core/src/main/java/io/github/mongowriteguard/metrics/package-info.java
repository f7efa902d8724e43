/**
 * What guarded writes did, as events ({@link io.github.mongowriteguard.metrics.GuardEventListener}) and as
 * Micrometer meters ({@link io.github.mongowriteguard.metrics.MicrometerGuardMetrics}); Micrometer is optional.
 */
@NullMarked
package io.github.mongowriteguard.metrics;

import org.jspecify.annotations.NullMarked;
