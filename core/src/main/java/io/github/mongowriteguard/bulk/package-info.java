/**
 * Bulk planning: turns the caller's bulk write into as few UNORDERED rounds as keep the caller's result.
 *
 * <p>What a user reads of a plan: {@code GuardedCollection.plan} returns an immutable
 * {@link io.github.mongowriteguard.bulk.BulkPlan}: which write runs in which round, and why. The planner that makes
 * it (validating the bulk, assigning missing {@code _id}s) is internal.
 *
 * <h2>The guard's semantics, in one place</h2>
 * <ul>
 *   <li>Every write of the caller is sent, with its own filter, document and options, as the driver would send it.
 *       Nothing is merged, dropped or superseded.</li>
 *   <li>A write is <em>keyed</em> when it touches exactly one document named by {@code _id} equality. Writes on the
 *       same key keep their relative order; writes on different keys are independent and may run in the same round.
 *       A key's consecutive writes of one type (a <em>run</em>) travel in one command, whose statements the server
 *       runs in order ({@code write_ops_exec.cpp}); round k holds the k-th run of every key.</li>
 *   <li>Unordered request: every write is attempted, as in the driver; a write error stops nothing.</li>
 *   <li>Ordered request, every write keyed: failures are per key. A write is not run after an earlier write on the
 *       same key did not apply ({@link io.github.mongowriteguard.bulk.BulkPlan#previousOnKey(int)}). Writes on other
 *       keys go on, where a driver ORDERED bulk would have stopped. A run of several writes is sent as ORDERED key
 *       runs ({@link io.github.mongowriteguard.bulk.Round#keyRuns()}): the server stops at the first write that does
 *       not apply, and the rest is sent again without that key's remaining writes.</li>
 *   <li>An {@code UpdateManyModel} or {@code DeleteManyModel} whose filter pins {@code _id} by equality matches at
 *       most one document (the {@code _id} index is unique): keyed, and sent as a single-document statement where the
 *       collection allows it ({@link io.github.mongowriteguard.bulk.BulkPlan#sentAs(int)}).</li>
 *   <li>Ordered request with an unkeyed write ({@code UpdateManyModel}, {@code DeleteManyModel} on other fields, a
 *       filter that is not {@code _id} equality): kept in the caller's order as one ORDERED round, the driver's
 *       ORDERED bulk exactly. So is every ordered request when {@code strictOrdered} is set.</li>
 *   <li>Different {@code _id}s are assumed independent. A unique secondary index can link them (inserting A with
 *       email x after deleting B that held x): use strictOrdered for such bulks.</li>
 *   <li>{@code _id}s compare as the {@code _id} index does with the simple collation: numbers by value
 *       ({@code 1 == 1L == 1.0}), strings by their bytes; equal numbers of different types are one key, and each write
 *       still sends its own value. A write with its own collation is unkeyed; on a collection whose default collation
 *       is not simple, use strictOrdered.</li>
 * </ul>
 */
@NullMarked
package io.github.mongowriteguard.bulk;

import org.jspecify.annotations.NullMarked;
