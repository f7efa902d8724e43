/**
 * The bulk planner and the encoder's helpers: {@link io.github.mongowriteguard.internal.plan.BulkPlanner} reads each
 * driver {@code WriteModel} once into a {@link io.github.mongowriteguard.internal.plan.WriteRecord}, checks it, assigns
 * missing {@code _id}s, keys the writes and builds the rounds into a
 * {@link io.github.mongowriteguard.internal.plan.PlannedBulk}: the user's read-only
 * {@link io.github.mongowriteguard.bulk.BulkPlan} plus what the encoder and the round loop ask per write (the filter to
 * send, the converted update, the measured size). Not part of the public API: may change in any release.
 */
@NullMarked
package io.github.mongowriteguard.internal.plan;

import org.jspecify.annotations.NullMarked;
