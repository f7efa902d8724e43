package io.github.mongowriteguard.internal.copies;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** {@code guard.getCopies().toString()} tells what a log line needs, not an object identity. */
class LiveCopyLedgerToStringTest {
    @Test
    void toString_printsTheCounts_andTheCopiesPossiblyRunning() {
        LiveCopyLedger ledger = new LiveCopyLedger();
        assertThat(ledger.toString())
                .isEqualTo("CopyLedger{possiblyRunning=0, maxPossiblyRunning=0, tracked=0, heldForSettle=0}");

        LiveCopyLedger.Copy copy = ledger.start("shop.orders", "3f2a-lsid", 7L, "mwg:1");
        copy.attempt();
        copy.sent();
        copy.clientGaveUp();

        assertThat(ledger.toString())
                .startsWith(
                        "CopyLedger{possiblyRunning=1, maxPossiblyRunning=1, tracked=1, heldForSettle=0, copies=[copy 3f2a-lsid#7 on"
                                + " shop.orders (1 attempts, 1 sends, possibly still running)]");

        copy.markEnded();
        copy.close();
        assertThat(ledger.toString())
                .isEqualTo("CopyLedger{possiblyRunning=0, maxPossiblyRunning=1, tracked=0, heldForSettle=0}");
    }
}
