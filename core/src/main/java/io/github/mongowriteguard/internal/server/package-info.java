/** Internal: facts about the server's answers (error codes) that every layer reads; depends on nothing. Not an API. */
@NullMarked
package io.github.mongowriteguard.internal.server;

import org.jspecify.annotations.NullMarked;
