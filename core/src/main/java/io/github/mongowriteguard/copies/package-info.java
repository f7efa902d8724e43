/**
 * Copy accounting: every write command the guard sends is one server copy named by its {@code (lsid, txnNumber)};
 * the {@link io.github.mongowriteguard.copies.CopyLedger} knows which may still be running, and the overlap gate
 * keeps a retry from starting a second copy beside a running one.
 */
@NullMarked
package io.github.mongowriteguard.copies;

import org.jspecify.annotations.NullMarked;
