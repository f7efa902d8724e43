package io.github.mongowriteguard.internal.execution;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class CopyNamesTest {

    /** {@code mwg:<the hex of the id's little-endian bytes>:<round>.<command>}, as the gate's currentOp lookup reads it. */
    @Test
    void aName_isTheWriteIdsLittleEndianHexThenRoundAndCommand() {
        SplittableRandom random = new SplittableRandom(28);
        List<Long> ids = List.of(0L, -1L, 1L, Long.MIN_VALUE, Long.MAX_VALUE, 0x0123456789abcdefL);
        for (long id : ids) {
            assertName(id, 1, 1);
        }
        for (int i = 0; i < 1_000; i++) {
            assertName(random.nextLong(), random.nextInt(0, 100_000), random.nextInt(0, Integer.MAX_VALUE));
        }
        assertName(7L, 0, Integer.MAX_VALUE);
        assertName(7L, 9, 10);
    }

    @Test
    void aNegativeNumber_isRefused() {
        CopyNames names = new CopyNames(1L);
        assertThatThrownBy(() -> names.name(-1, 1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theNamesOfTwoCalls_differ() {
        assertThat(new CopyNames().name(1, 1)).isNotEqualTo(new CopyNames().name(1, 1));
    }

    private static void assertName(long id, int round, int command) {
        String expected = "mwg:" + HexFormat.of().toHexDigits(Long.reverseBytes(id)) + ":" + round + "." + command;
        assertThat(new CopyNames(id).name(round, command)).isEqualTo(expected);
    }
}
