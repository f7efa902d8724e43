/**
 * Bulk planning: turns the caller's bulk write into as few UNORDERED rounds as keep the caller's result.
 *
 * <p>Entry point: {@link io.github.mongowriteguard.bulk.BulkPlanner}. It validates the bulk, assigns missing
 * {@code _id}s, and returns an immutable {@link io.github.mongowriteguard.bulk.BulkPlan}: which write runs in which
 * round, which writes are superseded by a later write on the same {@code _id}, and why.
 *
 * <h2>The guard's semantics, in one place</h2>
 * <ul>
 *   <li>A write is <em>keyed</em> when it touches exactly one document named by {@code _id} equality. Writes on the
 *       same key keep their relative order; writes on different keys are independent and may run in the same
 *       round.</li>
 *   <li>Failures are per key: a write is not run after an earlier write on the same key failed
 *       ({@link io.github.mongowriteguard.bulk.BulkPlan#previousOnKey(int)}). Writes on other keys go on, where a
 *       driver ORDERED bulk would have stopped.</li>
 *   <li>When the last write on a key alone defines the final document (a {@code DeleteOneModel} or a
 *       {@code ReplaceOneModel} with {@code upsert(true)}, on a pure {@code _id} filter), the earlier writes on that key
 *       are superseded and not sent. A failure they would have had (for example a duplicate-key insert) is then not
 *       reported.</li>
 *   <li>Different {@code _id}s are assumed independent. A unique secondary index can link them (inserting A with
 *       email x after deleting B that held x): use strictOrdered for such bulks.</li>
 *   <li>{@code _id}s compare as the {@code _id} index does with the simple collation: numbers by value
 *       ({@code 1 == 1L == 1.0}), strings by their bytes. A write with its own collation is unkeyed; on a collection
 *       whose default collation is not simple, use strictOrdered.</li>
 *   <li>An ordered bulk that contains unkeyed writes ({@code UpdateManyModel}, {@code DeleteManyModel}, a filter that
 *       is not {@code _id} equality) is kept in the caller's order as one ORDERED round.</li>
 * </ul>
 */
@NullMarked
package io.github.mongowriteguard.bulk;

import org.jspecify.annotations.NullMarked;
