/**
 * Internal: what the guard reads of a deployment's catalog (the topology, a collection's options, its
 * {@code config.collections} entry, its chunks), read through one path and shared by every guard of the JVM. Not an
 * API.
 */
@NullMarked
package io.github.mongowriteguard.internal.catalog;

import org.jspecify.annotations.NullMarked;
