/**
 * Tests on the emulated MongoDB: {@link io.github.mongowriteguard.test.EmulatedMongo} (one annotation, for Spring Boot
 * tests and, with {@link io.github.mongowriteguard.test.EmulatedMongoExtension}, plain JUnit 5 tests) and
 * {@link io.github.mongowriteguard.test.EmulatedMongoCluster}, the running deployment with its counters.
 */
@NullMarked
package io.github.mongowriteguard.test;

import org.jspecify.annotations.NullMarked;
