package io.github.mongowriteguard.internal.copies;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The settle hold: bounded by count (the oldest goes) and by age since the last send; each release said once. */
class SettleHoldTest {
    private final List<String> released = new ArrayList<>();

    private SettleHold.Held named(String name) {
        return () -> released.add(name);
    }

    @Test
    void pastItsCount_theOldestIsReleased_withTheReason() {
        SettleHold hold = new SettleHold(2, Duration.ofMinutes(10));

        SettleHold.Entry a = hold.hold(named("a"));
        SettleHold.Entry b = hold.hold(named("b"));
        SettleHold.Entry c = hold.hold(named("c"));

        assertThat(hold.count()).isEqualTo(2);
        assertThat(released).containsExactly("a");
        assertThat(a.releasedBecause())
                .contains("more than 2 unsettled commands")
                .contains("settleHold maxCopies");
        assertThat(b.releasedBecause()).isNull();
        assertThat(c.until()).isAfter(Instant.now().plus(Duration.ofMinutes(9)));
    }

    @Test
    void aHoldOfNone_releasesAtOnce() {
        SettleHold hold = new SettleHold(0, Duration.ofMinutes(10));

        SettleHold.Entry a = hold.hold(named("a"));

        assertThat(hold.count()).isZero();
        assertThat(released).containsExactly("a");
        assertThat(a.releasedBecause()).contains("maxCopies is 0");
    }

    @Test
    void pastItsAge_aCommandIsReleased_unlessASettleSentItSince() throws Exception {
        SettleHold hold = new SettleHold(10, Duration.ofMillis(1_000));
        SettleHold.Entry old = hold.hold(named("old"));
        SettleHold.Entry touched = hold.hold(named("touched"));

        Thread.sleep(600);
        touched.touch();
        Thread.sleep(600);

        assertThat(hold.count()).isEqualTo(1);
        assertThat(released).containsExactly("old");
        assertThat(old.releasedBecause()).contains("settleHold maxAge");
        assertThat(touched.releasedBecause()).isNull();
    }

    @Test
    void aSettledCommand_isReleasedOnce_andKeepsItsReason() {
        SettleHold hold = new SettleHold(10, Duration.ofMinutes(10));
        SettleHold.Entry a = hold.hold(named("a"));

        a.release("settled");
        a.release("again");

        assertThat(released).containsExactly("a");
        assertThat(a.releasedBecause()).isEqualTo("settled");
        assertThat(hold.count()).isZero();
    }
}
