/**
 * Spring support of the emulated MongoDB: the {@code @EmulatedMongo} context customizer for Spring tests, and
 * {@link io.github.mongowriteguard.test.spring.EmulatedMongoConfiguration} to run an application on it during
 * development.
 */
@NullMarked
package io.github.mongowriteguard.test.spring;

import org.jspecify.annotations.NullMarked;
