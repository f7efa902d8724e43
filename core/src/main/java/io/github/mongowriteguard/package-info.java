/**
 * mongo-write-guard: safe-by-default writes to sharded MongoDB clusters.
 *
 * <p>{@link io.github.mongowriteguard.WriteGuardSettings} holds the guard's settings. Capabilities live in their own
 * packages: {@code bulk} plans a bulk write into as few UNORDERED rounds as keep the caller's result.
 * Everything in {@code internal} may change without notice.
 */
@NullMarked
package io.github.mongowriteguard;

import org.jspecify.annotations.NullMarked;
