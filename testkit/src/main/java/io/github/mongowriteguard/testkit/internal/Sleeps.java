package io.github.mongowriteguard.testkit.internal;

import java.util.concurrent.TimeUnit;

/** Emulated server time: sleeps that run to their end, as a blocked server thread does. Not an API. */
public final class Sleeps {
    private Sleeps() {}

    /**
     * Sleeps until {@link System#nanoTime()} reaches {@code untilNanos}; an interrupt ends the sleep early and is kept
     * (the emulator interrupts its threads only when it shuts down).
     */
    public static void until(long untilNanos) {
        long left;
        while ((left = untilNanos - System.nanoTime()) > 0) {
            try {
                TimeUnit.NANOSECONDS.sleep(left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
