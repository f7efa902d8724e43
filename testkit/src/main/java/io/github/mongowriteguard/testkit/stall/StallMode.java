package io.github.mongowriteguard.testkit.stall;

/** How a stalled operation reacts to its deadline and to kills. */
public enum StallMode {
    /**
     * Waits at an interrupt point (a write ticket, a lock): a passed {@code maxTimeMS} ends the operation
     * with {@code MaxTimeMSExpired} (50), {@code killOp} or {@code killSessions} with {@code Interrupted}
     * (11601); nothing is written.
     */
    INTERRUPTIBLE,
    /**
     * Work that never reaches an interrupt point (the WiredTiger loop of the articles' part 3): the operation
     * runs to its end and writes, whatever its deadline or a kill say.
     */
    UNINTERRUPTIBLE
}
