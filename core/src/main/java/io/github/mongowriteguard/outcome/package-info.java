/** Complete outcomes of guarded writes: one status per index of the caller's bulk, counts, and what to retry. */
@NullMarked
package io.github.mongowriteguard.outcome;

import org.jspecify.annotations.NullMarked;
