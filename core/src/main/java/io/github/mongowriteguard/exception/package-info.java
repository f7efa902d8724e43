/**
 * Every exception the guard throws, in one place: what a caller catches. They extend the driver's own
 * ({@code MongoClientException}, {@code MongoBulkWriteException}, {@code IllegalArgumentException}), so existing
 * {@code catch} blocks keep working. {@link io.github.mongowriteguard.exception.InvalidBulkException}: input the guard
 * refuses before anything is sent; {@link io.github.mongowriteguard.exception.ServerDeadlineExceededException} and
 * {@link io.github.mongowriteguard.exception.WriteOutcomeUnknownException}: the two ways a server deadline can end;
 * {@link io.github.mongowriteguard.exception.CopyStillRunningException}: a retry refused beside a running copy;
 * {@link io.github.mongowriteguard.exception.ExactReadUnavailableException}: an exact read that failed.
 */
@NullMarked
package io.github.mongowriteguard.exception;

import org.jspecify.annotations.NullMarked;
