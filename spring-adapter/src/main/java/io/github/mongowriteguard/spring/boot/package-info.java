/**
 * Spring Boot auto-configuration: {@code mongo.write-guard.*} properties, the guard on the Boot-built client, the guarded template.
 */
@NullMarked
package io.github.mongowriteguard.spring.boot;

import org.jspecify.annotations.NullMarked;
