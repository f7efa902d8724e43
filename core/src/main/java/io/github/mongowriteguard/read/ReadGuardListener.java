package io.github.mongowriteguard.read;

/**
 * Callbacks for the counts a metrics layer wants from guarded reads: StaleConfig errors, timeouts and degraded
 * (approximate) reads. Every method has a no-op default; each call gets one immutable event.
 *
 * <p>A listener never breaks a read: an exception it throws is logged and ignored.
 *
 * <pre>{@code
 * ReadGuardOptions options = ReadGuardOptions.builder().degradedReads(true)
 *     .listener(new ReadGuardListener() {
 *         public void degradedRead(DegradedReadEvent event) { degraded.increment(); }
 *     })
 *     .build();
 * }</pre>
 *
 * <p>Implemented by applications (new methods come with defaults).
 */
public interface ReadGuardListener {
    /** A no-op listener, the default. */
    ReadGuardListener NONE = new ReadGuardListener() {};

    /**
     * A normal read failed with StaleConfig (13388).
     *
     * @param event the namespace and the shard the error named
     */
    default void staleConfig(ReadGuardEvents.StaleConfigEvent event) {}

    /**
     * A normal read timed out (maxTimeMS, socket read, server selection).
     *
     * @param event the namespace and the kind of timeout
     */
    default void readTimedOut(ReadGuardEvents.ReadTimeoutEvent event) {}

    /**
     * A degraded read answered approximately.
     *
     * @param event what the degraded read returned
     */
    default void degradedRead(ReadGuardEvents.DegradedReadEvent event) {}
}
