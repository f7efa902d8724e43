/**
 * Server deadlines: every write the guard sends carries {@code maxTimeMS} below the client's socket read timeout,
 * so the server, not only the client, stops waiting; and the two ways a deadline can end, typed.
 */
@NullMarked
package io.github.mongowriteguard.deadline;

import org.jspecify.annotations.NullMarked;
