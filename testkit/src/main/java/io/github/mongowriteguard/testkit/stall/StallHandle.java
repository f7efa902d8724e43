package io.github.mongowriteguard.testkit.stall;

/**
 * An active {@link Stall}. Closing it removes the stall and releases every command waiting in it.
 *
 * <p>Implemented by the library only (tests hold what a stall returns).
 */
public interface StallHandle extends AutoCloseable {
    /** {@return the stall this handle controls} */
    Stall stall();

    /** Ends the stall now for every waiting command and for all later ones; they then run normally. */
    void release();

    @Override
    default void close() {
        release();
    }
}
