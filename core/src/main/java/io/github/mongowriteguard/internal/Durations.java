package io.github.mongowriteguard.internal;

import java.math.BigDecimal;
import java.time.Duration;

/**
 * Formats durations the way people write them in messages: {@code 30 s}, {@code 1.5 s}, {@code 250 ms}.
 *
 * <p>{@link Duration#toString()} gives {@code PT30S}, which nobody reads comfortably in an error message.
 */
public final class Durations {

    private Durations() {}

    /** {@code 30 s}, {@code 1.5 s}, {@code 250 ms}, {@code 0.5 ms}; seconds from one second up, milliseconds below. */
    public static String format(Duration duration) {
        long nanos;
        try {
            nanos = duration.toNanos();
        } catch (ArithmeticException tooLong) {
            return duration.getSeconds() + " s";
        }
        if (Math.abs(nanos) >= 1_000_000_000L) {
            return BigDecimal.valueOf(nanos, 9).stripTrailingZeros().toPlainString() + " s";
        }
        return BigDecimal.valueOf(nanos, 6).stripTrailingZeros().toPlainString() + " ms";
    }
}
