/**
 * Helpers shared by the guard's packages. Not part of the public API: may change in any release.
 */
@NullMarked
package io.github.mongowriteguard.internal;

import org.jspecify.annotations.NullMarked;
