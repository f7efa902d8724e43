package io.github.mongowriteguard.internal.command;

/**
 * A non-negative {@code int} in decimal ASCII digits, written into a byte array without making a {@code String} of it:
 * the statements array's element names ({@link CommandBuffer#writeArrayIndexName}) and the round and command numbers of
 * the guard's copy names are written this way per statement and per command.
 */
public final class DecimalDigits {
    private DecimalDigits() {}

    /** {@return how many digits {@code value} (not negative) has in decimal} */
    public static int count(int value) {
        int digits = 1;
        for (int rest = value / 10; rest > 0; rest /= 10) {
            digits++;
        }
        return digits;
    }

    /**
     * Writes the {@code digits} ({@link #count}) decimal digits of {@code value} (not negative) from {@code at}.
     *
     * @return the position after the last digit
     */
    public static int write(int value, int digits, byte[] target, int at) {
        int rest = value;
        for (int i = at + digits - 1; i >= at; i--) {
            target[i] = (byte) ('0' + rest % 10);
            rest /= 10;
        }
        return at + digits;
    }
}
