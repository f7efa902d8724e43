/**
 * Spring Data MongoDB: a {@code MongoTemplate} whose every write runs through the guard ({@code GuardedMongoTemplate}),
 * and its {@code BulkOperations}.
 */
@NullMarked
package io.github.mongowriteguard.spring.data;

import org.jspecify.annotations.NullMarked;
