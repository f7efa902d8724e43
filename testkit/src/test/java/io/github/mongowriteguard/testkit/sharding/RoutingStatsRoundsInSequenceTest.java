package io.github.mongowriteguard.testkit.sharding;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link RoutingStats#roundsInSequence()}: writes routed side by side count once, one after another add up. */
class RoutingStatsRoundsInSequenceTest {

    /** A write of {@code rounds} rounds, one child batch each, routed from {@code start} to {@code end}. */
    private static RoutedWrite write(int rounds, long start, long end) {
        List<ChildBatch> batches = new ArrayList<>();
        for (int round = 1; round <= rounds; round++) {
            batches.add(new ChildBatch(round, "shard0" + round, List.of(0)));
        }
        return new RoutedWrite("db.c", "update", true, 1, batches, Duration.ZERO, start, end);
    }

    private static long roundsInSequence(RoutedWrite... writes) {
        RoutingStats stats = new RoutingStats();
        for (RoutedWrite write : writes) {
            stats.add(write);
        }
        return stats.roundsInSequence();
    }

    @Test
    void writesSideBySide_countOnceAsTheLongest() {
        assertThat(roundsInSequence(write(1, 0, 10), write(1, 2, 12), write(1, 1, 9), write(1, 3, 11), write(1, 4, 8)))
                .isEqualTo(1);
        assertThat(roundsInSequence(write(1, 0, 10), write(3, 2, 30))).isEqualTo(3);
    }

    @Test
    void writesOneAfterAnother_addUp() {
        assertThat(roundsInSequence(write(5, 0, 10), write(1, 11, 20), write(2, 21, 30)))
                .isEqualTo(8);
        assertThat(new RoutingStats().roundsInSequence()).isZero();
    }

    @Test
    void aChain_isTheLongestOfWritesThatDoNotOverlap() {
        // a (0-10) and c (12-20) are in sequence; b (5-15) overlaps both: a then c, 1 + 1, beats b alone
        assertThat(roundsInSequence(write(1, 0, 10), write(1, 5, 15), write(1, 12, 20)))
                .isEqualTo(2);
        // b is longer than a and c together
        assertThat(roundsInSequence(write(1, 0, 10), write(3, 5, 15), write(1, 12, 20)))
                .isEqualTo(3);
    }
}
