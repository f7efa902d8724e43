/**
 * Every exception the guard throws, in one place: what a caller catches. They extend the driver's own
 * ({@code MongoClientException}, {@code MongoBulkWriteException}, {@code IllegalArgumentException}), so existing
 * {@code catch} blocks keep working. A driver-style method throws one of the driver's own exceptions as it is only when
 * nothing in the call can have applied; otherwise the guard's, which carries the outcome:
 * {@link io.github.mongowriteguard.exception.GuardedBulkWriteException},
 * {@link io.github.mongowriteguard.exception.GuardedWriteException} (a multi-document write that failed part-way),
 * {@link io.github.mongowriteguard.exception.GuardedWriteConcernException} (applied, write concern failed). {@link io.github.mongowriteguard.exception.InvalidBulkException}: input the guard
 * refuses before anything is sent; {@link io.github.mongowriteguard.exception.ServerDeadlineExceededException} and
 * {@link io.github.mongowriteguard.exception.WriteOutcomeUnknownException}: the two ways a server deadline can end;
 * {@link io.github.mongowriteguard.exception.CopyStillRunningException}: a retry refused beside a running copy;
 * {@link io.github.mongowriteguard.exception.ExactReadUnavailableException}: an exact read that failed.
 */
@NullMarked
package io.github.mongowriteguard.exception;

import org.jspecify.annotations.NullMarked;
