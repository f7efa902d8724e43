/**
 * Spring Boot Actuator support: the guard's health indicator ({@code /actuator/health/mongoWriteGuard}) and info
 * contributor ({@code /actuator/info}), auto-configured when Actuator is on the class path.
 */
@NullMarked
package io.github.mongowriteguard.spring.boot.actuate;

import org.jspecify.annotations.NullMarked;
