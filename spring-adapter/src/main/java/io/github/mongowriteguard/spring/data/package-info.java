/**
 * Spring Data MongoDB: {@code BulkOperations} and a {@code MongoTemplate} that run bulks through the guard.
 */
@NullMarked
package io.github.mongowriteguard.spring.data;

import org.jspecify.annotations.NullMarked;
