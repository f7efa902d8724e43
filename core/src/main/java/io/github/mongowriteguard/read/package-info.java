/**
 * Guarded reads for the time a shard's primary cannot write (write-path.md, section 3; seed part 6).
 *
 * <p>A secondary learns a collection's routing metadata only through a write of its own primary, so while that
 * primary is alive but cannot write, reads on a restarted secondary (or on a collection it never read) fail with
 * {@code StaleConfig} or, as the application sees it, with timeouts. {@link io.github.mongowriteguard.read.GuardedReads}
 * gives reads an opt-in degraded mode for screens that can accept approximate answers: it reads with
 * {@code readConcern: "available"} on secondaries, removes orphan duplicates by {@code _id}, and returns a
 * {@link io.github.mongowriteguard.read.ReadResult} flagged approximate. {@link io.github.mongowriteguard.outcome.StaleReadDiagnosis}
 * turns the signals into a plain message, and {@link io.github.mongowriteguard.read.ReadGuardListener} exposes the
 * counts for a metrics layer.
 */
@NullMarked
package io.github.mongowriteguard.read;

import org.jspecify.annotations.NullMarked;
