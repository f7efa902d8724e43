package io.github.mongowriteguard.spring.kafka;

import io.github.mongowriteguard.outcome.IndexOutcome;

/**
 * Why one record of a batch was dead-lettered: its write, at {@link #outcome()}{@code .index()} of the listener's
 * bulk, was not applied (failed, skipped) or has an unknown outcome (a copy may still be running and may still apply
 * it). The message is the core's reason; the cause is the exception the listener threw for the whole batch.
 */
public class WriteNotAppliedException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient IndexOutcome outcome;

    /**
     * The record at {@code outcome.index()} of the listener's bulk was not applied.
     *
     * @param outcome the core's outcome of the record's write
     * @param cause   the exception the listener threw for the whole batch
     */
    public WriteNotAppliedException(IndexOutcome outcome, Throwable cause) {
        super("write at bulk index " + outcome.index() + " not applied: " + outcome, cause);
        this.outcome = outcome;
    }

    /** {@return the core's outcome of this record's write} */
    public IndexOutcome outcome() {
        return outcome;
    }
}
