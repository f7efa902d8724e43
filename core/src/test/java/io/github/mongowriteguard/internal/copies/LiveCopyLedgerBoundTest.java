package io.github.mongowriteguard.internal.copies;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.mongowriteguard.copies.CopyLedger;
import io.github.mongowriteguard.copies.CopyRecord;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The copy ledger's count bound: past it, copies not known to run go first (oldest first), then the oldest possibly
 * running copy, which is forgotten loudly (counted, warned, and blind to the overlap gate), never taken for ended.
 */
class LiveCopyLedgerBoundTest {
    private static final String NS = "shop.orders";

    private static LiveCopyLedger ledger(int maxTracked) {
        return new LiveCopyLedger(new SettleHold(10, Duration.ofMinutes(10)), maxTracked);
    }

    private static LiveCopyLedger.Copy gaveUp(LiveCopyLedger ledger, String lsid, long txnNumber) {
        LiveCopyLedger.Copy copy = ledger.start(NS, lsid, txnNumber, "mwg:" + lsid + "." + txnNumber);
        copy.sent();
        copy.clientGaveUp();
        copy.close(); // the call returned; the copy stays while it may run
        return copy;
    }

    @Test
    void byDefault_theLedgerTracksAtMostTenThousandCopies() {
        assertThat(new LiveCopyLedger().maxTracked())
                .isEqualTo(CopyLedger.MAX_TRACKED)
                .isEqualTo(10_000);
        assertThatThrownBy(() -> ledger(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxTracked (0) must be at least 1");
    }

    @Test
    void manyCopiesGivenUpOn_keepTheLedgerAtItsBound_andTheOldestIsForgotten() {
        LiveCopyLedger ledger = ledger(3);
        java.time.Instant before = java.time.Instant.now();
        LiveCopyLedger.Copy oldest = gaveUp(ledger, "a", 1);
        LiveCopyLedger.Copy second = gaveUp(ledger, "b", 1);
        gaveUp(ledger, "c", 1);
        gaveUp(ledger, "d", 1);
        gaveUp(ledger, "e", 1);

        assertThat(ledger.trackedCount()).isEqualTo(3);
        assertThat(ledger.possiblyRunningCount()).isEqualTo(3);
        assertThat(ledger.forgottenCount()).isEqualTo(2);
        assertThat(ledger.lastForgotten()).isNotNull().isAfterOrEqualTo(before);
        assertThat(ledger.possiblyRunning()).extracting(CopyRecord::lsid).containsExactly("c", "d", "e");
        // forgotten, not ended: whoever still holds the copy sees it may run, and that the ledger forgot it
        assertThat(oldest.isPossiblyRunning()).isTrue();
        assertThat(oldest.isForgotten()).isTrue();
        assertThat(second.isForgotten()).isTrue();
        assertThat(ledger.toString()).contains("tracked=3").contains("forgotten=2");
    }

    @Test
    void copiesNotKnownToRun_goFirst_oldestFirst_withoutForgettingAnything() {
        LiveCopyLedger ledger = ledger(3);
        LiveCopyLedger.Copy running = gaveUp(ledger, "a", 1);
        LiveCopyLedger.Copy firstInFlight = ledger.start(NS, "b", 1L, null);
        LiveCopyLedger.Copy secondInFlight = ledger.start(NS, "c", 1L, null);

        LiveCopyLedger.Copy newest = ledger.start(NS, "d", 1L, null);

        assertThat(ledger.trackedCount()).isEqualTo(3);
        assertThat(ledger.forgottenCount()).isZero();
        assertThat(ledger.lastForgotten()).isNull();
        assertThat(running.isForgotten()).isFalse();
        assertThat(ledger.possiblyRunning()).extracting(CopyRecord::lsid).containsExactly("a");
        // the oldest in flight was dropped: it is tracked again the moment its client gives up on it, and the
        // oldest copy past the bound goes (the other one in flight), still forgetting nothing
        firstInFlight.clientGaveUp();
        assertThat(ledger.possiblyRunning()).extracting(CopyRecord::lsid).containsExactly("a", "b");
        assertThat(ledger.trackedCount()).isEqualTo(3);
        assertThat(ledger.forgottenCount()).isZero();
        assertThat(firstInFlight.isForgotten()).isFalse();
        // a copy dropped in flight that ends normally leaves nothing behind
        secondInFlight.markEnded();
        secondInFlight.close();
        newest.close();
        assertThat(ledger.trackedCount()).isEqualTo(2);
    }

    @Test
    void whenEveryTrackedCopyMayRun_aNewCopyForgetsTheOldestOnlyOnceItMayRunToo_andAnAnswerLaterClearsIt() {
        LiveCopyLedger ledger = ledger(2);
        LiveCopyLedger.Copy oldest = gaveUp(ledger, "a", 1);
        gaveUp(ledger, "b", 1);

        LiveCopyLedger.Copy inFlight = ledger.start(NS, "c", 1L, null);
        inFlight.sent();
        // the new copy is the one not known to run: it goes, and nothing is forgotten yet
        assertThat(ledger.forgottenCount()).isZero();
        assertThat(oldest.isForgotten()).isFalse();

        inFlight.clientGaveUp();

        assertThat(oldest.isForgotten()).isTrue();
        assertThat(ledger.forgottenCount()).isEqualTo(1);
        assertThat(ledger.trackedCount()).isEqualTo(2);
        assertThat(ledger.possiblyRunning()).extracting(CopyRecord::lsid).containsExactly("b", "c");
        // a settle of the forgotten copy sends the same copy again, as a new entry
        LiveCopyLedger.Copy resumed = ledger.resume(NS, "a", 1, null);
        assertThat(resumed).isNotSameAs(oldest);
        // an answer proves the copy ended: it is no longer forgotten
        oldest.markEnded();
        assertThat(oldest.isForgotten()).isFalse();
        assertThat(oldest.isPossiblyRunning()).isFalse();
        inFlight.close();
        resumed.close();
    }

    @Test
    void aForgottenCopy_givenUpOnAgain_staysForgotten_andIsCountedOnce() {
        LiveCopyLedger ledger = ledger(1);
        LiveCopyLedger.Copy first = gaveUp(ledger, "a", 1);
        gaveUp(ledger, "b", 1);

        first.clientGaveUp();

        assertThat(first.isForgotten()).isTrue();
        assertThat(ledger.forgottenCount()).isEqualTo(1);
        assertThat(ledger.trackedCount()).isEqualTo(1);
        assertThat(ledger.possiblyRunningCount()).isEqualTo(1);
    }

    @Test
    void forgettingIsWarnedOnceAMinute_withoutSessionsOrNamespaces() {
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            LiveCopyLedger ledger = ledger(1);
            for (int i = 0; i < 50; i++) {
                gaveUp(ledger, "lsid-" + i, i);
            }
        } finally {
            System.setErr(err);
        }
        String log = captured.toString(StandardCharsets.UTF_8);
        assertThat(log.lines().filter(l -> l.contains("copy ledger forgot"))).hasSize(1);
        assertThat(log)
                .contains("forgot 1 server copy that may still be running")
                .doesNotContain("lsid-", NS);
    }

    /** A clock the test moves. */
    private static final class MovingClock extends java.time.Clock {
        private volatile java.time.Instant now = java.time.Instant.parse("2026-01-01T00:00:00Z");

        void add(Duration duration) {
            now = now.plus(duration);
        }

        @Override
        public java.time.ZoneId getZone() {
            return java.time.ZoneOffset.UTC;
        }

        @Override
        public java.time.Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public java.time.Instant instant() {
            return now;
        }
    }

    /**
     * Past its retention, a copy that may still run is forgotten, not taken for ended (before: it was marked ended,
     * so an overlap gate still holding it let a new copy start without asking the server).
     */
    @Test
    void pastItsRetention_aCopyThatMayStillRun_isForgotten_notEnded() {
        MovingClock clock = new MovingClock();
        LiveCopyLedger ledger = new LiveCopyLedger(new SettleHold(10, Duration.ofMinutes(10)), 100, clock);
        LiveCopyLedger.Copy stalled = ledger.start(NS, "a", 1L, "mwg:a.1");
        stalled.sent();
        stalled.clientGaveUp();
        LiveCopyLedger.Copy neverSent = ledger.start(NS, "b", 1L, null);

        clock.add(CopyLedger.RETENTION.plusSeconds(1));

        assertThat(ledger.possiblyRunning()).isEmpty();
        assertThat(ledger.trackedCount()).isZero();
        assertThat(stalled.isPossiblyRunning()).isTrue();
        assertThat(stalled.isForgotten()).isTrue();
        assertThat(neverSent.isForgotten()).isFalse();
        assertThat(ledger.forgottenCount()).isEqualTo(1);
        assertThat(ledger.possiblyRunningCount()).isZero();
    }

    @Test
    void manyThreads_keepTheBound_andTheCountsAgree() throws Exception {
        LiveCopyLedger ledger = ledger(50);
        int threads = 4;
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
        try {
            List<java.util.concurrent.Future<?>> done = new java.util.ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String lsid = "t" + t;
                done.add(pool.submit(() -> {
                    for (long i = 0; i < 2_000; i++) {
                        LiveCopyLedger.Copy copy = ledger.start(NS, lsid, i, null);
                        copy.sent();
                        if (i % 3 == 0) {
                            copy.clientGaveUp();
                        }
                        if (i % 6 == 0) {
                            copy.markEnded();
                        }
                        copy.close();
                        assertThat(ledger.trackedCount()).isLessThanOrEqualTo(50);
                    }
                }));
            }
            for (java.util.concurrent.Future<?> each : done) {
                each.get();
            }
        } finally {
            pool.shutdownNow();
        }
        // 4 x 333 copies were left possibly running (i = 3 mod 6): each is tracked or was forgotten; a copy that
        // ended after it was given up on (i = 0 mod 6) may have been forgotten in between too
        assertThat(ledger.trackedCount()).isLessThanOrEqualTo(50);
        assertThat(ledger.possiblyRunningCount())
                .isEqualTo(ledger.trackedCount())
                .isEqualTo(ledger.possiblyRunning().size());
        assertThat(ledger.forgottenCount() + ledger.possiblyRunningCount()).isBetween(4L * 333, 4L * (333 + 334));
    }
}
