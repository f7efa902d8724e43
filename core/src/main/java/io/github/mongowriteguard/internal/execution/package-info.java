/** Internal: runs a planned bulk round by round. Not an API. */
@NullMarked
package io.github.mongowriteguard.internal.execution;

import org.jspecify.annotations.NullMarked;
