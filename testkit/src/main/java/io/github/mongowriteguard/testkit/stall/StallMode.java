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
     * Work that checks no interrupt while it runs (the WiredTiger loop of the articles' part 3, a section under
     * mongod's {@code UninterruptibleLockGuard}): the statement it holds runs to its end and is written, whatever the
     * deadline or a kill say. A kill or a passed deadline is seen at the command's next interrupt point, as on mongod: a
     * single-statement write answers {@code ok}; a command of several statements fails there with {@code Interrupted}
     * (11601) or {@code MaxTimeMSExpired} (50), the stalled statement applied and the rest not run.
     */
    UNINTERRUPTIBLE
}
