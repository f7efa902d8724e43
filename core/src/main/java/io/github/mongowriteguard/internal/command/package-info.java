/** Internal: the write commands the guard sends itself, and their replies. Not an API. */
@NullMarked
package io.github.mongowriteguard.internal.command;

import org.jspecify.annotations.NullMarked;
