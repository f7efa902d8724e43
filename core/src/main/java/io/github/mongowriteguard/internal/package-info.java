/**
 * Helpers shared by the guard's packages. Not part of the public API: may change in any release.
 */
@NonNullApi
package io.github.mongowriteguard.internal;

import com.mongodb.lang.NonNullApi;
